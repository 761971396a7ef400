package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var (
	_ ports.MessageStore    = (*MessageStore)(nil)
	_ ports.DeadLetterStore = (*MessageStore)(nil)
	_ ports.Cleaning        = (*MessageStore)(nil)
	_ ports.Wakeups         = (*MessageStore)(nil)
)

// MessageStore keeps messages in the messages table, dead letters in dead_letters and
// idempotency keys in idempotency_keys. It is the dead-letter store and the cleaners' store
// too, and it tells its subscribers when messages may have become deliverable, on this
// instance or any other (listen.go).
//
// Concurrent enqueues, dequeues, acknowledgements, extends, releases and undeliveries are
// coalesced (see coalescer and round): those that arrive while earlier ones are in the
// database leave together, in one round trip and one transaction, and each caller is
// answered once that transaction committed. Close stops the coalescing and the listening; a
// MessageStore must be closed before its pool.
type MessageStore struct {
	pool     *pgxpool.Pool
	rounds   *coalescer[operation, outcome]
	gates    []roundGate // one per round slot (gate.go)
	listener *listener
	// peers is the round forwarding (forward.go), and forwards its coalescer, which
	// batches the requests forwarded to the round leader; nil without peers. contended says
	// whether the last round's slot was contended, which sends requests to forwards while a
	// leader is known, but for one per sampleInterval, which goes to a round here.
	peers     *peers
	forwards  *coalescer[operation, outcome]
	contended atomic.Bool
	sampled   atomic.Int64 // the last sample's time, in nanoseconds since the Unix epoch
	// sampleInterval is the constant of that name, and forwardAlways forwards every request
	// while a leader is known, contended or not; tests change them.
	sampleInterval time.Duration
	forwardAlways  bool
	// roundsRun counts the rounds run, and roundsGated those of them that took their lock
	// before their batch (gate.go), for the tests and the metrics.
	roundsRun, roundsGated atomic.Int64
}

// The bounds of coalescing.
const (
	// maxRound caps the cost of one round (see operation.cost), which bounds its memory and
	// duration; a request costlier than it, such as a batch of 1,000, leaves alone.
	maxRound = 500
	// payloadBytesPerCost adds one unit to a round's maxRound budget per so many bytes of
	// payload, so that the payloads of one round total about 1 MiB at most.
	payloadBytesPerCost = 2048
	// roundTimeout bounds each round, in place of the deadlines of the requests it carries.
	roundTimeout = 10 * time.Second
	// batchSize bounds the rows that one statement of a purge or a deletion of every dead
	// letter deletes, so that no transaction grows with the queue.
	batchSize = 10000
)

// MessageStoreOptions tune a MessageStore; a zero field takes its default.
type MessageStoreOptions struct {
	// RoundsInFlight is how many rounds may run in the database at once (default 1), on this
	// instance and, through the round locks (lockRoundSlot), across all the instances on the
	// database that use the same setting. A round is one transaction carrying the requests
	// that arrived while the rounds before it were in flight. With one round at a time
	// rounds are as large as they can be, which costs the database least per request;
	// docs/performance.md shows what more rounds did on the project's reference machine.
	RoundsInFlight int
	// Peers, when set, turns on round forwarding (forward.go).
	Peers *PeerOptions
}

// NewMessageStore returns a MessageStore on pool.
func NewMessageStore(pool *pgxpool.Pool, o MessageStoreOptions) *MessageStore {
	limits := batchLimits{maxRunning: max(o.RoundsInFlight, 1), maxCost: maxRound, timeout: roundTimeout}
	s := &MessageStore{pool: pool, listener: newListener(pool.Config().ConnConfig), gates: newRoundGates(limits.maxRunning),
		sampleInterval: sampleInterval}
	s.rounds = newCoalescer(limits, operation.cost, s.runRound)
	s.rounds.prepare = s.prepareRound
	if o.Peers != nil {
		s.peers = newPeers(pool, *o.Peers)
		s.forwards = newCoalescer(batchLimits{maxRunning: forwardsInFlight, maxCost: maxRound, timeout: roundTimeout},
			operation.cost, s.runForwarded)
	}
	return s
}

