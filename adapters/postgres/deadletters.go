package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// DeadLetters returns a page of the queue's dead letters in ID order.
func (s *MessageStore) DeadLetters(ctx context.Context, queueID domain.ID, p ports.DeadLetterPage) ([]domain.DeadLetter, error) {
	var after *domain.ID
	if !p.After.IsZero() {
		after = &p.After
	}
	rows, err := s.pool.Query(ctx, selectDeadLetters, queueID, after, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: select dead letters: %w", translate(err))
	}
	letters, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.DeadLetter, error) { return scanDeadLetter(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: select dead letters: %w", translate(err))
	}
	return letters, nil
}

// DeadLetter returns one dead letter. Returns domain.ErrDeadLetterNotFound.
func (s *MessageStore) DeadLetter(ctx context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error) {
	d, err := scanDeadLetter(s.pool.QueryRow(ctx, selectDeadLetter, queueID, messageID))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.DeadLetter{}, domain.ErrDeadLetterNotFound
	}
	if err != nil {
		return domain.DeadLetter{}, fmt.Errorf("postgres: select dead letter: %w", translate(err))
	}
	return d, nil
}

// DeleteDeadLetter deletes one dead letter, if there is one.
func (s *MessageStore) DeleteDeadLetter(ctx context.Context, queueID, messageID domain.ID) error {
	if _, err := s.pool.Exec(ctx, deleteDeadLetter, queueID, messageID); err != nil {
		return fmt.Errorf("postgres: delete dead letter: %w", translate(err))
	}
	return nil
}

// DeleteAllDeadLetters deletes every dead letter of the queue, a bounded batch per
// transaction.
func (s *MessageStore) DeleteAllDeadLetters(ctx context.Context, queueID domain.ID) (int, error) {
	return inBatches(func() (int, error) {
		tag, err := s.pool.Exec(ctx, deleteAllDeadLetters, queueID, batchSize)
		if err != nil {
			return 0, fmt.Errorf("postgres: delete dead letters: %w", translate(err))
		}
		return int(tag.RowsAffected()), nil
	})
}

// Redrive sends the selected dead letters back into q, each moved in one statement.
func (s *MessageStore) Redrive(ctx context.Context, q domain.Queue, r domain.Redrive) ([]domain.ID, error) {
	settings := []any{seconds(q.VisibilityTimeout), int32(q.MaxDeliveryAttempts), seconds(q.DefaultMessageTTL)}
	var rows pgx.Rows
	var err error
	if r.IDs != nil {
		rows, err = s.pool.Query(ctx, redriveByIDs, append([]any{q.ID, r.IDs}, settings...)...)
	} else {
		rows, err = s.pool.Query(ctx, redriveOldest, append([]any{q.ID, r.Limit}, settings...)...)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: redrive: %w", translate(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[domain.ID])
	if err != nil {
		return nil, fmt.Errorf("postgres: redrive: %w", translate(err))
	}
	return ids, nil
}

func scanDeadLetter(row pgx.Row) (domain.DeadLetter, error) {
	var d domain.DeadLetter
	var priority int16
	var payload, attributes []byte
	var attempts int32
	if err := row.Scan(&d.QueueID, &d.MessageID, &priority, &payload, &attributes, &attempts, &d.EnqueuedAt, &d.DeadLetteredAt); err != nil {
		return domain.DeadLetter{}, err
	}
	d.Priority, d.Payload, d.DeliveryAttempts = domain.Priority(priority), string(payload), int(attempts)
	d.EnqueuedAt, d.DeadLetteredAt = d.EnqueuedAt.UTC(), d.DeadLetteredAt.UTC()
	var err error
	d.Attributes, err = decodeAttributes(attributes)
	return d, err
}
