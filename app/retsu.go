package app

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Retsu is what a program does with Retsu: the use cases that Service carries out in
// process, and that a remote Retsu offers over HTTP (adapters/httpclient), so that a program
// can switch between the two and one conformance suite (app/apptest) holds both to the same
// contract. Its errors carry the codes of package domain; any other error is internal.
type Retsu interface {
	// CreateQueue creates a queue with the supplied settings and defaults for the others.
	// Returns invalid_queue_name, invalid_visibility_timeout,
	// invalid_max_delivery_attempts, invalid_default_message_ttl or queue_already_exists.
	CreateQueue(ctx context.Context, n domain.NewQueue) (domain.Queue, error)
	// Queue returns a queue's current details. Returns queue_not_found.
	Queue(ctx context.Context, id domain.ID) (domain.Queue, error)
	// ListQueues returns a page of queues ordered by name; a zero Limit takes
	// domain.DefaultListLimit. Returns invalid_query for a limit out of range.
	ListQueues(ctx context.Context, p ports.ListQueuesParams) ([]domain.Queue, error)
	// UpdateQueue changes the supplied settings of a queue and returns the complete queue;
	// they apply to messages enqueued afterwards. Returns empty_queue_update,
	// invalid_visibility_timeout, invalid_max_delivery_attempts,
	// invalid_default_message_ttl or queue_not_found.
	UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error)
	// DeleteQueue deletes a queue: from its return on, no route of it finds it on this
	// instance, nor on any other within a second, and none of its messages is delivered
	// again; its name is free at once, and the cleaners remove its messages and dead
	// letters. Returns queue_not_found.
	DeleteQueue(ctx context.Context, id domain.ID) error
	// PurgeQueue removes every message of the queue, ready, delayed and in flight, and
	// returns how many; dead letters stay. Returns queue_not_found.
	PurgeQueue(ctx context.Context, id domain.ID) (int, error)
	// Stats counts a queue's messages by priority. Returns queue_not_found.
	Stats(ctx context.Context, id domain.ID) (domain.QueueStats, error)

	// EnqueueMessages stores the messages of one request, all or none, and returns their
	// IDs once they are durable. Returns invalid_idempotency_key, invalid_batch_size,
	// invalid_priority, invalid_ttl, invalid_delay (the entry's as a *domain.EntryError),
	// queue_not_found, idempotency_key_reused or idempotency_key_in_use.
	EnqueueMessages(ctx context.Context, p EnqueueParams) (Enqueued, error)
	// DequeueMessages starts deliveries of up to p.Max of the queue's deliverable messages,
	// in delivery order, waiting up to p.Wait for one when none is deliverable. Returns
	// invalid_max_messages, invalid_wait or queue_not_found.
	DequeueMessages(ctx context.Context, p DequeueParams) ([]domain.Delivery, error)
	// AcknowledgeMessages completes deliveries: each message whose receipt holds its lease
	// is removed, in order, and removed reports which ones this call removed. Repeating it
	// is safe. Returns invalid_batch_size or queue_not_found.
	AcknowledgeMessages(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) (removed []bool, err error)
	// Extend makes the lease of receipt end timeout from now. Returns
	// invalid_visibility_timeout, queue_not_found or lease_lost.
	Extend(ctx context.Context, queueID domain.ID, receipt domain.Receipt, timeout time.Duration) error
	// Release ends the lease of receipt: the message is deliverable again after delay, in
	// its place, with its attempts unchanged. Returns invalid_delay, queue_not_found or
	// lease_lost.
	Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) error

	// DeadLetters returns a page of the queue's dead letters in ID order; a zero Limit takes
	// domain.DefaultListLimit. Returns invalid_query or queue_not_found.
	DeadLetters(ctx context.Context, queueID domain.ID, p ports.DeadLetterPage) ([]domain.DeadLetter, error)
	// DeadLetter returns one dead letter. Returns queue_not_found or dead_letter_not_found.
	DeadLetter(ctx context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error)
	// DeleteDeadLetter deletes one dead letter, if there is one. Returns queue_not_found.
	DeleteDeadLetter(ctx context.Context, queueID, messageID domain.ID) error
	// DeleteDeadLetters deletes every dead letter of the queue and returns how many.
	// Returns queue_not_found.
	DeleteDeadLetters(ctx context.Context, queueID domain.ID) (int, error)
	// Redrive sends dead letters back to their queue, at the end of their priority's line
	// with fresh attempts and the queue's current settings, and returns the IDs it moved.
	// Returns invalid_batch_size or queue_not_found.
	Redrive(ctx context.Context, queueID domain.ID, r domain.Redrive) ([]domain.ID, error)
}

// EnqueueParams is one enqueue request.
type EnqueueParams struct {
	QueueID  domain.ID
	Messages []domain.NewMessage
	// Batch marks a request of the batch route. It matters to idempotency only: the same
	// messages sent to the single route and to the batch route are different requests.
	Batch bool
	// IdempotencyKey, when not empty, makes a retry of this request within the retention
	// store nothing and return the first one's IDs (see domain.FingerprintOf).
	IdempotencyKey string
}

// Enqueued is the outcome of an enqueue.
type Enqueued struct {
	// IDs are the messages' IDs, in the request's order.
	IDs []domain.ID
	// Replayed is true when the request repeated an earlier one with its idempotency key:
	// nothing was stored, and the IDs are the earlier request's.
	Replayed bool
}

// DequeueParams is one dequeue request.
type DequeueParams struct {
	QueueID domain.ID
	// Max is the most messages to deliver, 1 to domain.MaxDequeueBatch; zero takes 1.
	Max int
	// Wait is how long to wait for a message when none is deliverable, up to
	// domain.MaxWait; zero answers at once.
	Wait time.Duration
}