// sample reports whether a request that would be forwarded goes to a round here instead,
// which is once per sampleInterval: its round tells whether the slot is still contended.
func (s *MessageStore) sample() bool {
	now, last := time.Now().UnixNano(), s.sampled.Load()
	return now-last >= int64(s.sampleInterval) && s.sampled.CompareAndSwap(last, now)
}

// do carries out op in a round, here or the round leader's (forward.go), and returns its
// outcome, or the error of the round that carried it.
func (s *MessageStore) do(ctx context.Context, op operation) (outcome, error) {
	rounds := s.rounds
	if s.forwards != nil && s.peers.leaderKnown() && (s.forwardAlways || s.contended.Load() && !s.sample()) {
		rounds = s.forwards
	}
	out, err := rounds.do(ctx, op)
	if err == nil {
		err = out.failed
	}
	return out, err
}

// RoundStats are a MessageStore's running totals of rounds, for the metrics.
type RoundStats struct {
	// Rounds counts the rounds run here, Gated those of them that took their round lock before
	// their batch (gate.go), Forwarded the batches the round leader carried.
	Rounds, Gated, Forwarded int64
	// Leading is true while this instance holds the round leader's lease (forward.go).
	Leading bool
}

// RoundStats returns the store's running totals of rounds.
func (s *MessageStore) RoundStats() RoundStats {
	r := RoundStats{Rounds: s.roundsRun.Load(), Gated: s.roundsGated.Load()}
	if s.peers != nil {
		r.Forwarded, r.Leading = s.peers.forwarded.Load(), s.peers.leading.Load()
	}
	return r
}

// advisoryLockClass is the first key of the advisory locks of the round slots, taken in the
// two-key form pg_advisory_xact_lock(int4, int4): "rets" in ASCII. Two-key locks are a lock
// space apart from the single bigint key of pg_advisory_lock(bigint), which is what
// applications mostly use, so no application lock can hold up a round or be held up by one,
// whatever its number; an application that uses the two-key form too must leave this class
// ID to Retsu.
const advisoryLockClass int32 = 0x72657473

// roundLockKey returns the number of round slot slot, from which and the schema's name
// the advisory lock's second key is made (roundLockArguments).
func roundLockKey(slot int) int32 { return int32(slot) }

// Close answers the requests already made and refuses new ones with a service_unavailable
// error, and stops listening. It does not close the pool.
func (s *MessageStore) Close() {
	if s.peers != nil {
		// The batches forwarded from here are answered first; then the lease goes, and the
		// others stop forwarding here once they read it; until then, the batches they
		// forward are refused once the rounds closed, and run where they came from.
		s.forwards.close()
		s.peers.close()
	}
	s.rounds.close()
	if s.peers != nil {
		s.peers.server.close()
	}
	s.listener.close()
}

// errClosed answers requests made after Close. It is service_unavailable: a closing instance
// cannot serve them, another one may.
var errClosed = domain.Unavailable(errors.New("postgres: the message store is closed"))

// Enqueue stores the messages of one request, or replays the request that first used its
// key; it is durable once Enqueue returns nil.
func (s *MessageStore) Enqueue(ctx context.Context, p ports.EnqueueParams) (ports.Enqueued, error) {
	out, err := s.do(ctx, operation{kind: enqueueOperation, queueID: p.QueueID, enqueue: p})
	if err != nil {
		return ports.Enqueued{}, err
	}
	return out.enqueued, out.err
}

// Replay answers a repeat of a request stored with key, storing nothing. It reads outside
// the rounds: it serves only requests that the queue's current settings refuse.
func (s *MessageStore) Replay(ctx context.Context, queueID domain.ID, key ports.IdempotencyKey) (ports.Enqueued, error) {
	var record keyRecord
	var fingerprint []byte
	err := s.pool.QueryRow(ctx, selectIdempotencyKey, queueID, key.Key).Scan(&fingerprint, &record.ids)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ports.Enqueued{}, nil
	case err != nil:
		return ports.Enqueued{}, fmt.Errorf("postgres: replay: %w", translate(err))
	}
	copy(record.fingerprint[:], fingerprint)
	return record.replay(&key)
}

