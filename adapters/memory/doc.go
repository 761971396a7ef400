// Package memory implements Retsu's ports in process memory: a QueueStore, a MessageStore
// and a QueueCache. They apply the rules of package domain directly and pass the same
// conformance suites as the PostgreSQL and Redis adapters, which makes them the reference
// implementation for tests and the way to embed Retsu without a database.
//
// Nothing here is durable: everything is lost when the process ends, and several processes
// do not share anything.
package memory
