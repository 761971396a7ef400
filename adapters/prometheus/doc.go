// Package prometheus reports Retsu's metrics in the Prometheus text format, with
// prometheus/client_golang.
//
// Metrics implements ports.Metrics for the core (messages enqueued, delivered, acknowledged
// and dead-lettered, queue-details cache lookups, cleaner passes), observes the requests the
// HTTP API serves, and collects the statistics of the PostgreSQL connection pool when it is
// given one. Each Metrics has a registry of its own rather than the process-wide default,
// so that several can live in one process, as they do in tests.
package prometheus