// Dequeue delivers up to p.Max of the queue's deliverable messages in one claim.
func (s *MessageStore) Dequeue(ctx context.Context, p ports.DequeueParams) (ports.Dequeued, error) {
	out, err := s.do(ctx, operation{kind: dequeueOperation, queueID: p.QueueID, dequeue: p})
	return out.dequeued, err
}

// Acknowledge removes each message whose receipt holds its lease.
func (s *MessageStore) Acknowledge(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) ([]bool, error) {
	out, err := s.do(ctx, operation{kind: acknowledgeOperation, queueID: queueID, receipts: receipts})
	return out.removed, err
}

// Extend makes the lease of receipt end timeout from now.
func (s *MessageStore) Extend(ctx context.Context, queueID domain.ID, receipt domain.Receipt, timeout time.Duration) (bool, error) {
	out, err := s.do(ctx, operation{kind: extendOperation, queueID: queueID, receipt: receipt, seconds: seconds(timeout)})
	return out.held, err
}

// Release ends the lease of receipt; the message is deliverable again after delay.
func (s *MessageStore) Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) (bool, error) {
	out, err := s.do(ctx, operation{kind: releaseOperation, queueID: queueID, receipt: receipt, seconds: seconds(delay)})
	return out.held, err
}

// Undeliver takes back deliveries that never reached their consumer.
func (s *MessageStore) Undeliver(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) error {
	_, err := s.do(ctx, operation{kind: undeliverOperation, queueID: queueID, receipts: receipts})
	return err
}

// Purge removes the queue's messages enqueued before the call, a bounded batch per
// transaction, so that purging a large queue holds no long transaction; messages enqueued
// meanwhile come after the cut and stay. A message that a round holds (a release, a
// delivery about to commit) is skipped, not waited for, and a later pass removes it once
// the round is done, so that none of them survives the purge, and the deliveries it removed
// acknowledge nothing.
func (s *MessageStore) Purge(ctx context.Context, queueID domain.ID) (int, error) {
	var cut int64
	if err := s.pool.QueryRow(ctx, selectLastSeq).Scan(&cut); err != nil {
		return 0, fmt.Errorf("postgres: purge: %w", translate(err))
	}
	total := 0
	for {
		n, err := s.purgePass(ctx, queueID, cut)
		total += n
		if err != nil {
			return total, err
		}
		var left bool
		if err := s.pool.QueryRow(ctx, purgeLeft, queueID, cut).Scan(&left); err != nil {
			return total, fmt.Errorf("postgres: purge: %w", translate(err))
		}
		if !left {
			return total, nil
		}
		select { // the rounds that hold the rest commit within moments
		case <-time.After(purgeRetryPause):
		case <-ctx.Done():
			return total, fmt.Errorf("postgres: purge: %w", ctx.Err())
		}
	}
}

// purgeRetryPause is how long a purge waits before passing again over the messages that
// rounds held.
const purgeRetryPause = 10 * time.Millisecond

// purgePass deletes, in batches along the queue's primary key, the messages up to cut that
// no round holds, and returns how many.
func (s *MessageStore) purgePass(ctx context.Context, queueID domain.ID, cut int64) (int, error) {
	total, after := 0, domain.ID{}
	for {
		var n int64
		var last *domain.ID
		if err := s.pool.QueryRow(ctx, purgeMessages, queueID, cut, after, batchSize).Scan(&n, &last); err != nil {
			return total, fmt.Errorf("postgres: purge: %w", translate(err))
		}
		total += int(n)
		if last == nil {
			return total, nil
		}
		after = *last
	}
}

// inBatches repeats deleteBatch until a batch comes back short of batchSize, and returns the
// total.
func inBatches(deleteBatch func() (int, error)) (int, error) {
	total := 0
	for {
		n, err := deleteBatch()
		total += n
		if err != nil || n < batchSize {
			return total, err
		}
	}
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
		if err := rows.Scan(&priority, &ps.Ready, &ps.InFlight, &ps.Delayed, &ps.DeadLettered, &oldestReadySeconds); err != nil {
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
