package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueStore = (*QueueStore)(nil)

// QueueStore keeps queues in the queues table.
type QueueStore struct {
	pool *pgxpool.Pool
}

// NewQueueStore returns a QueueStore on pool.
func NewQueueStore(pool *pgxpool.Pool) *QueueStore { return &QueueStore{pool: pool} }

// CreateQueue inserts q. Returns domain.ErrQueueAlreadyExists when the name is taken.
func (s *QueueStore) CreateQueue(ctx context.Context, q domain.Queue) error {
	_, err := s.pool.Exec(ctx, insertQueue, q.ID, q.Name,
		seconds(q.VisibilityTimeout), q.MaxDeliveryAttempts, seconds(q.DefaultMessageTTL))
	if isUniqueViolation(err, "queues_name_key") {
		return domain.ErrQueueAlreadyExists
	}
	if err != nil {
		return fmt.Errorf("postgres: insert queue: %w", translate(err))
	}
	return nil
}

// Queue returns the queue with the given ID. Returns domain.ErrQueueNotFound.
func (s *QueueStore) Queue(ctx context.Context, id domain.ID) (domain.Queue, error) {
	q, err := scanQueue(s.pool.QueryRow(ctx, selectQueue, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Queue{}, domain.ErrQueueNotFound
	}
	if err != nil {
		return domain.Queue{}, fmt.Errorf("postgres: select queue: %w", translate(err))
	}
	return q, nil
}

// ListQueues returns queues ordered by name.
func (s *QueueStore) ListQueues(ctx context.Context, p ports.ListQueuesParams) ([]domain.Queue, error) {
	rows, err := s.pool.Query(ctx, selectQueues, p.Name, p.After, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: select queues: %w", translate(err))
	}
	queues, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Queue, error) {
		return scanQueue(row)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: select queues: %w", translate(err))
	}
	return queues, nil
}

// UpdateQueue applies u and returns the complete queue. Returns domain.ErrQueueNotFound.
func (s *QueueStore) UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error) {
	q, err := scanQueue(s.pool.QueryRow(ctx, updateQueue, id,
		optionalSeconds(u.VisibilityTimeout), u.MaxDeliveryAttempts, optionalSeconds(u.DefaultMessageTTL)))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Queue{}, domain.ErrQueueNotFound
	}
	if err != nil {
		return domain.Queue{}, fmt.Errorf("postgres: update queue: %w", translate(err))
	}
	return q, nil
}

// DeleteQueue removes the queue and records its deletion. Returns domain.ErrQueueNotFound.
func (s *QueueStore) DeleteQueue(ctx context.Context, id domain.ID) error {
	var deleted domain.ID
	err := s.pool.QueryRow(ctx, deleteQueue, id).Scan(&deleted)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.ErrQueueNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: delete queue: %w", translate(err))
	}
	return nil
}

// DeletedQueues returns up to limit recorded deletions after after, in ID order.
func (s *QueueStore) DeletedQueues(ctx context.Context, after domain.ID, limit int) ([]ports.DeletedQueue, error) {
	rows, err := s.pool.Query(ctx, selectDeletedQueues, after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: select deleted queues: %w", translate(err))
	}
	deleted, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.DeletedQueue, error) {
		var d ports.DeletedQueue
		var ageSeconds float64
		err := row.Scan(&d.ID, &ageSeconds)
		d.Age = time.Duration(ageSeconds * float64(time.Second))
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: select deleted queues: %w", translate(err))
	}
	return deleted, nil
}

// ForgetDeletedQueue drops the record of a deletion.
func (s *QueueStore) ForgetDeletedQueue(ctx context.Context, id domain.ID) error {
	if _, err := s.pool.Exec(ctx, forgetDeletedQueue, id); err != nil {
		return fmt.Errorf("postgres: forget deleted queue: %w", translate(err))
	}
	return nil
}

func scanQueue(row pgx.Row) (domain.Queue, error) {
	var q domain.Queue
	var visibilityTimeout, messageTTL int32
	err := row.Scan(&q.ID, &q.Name, &visibilityTimeout, &q.MaxDeliveryAttempts, &messageTTL)
	q.VisibilityTimeout = time.Duration(visibilityTimeout) * time.Second
	q.DefaultMessageTTL = time.Duration(messageTTL) * time.Second
	return q, err
}

// seconds converts a setting, validated to whole seconds, for an integer column.
func seconds(d time.Duration) int32 { return int32(d / time.Second) }

func optionalSeconds(d *time.Duration) *int32 {
	if d == nil {
		return nil
	}
	s := seconds(*d)
	return &s
}
