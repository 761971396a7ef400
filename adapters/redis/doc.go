// Package redis implements Retsu's shared queue-details cache on Redis with rueidis.
//
// Every instance keeps the details it reads in process memory with rueidis' client-side
// caching: Redis tracks which keys each connection has read and tells it when they change
// (RESP3 invalidation), so enqueue, dequeue and acknowledge find a queue's details without a
// network round trip, and a Store on one instance reaches every other instance's memory
// within milliseconds. Entries also expire, in Redis and in memory, which bounds how long a
// value can outlive a write to Redis that failed.
//
// Redis holds copies only: PostgreSQL is the source of truth, an entry that is missing or
// does not decode is a miss, and every call gives up quickly when Redis is stopped or hung,
// so that callers fall back to the database instead of waiting.
package redis
