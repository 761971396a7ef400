package ports

import (
	"context"

	"github.com/retsu/retsu/domain"
)

// QueueCache holds copies of queue details so that enqueue, dequeue and acknowledge need not
// read them from the QueueStore. It may lose entries at any time; it never holds message
// state. Writers update the QueueStore first and the cache after it.
type QueueCache interface {
	// Queue returns the cached details of a queue; found is false on a miss. For a queue
	// that Delete recorded as deleted, found is false and err is domain.ErrQueueNotFound:
	// a hit, which callers answer without asking the QueueStore.
	Queue(ctx context.Context, id domain.ID) (q domain.Queue, found bool, err error)

	// Fill caches details just read from the QueueStore, unless the cache already holds an
	// entry for the queue: an entry written by Store is newer than any earlier read.
	Fill(ctx context.Context, q domain.Queue) error

	// Store caches details just written to the QueueStore, replacing any entry.
	Store(ctx context.Context, q domain.Queue) error

	// Delete records that the queue was just deleted from the QueueStore, replacing any
	// entry: until the record expires, Queue answers domain.ErrQueueNotFound and Fill,
	// which may carry details read before the deletion, changes nothing. Queue IDs are never
	// reused, so the record can only ever be right.
	Delete(ctx context.Context, id domain.ID) error
}
