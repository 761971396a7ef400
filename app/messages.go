package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// undeliverTimeout bounds the undelivery of a dequeue whose requester went away, which runs
// after the request's own context ended.
const undeliverTimeout = 5 * time.Second

// Enqueue stores one message and returns its ID once it is durable: EnqueueMessages for a
// request of one message without an idempotency key.
func (s *Service) Enqueue(ctx context.Context, queueID domain.ID, n domain.NewMessage) (domain.ID, error) {
	enqueued, err := s.EnqueueMessages(ctx, EnqueueParams{QueueID: queueID, Messages: []domain.NewMessage{n}})
	if err != nil {
		var entry *domain.EntryError
		if errors.As(err, &entry) {
			return domain.ID{}, entry.Err
		}
		return domain.ID{}, err
	}
	return enqueued.IDs[0], nil
}

// EnqueueMessages stores the messages of one request, all or none. The checks come in the
// contract's order: the idempotency key, the size and every entry's values, the queue, then
// what depends on the queue (a delay against its default lifetime).
func (s *Service) EnqueueMessages(ctx context.Context, p EnqueueParams) (Enqueued, error) {
	if p.IdempotencyKey != "" {
		if err := domain.ValidateIdempotencyKey(p.IdempotencyKey); err != nil {
			return Enqueued{}, err
		}
	}
	if err := domain.ValidateNewMessages(p.Messages); err != nil {
		return Enqueued{}, err
	}
	q, err := s.queueDetails(ctx, p.QueueID)
	if err != nil {
		return Enqueued{}, err
	}
	params := ports.EnqueueParams{QueueID: q.ID, Messages: make([]domain.Enqueue, len(p.Messages))}
	if p.IdempotencyKey != "" {
		params.Key = &ports.IdempotencyKey{
			Key:         p.IdempotencyKey,
			Fingerprint: domain.FingerprintOf(p.Batch, p.Messages),
			Retention:   s.options.IdempotencyRetention,
		}
	}
	for i, n := range p.Messages {
		if params.Messages[i], err = n.Resolve(q, newTimeOrderedID()); err != nil {
			return s.replayRefused(ctx, params, &domain.EntryError{Index: i, Err: err})
		}
	}
	enqueued, err := s.messages.Enqueue(ctx, params)
	if err := s.noteDatabase(ctx, err); err != nil {
		return Enqueued{}, fmt.Errorf("enqueue to %s: %w", p.QueueID, err)
	}
	if enqueued.Replayed {
		s.metrics.EnqueueReplayed()
	} else {
		s.metrics.MessagesEnqueued(len(enqueued.IDs))
	}
	return Enqueued(enqueued), nil
}

// replayRefused answers an enqueue that the queue's current settings refuse (a delay no
// longer shorter than a default lifetime that was since shortened): when it repeats a request
// that was stored with its key, the replay, as the contract promises every repeat; otherwise
// (a new key, or another request with the key) the refusal, as for any refused input.
func (s *Service) replayRefused(ctx context.Context, params ports.EnqueueParams, refusal error) (Enqueued, error) {
	if params.Key == nil {
		return Enqueued{}, refusal
	}
	enqueued, err := s.messages.Replay(ctx, params.QueueID, *params.Key)
	if errors.Is(err, domain.ErrIdempotencyKeyReused) {
		return Enqueued{}, refusal
	}
	if err := s.noteDatabase(ctx, err); err != nil {
		return Enqueued{}, fmt.Errorf("enqueue to %s: %w", params.QueueID, err)
	}
	if !enqueued.Replayed {
		return Enqueued{}, refusal
	}
	s.metrics.EnqueueReplayed()
	return Enqueued(enqueued), nil
}

// Dequeue starts a delivery of the queue's next message, without waiting; ok is false when
// none is deliverable. Returns queue_not_found.
func (s *Service) Dequeue(ctx context.Context, queueID domain.ID) (d domain.Delivery, ok bool, err error) {
	deliveries, err := s.DequeueMessages(ctx, DequeueParams{QueueID: queueID, Max: 1})
	if err != nil || len(deliveries) == 0 {
		return domain.Delivery{}, false, err
	}
	return deliveries[0], true, nil
}

// DequeueMessages starts deliveries of up to p.Max messages. With p.Wait and nothing
// deliverable, it waits in the service's wait room (see waitRoom) until a message may have
// become deliverable or the wait ends. A delivery whose requester went away (ctx cancelled)
// by the time the store made it is taken back, so that the message is neither hidden nor
// charged an attempt for an answer nobody reads.
func (s *Service) DequeueMessages(ctx context.Context, p DequeueParams) ([]domain.Delivery, error) {
	if p.Max == 0 {
		p.Max = 1
	}
	if err := domain.ValidateMaxMessages(p.Max); err != nil {
		return nil, err
	}
	if err := domain.ValidateWait(p.Wait); err != nil {
		return nil, err
	}
	if _, err := s.queueDetails(ctx, p.QueueID); err != nil {
		return nil, err
	}
	if p.Wait == 0 {
		dequeued, err := s.dequeue(ctx, ports.DequeueParams{QueueID: p.QueueID, Max: p.Max})
		return dequeued.Deliveries, err
	}
	return s.dequeueWaiting(ctx, p)
}

