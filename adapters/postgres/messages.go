package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.MessageStore = (*MessageStore)(nil)

// MessageStore keeps messages in the messages table and dead letters in dead_letters.
//
// Concurrent enqueues, dequeues and acknowledgements are coalesced (see coalescer and
// round): those that arrive while earlier ones are in the database leave together, in one
// round trip and one transaction, and each caller is answered once that transaction
// committed. Close stops the coalescing; a MessageStore must be closed before its pool.
type MessageStore struct {
	pool   *pgxpool.Pool
	rounds *coalescer[operation, outcome]
}

// The bounds of coalescing.
const (
	// maxRound caps the requests of one round, which bounds its memory and duration.
	maxRound = 500
	// payloadBytesPerCost adds one unit to a round's maxRound budget per so many bytes of
	// payload, so that the payloads of one round total about 1 MiB at most.
	payloadBytesPerCost = 2048
	// roundTimeout bounds each round, in place of the deadlines of the requests it carries.
	roundTimeout = 10 * time.Second
)

// MessageStoreOptions tune a MessageStore; a zero field takes its default.
type MessageStoreOptions struct {
	// RoundsInFlight is how many rounds may be in the database at once (default 1). A round
	// is one transaction carrying the requests that arrived while the rounds before it were
	// in flight. With one round at a time rounds are as large as they can be, which costs the
	// database least per request; docs/performance.md shows what more rounds did on the
	// project's reference machine.
	RoundsInFlight int
}

// NewMessageStore returns a MessageStore on pool.
func NewMessageStore(pool *pgxpool.Pool, o MessageStoreOptions) *MessageStore {
	limits := batchLimits{maxRunning: max(o.RoundsInFlight, 1), maxCost: maxRound, timeout: roundTimeout}
	s := &MessageStore{pool: pool}
	s.rounds = newCoalescer(limits, operation.cost, s.runRound)
	return s
}

// Close answers the requests already made and refuses new ones with a service_unavailable
// error. It does not close the pool.
func (s *MessageStore) Close() { s.rounds.close() }

// errClosed answers requests made after Close. It is service_unavailable: a closing instance
// cannot serve them, another one may.
var errClosed = domain.Unavailable(errors.New("postgres: the message store is closed"))

// Enqueue inserts the message; it is durable once Enqueue returns nil.
func (s *MessageStore) Enqueue(ctx context.Context, e domain.Enqueue) error {
	_, err := s.rounds.do(ctx, operation{kind: enqueueOperation, enqueue: e})
	return err
}

// Dequeue delivers the queue's best deliverable message. While its claim moves exhausted
// messages to dead-letter storage in place of delivering one, it asks again in the next
// round: each round commits on its own, so that a failure of a later one fails this dequeue
// alone, never the requests that shared an earlier round.
func (s *MessageStore) Dequeue(ctx context.Context, queueID domain.ID) (ports.Dequeued, error) {
	deadLettered := 0
	for {
		out, err := s.rounds.do(ctx, operation{kind: dequeueOperation, queueID: queueID})
		deadLettered += out.dequeued.DeadLettered
		out.dequeued.DeadLettered = deadLettered
		if err != nil || !out.searchOn {
			return out.dequeued, err
		}
	}
}

// Acknowledge removes the message when receiptHandle names its current, unexpired delivery.
func (s *MessageStore) Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) (bool, error) {
	out, err := s.rounds.do(ctx, operation{kind: acknowledgeOperation,
		acknowledgement: acknowledgement{queueID, messageID, receiptHandle}})
	return out.removed, err
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
