package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// The round behind the coalescer, for tests that need a batch of known content.

// Operation is one request as the coalescer carries it.
type Operation = operation

// Enqueueing is the operation of an Enqueue of e alone.
func Enqueueing(e domain.Enqueue) Operation {
	return operation{kind: enqueueOperation, queueID: e.QueueID,
		enqueue: ports.EnqueueParams{QueueID: e.QueueID, Messages: []domain.Enqueue{e}}}
}

// Dequeueing is the operation of a Dequeue of one message of queueID.
func Dequeueing(queueID domain.ID) Operation {
	return operation{kind: dequeueOperation, queueID: queueID, dequeue: ports.DequeueParams{QueueID: queueID, Max: 1}}
}

// Acknowledging is the operation of an Acknowledge of delivery d of queue queueID.
func Acknowledging(queueID domain.ID, d domain.Delivery) Operation {
	return operation{kind: acknowledgeOperation, queueID: queueID, receipts: []domain.Receipt{d.Receipt()}}
}

// Round carries out batch as one round and returns what Dequeue and Acknowledge (of a
// single receipt) would have returned for each of its operations.
func Round(s *MessageStore, ctx context.Context, batch []Operation) ([]ports.Dequeued, []bool, error) {
	outcomes := make([]outcome, len(batch))
	// A gate of its own: slot 0's belongs to the coalescer's goroutines.
	if err := s.runRoundAt(ctx, &roundGate{}, 0, batch, outcomes); err != nil {
		return nil, nil, err
	}
	dequeued, removed := make([]ports.Dequeued, len(batch)), make([]bool, len(batch))
	for i, o := range outcomes {
		dequeued[i] = o.dequeued
		removed[i] = len(o.removed) == 1 && o.removed[0]
	}
	return dequeued, removed, nil
}

// ClaimStatement is the claim, for tests that explain it.
const ClaimStatement = claimMessages

// InsertStatement is the enqueue's statement, for tests that explain it.
const InsertStatement = insertMessages

// SharedBuffers returns the shared buffers (hit and read) of the root of an EXPLAIN
// (ANALYZE, BUFFERS, FORMAT JSON) plan, which counts every node and CTE under it. It fails
// the test when PostgreSQL compiled the statement (JIT), which costs far more than running
// a statement of the adapter.
func SharedBuffers(t *testing.T, plan string) int {
	t.Helper()
	var explained []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		}
		JIT *struct {
			Functions int
		}
	}
	if err := json.Unmarshal([]byte(plan), &explained); err != nil || len(explained) != 1 {
		t.Fatalf("read plan %q: %v", plan, err)
	}
	if explained[0].JIT != nil {
		t.Errorf("the statement was compiled (JIT, %d functions)", explained[0].JIT.Functions)
	}
	return explained[0].Plan.Hit + explained[0].Plan.Read
}

// Forwarded is how many batches of s the round leader carried.
func Forwarded(s *MessageStore) int64 { return s.peers.forwarded.Load() }

// Leads reports whether s held the round leader's lease when it last read it, and
// KnowsLeader whether it knows another instance that does.
func Leads(s *MessageStore) bool       { return s.peers.leading.Load() }
func KnowsLeader(s *MessageStore) bool { return s.peers.leaderKnown() }

// ForwardAlways makes s forward every request while it knows a leader, contended or not.
func ForwardAlways(s *MessageStore) { s.forwardAlways = true }

// SampleEvery sets how often s, forwarding, sends a request to a round of its own.
func SampleEvery(s *MessageStore, d time.Duration) { s.sampleInterval = d }

// RoundsRun is how many rounds s has run.
func RoundsRun(s *MessageStore) int64 { return s.roundsRun.Load() }

// WaitingRequests is how many requests wait for a round of s.
func WaitingRequests(s *MessageStore) int {
	s.rounds.mu.Lock()
	defer s.rounds.mu.Unlock()
	return len(s.rounds.waiting)
}

// RoundLockKeys are the arguments of RoundLockArguments for the lock of a round slot.
func RoundLockKeys(slot int) (class, key int32) { return advisoryLockClass, roundLockKey(slot) }

// RoundLockArguments are the two keys of a round slot's lock, as SQL of $1 and $2.
const RoundLockArguments = roundLockArguments

// EnqueueingWithKey is the operation of an Enqueue of e alone with an idempotency key.
func EnqueueingWithKey(e domain.Enqueue, key *ports.IdempotencyKey) Operation {
	op := Enqueueing(e)
	op.enqueue.Key = key
	return op
}

// Extending is the operation of an Extend of receipt r of queue queueID to seconds.
func Extending(queueID domain.ID, r domain.Receipt, seconds int32) Operation {
	return operation{kind: extendOperation, queueID: queueID, receipt: r, seconds: seconds}
}

// Releasing is the operation of a Release of receipt r of queue queueID with a delay of
// seconds.
func Releasing(queueID domain.ID, r domain.Receipt, seconds int32) Operation {
	return operation{kind: releaseOperation, queueID: queueID, receipt: r, seconds: seconds}
}

// RoundHeld carries out batch as one round and returns whether each of its extends and
// releases held its lease.
func RoundHeld(s *MessageStore, ctx context.Context, batch []Operation) ([]bool, error) {
	outcomes := make([]outcome, len(batch))
	// A gate of its own: slot 0's belongs to the coalescer's goroutines.
	if err := s.runRoundAt(ctx, &roundGate{}, 0, batch, outcomes); err != nil {
		return nil, err
	}
	held := make([]bool, len(batch))
	for i, o := range outcomes {
		held[i] = o.held
	}
	return held, nil
}

// Listener is the LISTEN connection of a MessageStore, for tests that cut it.
type Listener struct{ l *listener }

// NewListener returns a listener on config that pings after ping of quiet, waits
// pingTimeout for the answer, and connects again after retry.
func NewListener(config *pgx.ConnConfig, ping, pingTimeout, retry time.Duration) Listener {
	l := newListener(config)
	l.timing = listenTiming{ping: ping, pingTimeout: pingTimeout, retryMin: retry, retryMax: retry}
	return Listener{l}
}

// Subscribe is MessageStore.Subscribe.
func (l Listener) Subscribe(notify func(ports.Wakeup)) func() { return l.l.subscribe(notify) }

// Close stops the listener.
func (l Listener) Close() { l.l.close() }

// ListenRetries returns the pauses of the listener's first n attempts to connect again in a
// row, before jitter.
func ListenRetries(n int) []time.Duration {
	retries, retry := make([]time.Duration, n), time.Duration(0)
	for i := range retries {
		retry = defaultListenTiming.nextRetry(retry)
		retries[i] = retry
	}
	return retries
}

// DeleteIdempotencyKeysStatement is the idempotency-key cleaner's statement, for tests that
// explain it.
const DeleteIdempotencyKeysStatement = deleteIdempotencyKeys

// DeleteDeadLettersStatement is the dead-letter cleaner's statement, for tests that explain
// it.
const DeleteDeadLettersStatement = deleteDeadLetters

// DeleteExpiredStatement is the expired-message cleaner's statement, for tests that explain it.
const DeleteExpiredStatement = deleteExpired

// LockRoundSlot is the statement that takes round slot $2's lock, of class
// AdvisoryLockClass ($1), for tests that hold it as another instance's round would.
const LockRoundSlot = lockRoundSlot

// AdvisoryLockClass is the class of the round slots' locks.
const AdvisoryLockClass = advisoryLockClass

// WireVersion is the wire format's version that peer connections open with.
var WireVersion = wireVersion()
