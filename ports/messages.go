package ports

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
)

// MessageStore keeps messages durably and applies the delivery rules of package domain to
// them. Every time decision is taken on the store's own clock, so that several API instances
// with skewed clocks agree, and at the moment the store acts (after any wait for locks or
// for its turn), never earlier.
type MessageStore interface {
	// Enqueue stores the messages of one request in one atomic step, in their order, and
	// returns their IDs once they are durable. With p.Key, a request that repeats an earlier
	// one of the queue (same key, same fingerprint, within the key's retention) stores
	// nothing and returns the earlier request's IDs, Replayed. Returns
	// domain.ErrIdempotencyKeyReused for a different request with the key,
	// domain.ErrIdempotencyKeyInUse while another request with the key is still
	// uncommitted, and domain.ErrQueueNotFound when the queue was deleted, even for a
	// request that would replay.
	Enqueue(ctx context.Context, p EnqueueParams) (Enqueued, error)

	// Replay stores nothing and answers as Enqueue would for a request that repeats one
	// stored with key: the earlier request's IDs, Replayed, when the key's unexpired record
	// has key's fingerprint, and domain.ErrIdempotencyKeyReused when it has another. With no
	// such record (none, expired, or not yet committed) it returns Replayed false.
	Replay(ctx context.Context, queueID domain.ID, key IdempotencyKey) (Enqueued, error)

	// Dequeue starts deliveries of up to p.Max of the queue's deliverable messages, in
	// delivery order: the highest priority, then the earliest enqueued, skipping expired,
	// leased and delayed messages. Exhausted messages that no delivery holds are moved to
	// dead-letter storage on the way, each in one atomic step, and never delivered; expired
	// ones met on the way may be deleted. A deleted queue delivers nothing, and is Gone.
	Dequeue(ctx context.Context, p DequeueParams) (Dequeued, error)

	// Acknowledge removes each message whose receipt holds its lease (see
	// domain.Message.HoldsLease) in the queue, in order, and reports which ones this call
	// removed: once an entry removed a message, later entries that name it report false.
	Acknowledge(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) (removed []bool, err error)

	// Extend makes the lease of receipt end timeout from now. held is false, and nothing
	// changes, when the receipt does not hold the message's lease.
	Extend(ctx context.Context, queueID domain.ID, receipt domain.Receipt, timeout time.Duration) (held bool, err error)

	// Release ends the lease of receipt now; the message is deliverable again after delay,
	// in its place, with its attempts unchanged. held is false, and nothing changes, when
	// the receipt does not hold the message's lease.
	Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) (held bool, err error)

	// Undeliver takes back deliveries that never reached their consumer (see
	// domain.Message.Undeliver), each only while its receipt holds the lease.
	Undeliver(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) error

	// Purge removes every message of the queue, ready, delayed and in flight, that was
	// committed before the call, and returns how many. Dead letters stay, and so do the
	// messages committed after it; the receipts of the purged deliveries hold nothing.
	Purge(ctx context.Context, queueID domain.ID) (int, error)

	// Stats counts the queue's messages and dead letters by priority.
	Stats(ctx context.Context, queueID domain.ID) (domain.QueueStats, error)
}

// EnqueueParams is one enqueue request.
type EnqueueParams struct {
	QueueID  domain.ID
	Messages []domain.Enqueue
	// Key, when not nil, makes the request idempotent.
	Key *IdempotencyKey
}

// IdempotencyKey is the idempotency key of an enqueue request.
type IdempotencyKey struct {
	Key string
	// Fingerprint identifies the request (see domain.FingerprintOf).
	Fingerprint domain.Fingerprint
	// Retention is how long after its first use a key still replays, fixed when the key is
	// stored: the key's record expires then, whatever the retention of later requests, and
	// an expired one is taken as new.
	Retention time.Duration
}

// Enqueued is the outcome of an enqueue.
type Enqueued struct {
	// IDs are the messages' IDs, in the request's order.
	IDs []domain.ID
	// Replayed is true when the request repeated an earlier one, whose IDs these are.
	Replayed bool
}

// DequeueParams is one dequeue request.
type DequeueParams struct {
	QueueID domain.ID
	// Max is the most messages to deliver, at least 1.
	Max int
	// Next asks for Dequeued.Next, which a dequeue that came back short is about to wait
	// on.
	Next bool
}

// Dequeued is the outcome of a dequeue.
type Dequeued struct {
	// Deliveries are the deliveries started, in delivery order.
	Deliveries []domain.Delivery
	// Gone is true when the queue was deleted: nothing is delivered.
	Gone bool
	// DeadLettered counts the exhausted messages moved to dead-letter storage on the way.
	DeadLettered int
	// Expired counts the expired messages met on the way and deleted, as the expired-message
	// cleaner would have.
	Expired int
	// Next, when asked for and HasNext, is how long from the dequeue until a message of the
	// queue that is not deliverable now (delayed, or leased) may become so: when a waiting
	// dequeue should look again.
	Next    time.Duration
	HasNext bool
}
