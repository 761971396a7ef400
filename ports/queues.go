package ports

import (
	"context"

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
}

// ListQueuesParams selects a page of queues.
type ListQueuesParams struct {
	// Name, when not empty, keeps only the queue with exactly this name.
	Name string
	// After, when not empty, starts the page after the queue with this name.
	After string
	// Limit is the page size, from 1 to domain.MaxListLimit.
	Limit int
}
