// Package ports declares what Retsu's core needs from the outside world, one small role per
// interface: durable queues and messages, the shared cache of queue details, and a clock.
//
// Adapters implement these interfaces (adapters/postgres, adapters/redis, adapters/memory);
// the suites in ports/porttest check that every implementation keeps the same contract.
package ports
