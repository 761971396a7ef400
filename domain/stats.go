package domain

import "time"

// QueueStats counts a queue's messages by priority, in delivery order.
type QueueStats struct {
	Priorities [len(Priorities)]PriorityStats
}

// PriorityStats counts the messages of one priority.
type PriorityStats struct {
	Priority Priority
	// Ready counts the messages a dequeue could consider now: not leased, not delayed and
	// not expired.
	Ready int64
	// Delayed counts the messages that wait for a delay to end, from their enqueue or from
	// the release of a delivery, and have not expired.
	Delayed int64
	// InFlight counts the messages whose delivery's visibility timeout is running.
	InFlight int64
	// DeadLettered counts the dead letters kept for the queue.
	DeadLettered int64
	// OldestReadyAge is how long the oldest ready message has waited since it was
	// enqueued; zero when none is ready.
	OldestReadyAge time.Duration
}
