package ports

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
)

// QueueStore keeps queues and their settings durably. It is the source of truth that the
// QueueCache copies.
type QueueStore interface {
	// CreateQueue stores a new queue. Returns domain.ErrQueueAlreadyExists when another
	// queue has the same name, also when two creates race.
	CreateQueue(ctx context.Context, q domain.Queue) error

	// Queue returns the queue with the given ID. Returns domain.ErrQueueNotFound.
	Queue(ctx context.Context, id domain.ID) (domain.Queue, error)

	// ListQueues returns queues ordered by name, at most p.Limit of them.
	ListQueues(ctx context.Context, p ListQueuesParams) ([]domain.Queue, error)

	// UpdateQueue applies a validated, non-empty update and returns the complete queue.
	// Returns domain.ErrQueueNotFound.
	UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error)

	// DeleteQueue removes the queue, whose name is free again at once, and records its
	// deletion, so that the MessageStore stores and delivers none of its messages from now
	// on and the cleaners delete its data. Returns domain.ErrQueueNotFound.
	DeleteQueue(ctx context.Context, id domain.ID) error

	// DeletedQueues returns up to limit of the queues whose deletion is recorded, in ID
	// order after the ID after (the zero ID: from the first), each with how long ago it was
	// deleted, so that a caller pages through every record however many there are.
	DeletedQueues(ctx context.Context, after domain.ID, limit int) ([]DeletedQueue, error)

	// ForgetDeletedQueue drops the record of a deletion, once the cleaners removed the
	// queue's data and no request can still be adding to it. A record that does not exist
	// is no error.
	ForgetDeletedQueue(ctx context.Context, id domain.ID) error
}

// DeletedQueue is a queue whose deletion is recorded.
type DeletedQueue struct {
	ID domain.ID
	// Age is how long ago the queue was deleted.
	Age time.Duration
}

// ListQueuesParams selects a page of queues.
type ListQueuesParams struct {
	// Name, when not nil, keeps only the queue with exactly this name: none for a name that
	// no queue has, the empty name included. Nil keeps every queue.
	Name *string
	// After, when not empty, starts the page after the queue with this name.
	After string
	// Limit is the page size, from 1 to domain.MaxListLimit.
	Limit int
}
