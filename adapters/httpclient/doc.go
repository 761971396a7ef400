// Package httpclient is a client of Retsu's HTTP API: an adapter that speaks HTTP to a remote
// Retsu, with the standard library and the project's own packages only.
//
// A Client satisfies app.Retsu, the interface of the in-process use cases, so that a program
// can switch between an embedded Retsu (*app.Service) and a remote one, and one conformance
// suite (app/apptest) holds both to the same contract. Every call takes a context. The API's
// errors come back as *Error values that carry the HTTP status and the problem document's
// code, detail and pointer, and that unwrap to a *domain.Error: callers test them with
// errors.Is against the sentinels of package domain (domain.ErrQueueNotFound,
// domain.ErrLeaseLost, …) or read the code with domain.ErrorCode, never by their text. An
// answer that never came (a refused connection, a reset, a timeout) is a *TransportError
// instead.
//
// The client retries, with exponential backoff and jitter, only what is safe to send twice
// (see RetryPolicy): reads, updates, acknowledgements, extensions, deletions of one dead
// letter, and enqueues, because every enqueue carries an Idempotency-Key (a random one when
// the caller gives none, unless Options.NoEnqueueKeys), so that the retry of a request whose
// answer was lost stores nothing twice. It never retries a dequeue, which could take a second batch and leave the
// first one leased, nor a release.
//
// Worker runs handlers over the deliveries of a queue: batch long polls sized to its free
// capacity, lease extensions while a handler runs, acknowledgements in batches, releases with
// backoff when a handler fails, and a graceful stop. It works over any app.Retsu, remote or
// embedded.
package httpclient
