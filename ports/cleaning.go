package ports

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
)

// QueueDataCursor is where DeleteQueueData left off in a deleted queue's data, so that each
// batch goes on by key from the last one instead of reading again past what the batches
// before it deleted. Only the store that returned it reads Table and After.
type QueueDataCursor struct {
	// Done reports that nothing of the queue's data is left.
	Done bool
	// Table is the store's table being deleted from, and After the last key deleted in it.
	Table int
	After string
}

// Cleaning is the stores' part of the cleaners: each method deletes a bounded batch, so that
// no transaction grows with the backlog, and safely while other cleaners and requests run.
type Cleaning interface {
	// DeleteExpired permanently deletes up to limit of the queue's removable messages (see
	// domain.Message.IsRemovable) and returns how many it deleted.
	DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error)

	// DeleteDeadLetters permanently deletes up to limit of the queue's dead letters that
	// are older than retention and returns how many it deleted.
	DeleteDeadLetters(ctx context.Context, queueID domain.ID, retention time.Duration, limit int) (int, error)

	// DeleteIdempotencyKeys permanently deletes up to limit of the queue's expired
	// idempotency keys (past the retention each was stored with, see IdempotencyKey) and
	// returns how many it deleted.
	DeleteIdempotencyKeys(ctx context.Context, queueID domain.ID, limit int) (int, error)

	// DeleteQueueData permanently deletes up to limit of the messages, dead letters and
	// idempotency keys of a deleted queue, each counting as one toward the limit, going on
	// from where the call that returned from left off (the zero QueueDataCursor: from the
	// start), and returns how many it deleted and where to go on from; that cursor is Done
	// once nothing of the queue is left. A call that deleted nothing and is not Done met
	// only rows that others hold for now: a later pass finishes them.
	DeleteQueueData(ctx context.Context, queueID domain.ID, from QueueDataCursor, limit int) (int, QueueDataCursor, error)

	// StartPass claims the named cleaner's pass for the interval that starts now, and
	// reports whether this caller got it: of all the callers on the same stores (every
	// instance on one database), one gets it per interval (a claim counts as an interval's
	// when it comes at least nine tenths of an interval after the last one, which keeps
	// the ticks of several instances from both getting it). A pass cut short, by a crash
	// say, holds nothing: the next interval's pass does its work.
	StartPass(ctx context.Context, cleaner string, interval time.Duration) (bool, error)
}
