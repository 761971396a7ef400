package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/retsu/retsu/domain"
)

// DeleteExpired deletes up to limit of the queue's removable messages.
func (s *MessageStore) DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	return s.exec(ctx, "delete expired messages", deleteExpired, queueID, limit)
}

// DeleteDeadLetters deletes up to limit of the queue's dead letters older than retention.
func (s *MessageStore) DeleteDeadLetters(ctx context.Context, queueID domain.ID, retention time.Duration, limit int) (int, error) {
	return s.exec(ctx, "delete old dead letters", deleteDeadLetters, queueID, retention.Seconds(), limit)
}

// DeleteIdempotencyKeys deletes up to limit of the queue's expired idempotency keys.
func (s *MessageStore) DeleteIdempotencyKeys(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	return s.exec(ctx, "delete idempotency keys", deleteIdempotencyKeys, queueID, limit)
}

// DeleteQueueData deletes up to limit rows of each table of a deleted queue's data.
func (s *MessageStore) DeleteQueueData(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, deleteQueueData, queueID, limit).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: delete queue data: %w", translate(err))
	}
	return int(n), nil
}

// exec runs a statement that deletes and returns how many rows it deleted.
func (s *MessageStore) exec(ctx context.Context, what, statement string, arguments ...any) (int, error) {
	tag, err := s.pool.Exec(ctx, statement, arguments...)
	if err != nil {
		return 0, fmt.Errorf("postgres: %s: %w", what, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// StartPass claims the cleaner's pass for the interval that starts now, in cleaner_passes.
func (s *MessageStore) StartPass(ctx context.Context, cleaner string, interval time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, claimCleanerPass, cleaner, (interval * 9 / 10).Seconds())
	if err != nil {
		return false, fmt.Errorf("postgres: claim cleaner pass: %w", translate(err))
	}
	return tag.RowsAffected() == 1, nil
}
