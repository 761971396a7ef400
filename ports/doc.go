// Package ports declares what Retsu's core needs from the outside world, one small role per
// interface: durable queues and messages, the shared cache of queue details, a clock, and
// somewhere to report metrics.
//
// Adapters implement these interfaces (adapters/postgres, adapters/redis, adapters/memory,
// adapters/prometheus); the suites in ports/porttest check that every store and cache keeps
// the same contract.
package ports
