// Package app holds Retsu's use cases and their wiring. Service carries out the requests of
// the API (create, read, list and update queues; enqueue, dequeue and acknowledge messages)
// over the interfaces of package ports, and the cleaners remove expired messages and old
// dead letters. Config and New choose, connect and assemble the adapters for a process.
package app
