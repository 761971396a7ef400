package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
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

// DeleteQueueData deletes up to limit rows of a deleted queue's data, table after table,
// each batch going on by key from where from left off (see deleteQueueData). Once the
// batches reached the end of the last table it looks for rows they skipped (locked by a
// request at the time) and starts over when there are any.
func (s *MessageStore) DeleteQueueData(ctx context.Context, queueID domain.ID, from ports.QueueDataCursor, limit int) (int, ports.QueueDataCursor, error) {
	cursor, deleted := from, 0
	for cursor.Table < len(deleteQueueData) && deleted < limit {
		after := cursor.After
		if after == "" {
			after = queueDataFirstKeys[cursor.Table]
		}
		want := limit - deleted
		var gone, chosen int64
		if err := s.pool.QueryRow(ctx, deleteQueueData[cursor.Table], queueID, after, want).Scan(&gone, &chosen, &after); err != nil {
			if isLockNotAvailable(err) {
				return deleted, cursor, nil // a row others hold for now: the next pass goes on from here
			}
			return deleted, from, fmt.Errorf("postgres: delete queue data: %w", translate(err))
		}
		deleted += int(gone)
		if int(chosen) == want { // a full batch: the table may hold more after it
			cursor.After = after
			break
		}
		cursor = ports.QueueDataCursor{Table: cursor.Table + 1}
	}
	if cursor.Table < len(deleteQueueData) {
		return deleted, cursor, nil
	}
	// No row was skipped (see deleteQueueData), and none can be added to a deleted queue.
	return deleted, ports.QueueDataCursor{Done: true}, nil
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
