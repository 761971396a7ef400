// Package apptest holds the conformance suite of app.Retsu, the use cases of Retsu, as
// package porttest holds those of the ports. Every implementation runs it: the in-process
// app.Service over the memory stores, and the HTTP client of adapters/httpclient talking to
// the HTTP adapter in front of such a service, so that a program can switch between an
// embedded and a remote Retsu and see the same behaviour, error codes included.
//
// The suite checks what a caller of app.Retsu sees, end to end: queues and their settings,
// enqueues (single and batch, delays, idempotency keys), dequeues (batches, delivery order,
// long polls), acknowledgements, leases (extend, release, lease_lost), dead letters (list,
// get, delete, redrive) and the code of every error. Each test works in queues of its own and
// runs in parallel. The tests that need time to pass wait in real time, a second or two, so
// the implementation must run on a real clock; the whole suite takes a few seconds.
package apptest