// dequeueWaiting asks the store, then waits and asks again each time the wait room wakes it,
// until it gets a message or the wait ends.
func (s *Service) dequeueWaiting(ctx context.Context, p DequeueParams) ([]domain.Delivery, error) {
	// In the room before the first ask, so that a message that comes during it wakes it.
	w := s.waits.enter(p.QueueID, p.Max)
	if w == nil { // closed: shutting down
		dequeued, err := s.dequeue(ctx, ports.DequeueParams{QueueID: p.QueueID, Max: p.Max})
		return dequeued.Deliveries, err
	}
	defer s.waits.leave(w)
	s.metrics.WaitingDequeues(1)
	defer s.metrics.WaitingDequeues(-1)
	deadline := make(chan struct{})
	stop := s.waits.clock.AfterFunc(p.Wait, func() { close(deadline) })
	defer stop()
	for {
		dequeued, err := s.dequeue(ctx, ports.DequeueParams{QueueID: p.QueueID, Max: p.Max, Next: true})
		s.waits.asked(w, len(dequeued.Deliveries), dequeued.Next, dequeued.HasNext)
		if err != nil || len(dequeued.Deliveries) > 0 {
			return dequeued.Deliveries, err
		}
		select {
		case <-w.woken:
		case <-deadline:
			return nil, nil
		case <-s.waits.done:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dequeue asks the store once, counts what it did, and takes back what nobody will receive.
func (s *Service) dequeue(ctx context.Context, p ports.DequeueParams) (ports.Dequeued, error) {
	dequeued, err := s.messages.Dequeue(ctx, p)
	if err := s.noteDatabase(ctx, err); err != nil {
		return ports.Dequeued{}, fmt.Errorf("dequeue from %s: %w", p.QueueID, err)
	}
	if dequeued.Gone { // deleted since its details were read, or while the dequeue waited
		return ports.Dequeued{}, domain.ErrQueueNotFound
	}
	if dequeued.DeadLettered > 0 {
		s.metrics.MessagesDeadLettered(dequeued.DeadLettered)
	}
	if dequeued.Expired > 0 {
		s.metrics.ExpiredMessagesRemoved(dequeued.Expired)
	}
	if len(dequeued.Deliveries) > 0 && errors.Is(ctx.Err(), context.Canceled) {
		s.undeliver(p.QueueID, dequeued.Deliveries)
		return ports.Dequeued{}, ctx.Err()
	}
	for _, d := range dequeued.Deliveries {
		s.metrics.MessageDelivered(d.DeliveryAttempts > 1)
	}
	return dequeued, nil
}

// undeliver takes back deliveries whose requester went away. Should it fail, the messages
// come back when their visibility timeout ends, as after any lost answer.
func (s *Service) undeliver(queueID domain.ID, deliveries []domain.Delivery) {
	receipts := make([]domain.Receipt, len(deliveries))
	for i, d := range deliveries {
		receipts[i] = d.Receipt()
	}
	ctx, cancel := context.WithTimeout(context.Background(), undeliverTimeout)
	defer cancel()
	if err := s.noteDatabase(ctx, s.messages.Undeliver(ctx, queueID, receipts)); err != nil {
		s.log.Warn("could not take back deliveries whose requester went away; they come back after their visibility timeout",
			"queue_id", queueID.String(), "deliveries", len(receipts), "err", err)
		return
	}
	s.metrics.MessagesUndelivered(len(receipts))
}

// Acknowledge completes a delivery: the message is removed when receiptHandle names its
// current, unexpired delivery, and nothing changes otherwise, so repeating it is safe.
// Returns queue_not_found.
func (s *Service) Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) error {
	_, err := s.AcknowledgeMessages(ctx, queueID, []domain.Receipt{{MessageID: messageID, ReceiptHandle: receiptHandle}})
	return err
}

// AcknowledgeMessages completes deliveries, in order.
func (s *Service) AcknowledgeMessages(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) ([]bool, error) {
	if err := domain.ValidateReceipts(receipts); err != nil {
		return nil, err
	}
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return nil, err
	}
	removed, err := s.messages.Acknowledge(ctx, queueID, receipts)
	if err := s.noteDatabase(ctx, err); err != nil {
		return nil, fmt.Errorf("acknowledge in %s: %w", queueID, err)
	}
	for _, r := range removed {
		s.metrics.Acknowledged(r)
	}
	return removed, nil
}

// Extend makes the lease of receipt end timeout from now.
func (s *Service) Extend(ctx context.Context, queueID domain.ID, receipt domain.Receipt, timeout time.Duration) error {
	if err := domain.ValidateLeaseExtension(timeout); err != nil {
		return err
	}
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return err
	}
	held, err := s.messages.Extend(ctx, queueID, receipt, timeout)
	if err := s.noteDatabase(ctx, err); err != nil {
		return fmt.Errorf("extend %s in %s: %w", receipt.MessageID, queueID, err)
	}
	s.metrics.LeaseExtended(held)
	if !held {
		return domain.ErrLeaseLost
	}
	return nil
}

// Release ends the lease of receipt; the message is deliverable again after delay.
func (s *Service) Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) error {
	if err := domain.ValidateReleaseDelay(delay); err != nil {
		return err
	}
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return err
	}
	held, err := s.messages.Release(ctx, queueID, receipt, delay)
	if err := s.noteDatabase(ctx, err); err != nil {
		return fmt.Errorf("release %s in %s: %w", receipt.MessageID, queueID, err)
	}
	s.metrics.LeaseReleased(held)
	if !held {
		return domain.ErrLeaseLost
	}
	return nil
}
