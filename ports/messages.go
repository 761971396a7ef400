package ports

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
)

// MessageStore keeps messages and dead letters durably and applies the delivery rules of
// package domain to them. Every time decision is taken on the store's own clock, so that
// several API instances with skewed clocks agree.
type MessageStore interface {
	// Enqueue stores a message. When it returns nil the message is durable.
	Enqueue(ctx context.Context, e domain.Enqueue) error

	// Dequeue starts a delivery of the queue's best deliverable message: the highest
	// priority, then the earliest enqueued, skipping expired and leased messages. When the
	// best candidate is exhausted it is moved to dead-letter storage in the same atomic step
	// and the search goes on.
	Dequeue(ctx context.Context, queueID domain.ID) (Dequeued, error)

	// Acknowledge removes the message when receiptHandle names its current delivery, that
	// delivery's visibility timeout is still running and the message belongs to the queue.
	// Otherwise it changes nothing. removed reports which happened.
	Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) (removed bool, err error)

	// DeleteExpired permanently deletes up to limit of the queue's removable messages (see
	// domain.Message.IsRemovable) and returns how many it deleted.
	DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error)

	// DeleteDeadLetters permanently deletes up to limit of the queue's dead letters that
	// are older than retention and returns how many it deleted.
	DeleteDeadLetters(ctx context.Context, queueID domain.ID, retention time.Duration, limit int) (int, error)

	// Stats counts the queue's messages and dead letters by priority.
	Stats(ctx context.Context, queueID domain.ID) (domain.QueueStats, error)
}

// Dequeued is the outcome of a dequeue.
type Dequeued struct {
	// Delivery is the delivery started, when OK.
	Delivery domain.Delivery
	// OK is false when no message could be delivered.
	OK bool
	// DeadLettered counts the exhausted messages moved to dead-letter storage on the way.
	DeadLettered int
}
