package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.MessageStore = (*MessageStore)(nil)

// MessageStore keeps messages in the messages table and dead letters in dead_letters.
type MessageStore struct {
	pool *pgxpool.Pool
}

// NewMessageStore returns a MessageStore on pool.
func NewMessageStore(pool *pgxpool.Pool) *MessageStore { return &MessageStore{pool: pool} }

// Enqueue inserts the message; it is durable once Enqueue returns nil.
func (s *MessageStore) Enqueue(ctx context.Context, e domain.Enqueue) error {
	return s.insert(ctx, []domain.Enqueue{e})
}

// Dequeue delivers the queue's best deliverable message.
func (s *MessageStore) Dequeue(ctx context.Context, queueID domain.ID) (ports.Dequeued, error) {
	deliveries, deadLettered, err := s.claim(ctx, queueID, 1)
	result := ports.Dequeued{DeadLettered: deadLettered}
	if err != nil || len(deliveries) == 0 {
		return result, err
	}
	result.Delivery, result.OK = deliveries[0], true
	return result, nil
}

// Acknowledge removes the message when receiptHandle names its current, unexpired delivery.
func (s *MessageStore) Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) (bool, error) {
	removed, err := s.deleteAcknowledged(ctx, []acknowledgement{{queueID, messageID, receiptHandle}})
	if err != nil {
		return false, err
	}
	return len(removed) == 1, nil
}

// DeleteExpired deletes up to limit of the queue's removable messages.
func (s *MessageStore) DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, deleteExpired, queueID, limit)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired messages: %w", translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// DeleteDeadLetters deletes up to limit of the queue's dead letters older than retention.
func (s *MessageStore) DeleteDeadLetters(ctx context.Context, queueID domain.ID, retention time.Duration, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, deleteDeadLetters, queueID, retention.Seconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete dead letters: %w", translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// Stats counts the queue's messages and dead letters by priority.
func (s *MessageStore) Stats(ctx context.Context, queueID domain.ID) (domain.QueueStats, error) {
	rows, err := s.pool.Query(ctx, selectStats, queueID)
	if err != nil {
		return domain.QueueStats{}, fmt.Errorf("postgres: select stats: %w", translate(err))
	}
	defer rows.Close()
	var stats domain.QueueStats
	for i := 0; rows.Next() && i < len(stats.Priorities); i++ {
		ps := &stats.Priorities[i]
		var priority int16
		var oldestReadySeconds float64
		if err := rows.Scan(&priority, &ps.Ready, &ps.InFlight, &ps.DeadLettered, &oldestReadySeconds); err != nil {
			return domain.QueueStats{}, fmt.Errorf("postgres: select stats: %w", err)
		}
		ps.Priority = domain.Priority(priority)
		ps.OldestReadyAge = time.Duration(oldestReadySeconds * float64(time.Second))
	}
	if err := rows.Err(); err != nil {
		return domain.QueueStats{}, fmt.Errorf("postgres: select stats: %w", translate(err))
	}
	return stats, nil
}

// insert stores a batch of messages in one statement, in batch order.
func (s *MessageStore) insert(ctx context.Context, batch []domain.Enqueue) error {
	n := len(batch)
	queueIDs, ids := make([]domain.ID, n), make([]domain.ID, n)
	priorities := make([]int16, n)
	payloads := make([][]byte, n)
	ttls, visibilityTimeouts, maxAttempts := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, e := range batch {
		queueIDs[i], ids[i] = e.QueueID, e.MessageID
		priorities[i] = int16(e.Priority)
		payloads[i] = []byte(e.Payload)
		ttls[i], visibilityTimeouts[i] = seconds(e.TTL), seconds(e.VisibilityTimeout)
		maxAttempts[i] = int32(e.MaxDeliveryAttempts)
	}
	_, err := s.pool.Exec(ctx, insertMessages, queueIDs, ids, priorities, payloads, ttls, visibilityTimeouts, maxAttempts)
	if err != nil {
		return fmt.Errorf("postgres: insert messages: %w", translate(err))
	}
	return nil
}

// claim delivers up to n of the queue's messages, in delivery order, and returns how many
// exhausted messages it moved to dead-letter storage. When a claim moved some in place of
// delivering them, the search goes on for the deliveries still missing.
func (s *MessageStore) claim(ctx context.Context, queueID domain.ID, n int) ([]domain.Delivery, int, error) {
	var deliveries []domain.Delivery
	total := 0
	for len(deliveries) < n {
		claimed, deadLettered, err := s.claimOnce(ctx, queueID, n-len(deliveries))
		if err != nil {
			return deliveries, total, err
		}
		deliveries = append(deliveries, claimed...)
		total += int(deadLettered)
		if deadLettered == 0 {
			break
		}
	}
	return deliveries, total, nil
}

func (s *MessageStore) claimOnce(ctx context.Context, queueID domain.ID, n int) ([]domain.Delivery, int64, error) {
	rows, err := s.pool.Query(ctx, claimMessages, queueID, n)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: claim messages: %w", translate(err))
	}
	defer rows.Close()
	var deliveries []domain.Delivery
	var deadLettered int64
	for rows.Next() {
		var (
			id, receiptHandle *domain.ID
			payload           []byte
			priority          *int16
			attempts          *int32
		)
		if err := rows.Scan(&deadLettered, &id, &payload, &priority, &receiptHandle, &attempts); err != nil {
			return nil, 0, fmt.Errorf("postgres: claim messages: %w", err)
		}
		if id == nil {
			continue
		}
		deliveries = append(deliveries, domain.Delivery{
			MessageID: *id, Payload: string(payload), Priority: domain.Priority(*priority),
			ReceiptHandle: *receiptHandle, DeliveryAttempts: int(*attempts),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("postgres: claim messages: %w", translate(err))
	}
	return deliveries, deadLettered, nil
}

// acknowledgement names one delivery to complete.
type acknowledgement struct {
	queueID, messageID, receiptHandle domain.ID
}

// deleteAcknowledged completes a batch of deliveries in one statement and returns the IDs of
// the messages it removed.
func (s *MessageStore) deleteAcknowledged(ctx context.Context, batch []acknowledgement) ([]domain.ID, error) {
	n := len(batch)
	queueIDs, ids, handles := make([]domain.ID, n), make([]domain.ID, n), make([]domain.ID, n)
	for i, a := range batch {
		queueIDs[i], ids[i], handles[i] = a.queueID, a.messageID, a.receiptHandle
	}
	rows, err := s.pool.Query(ctx, deleteAcknowledged, queueIDs, ids, handles)
	if err != nil {
		return nil, fmt.Errorf("postgres: delete acknowledged messages: %w", translate(err))
	}
	removed, err := pgx.CollectRows(rows, pgx.RowTo[domain.ID])
	if err != nil {
		return nil, fmt.Errorf("postgres: delete acknowledged messages: %w", translate(err))
	}
	return removed, nil
}
