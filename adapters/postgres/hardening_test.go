package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// The tests in this file reproduce the faults of the hardening issue: a backlog of returned
// or exhausted messages that made every claim of its queue slow, requests that answered an
// error after their round had acted, and leases that started before the claim. Each runs in
// a schema of its own, so that the locks and backlogs it makes touch no other test.

// isolated is a MessageStore on a migrated schema of its own.
type isolated struct {
	url   string
	pool  *pgxpool.Pool
	store *postgres.MessageStore
}

var schemas atomic.Int64

func newIsolated(t *testing.T) *isolated {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("hardening_%d_%d", os.Getpid(), schemas.Add(1))
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	url := os.Getenv("RETSU_TEST_DATABASE_URL") + "&search_path=" + schema
	if !strings.Contains(url, "?") {
		url = strings.Replace(url, "&", "?", 1)
	}
	if err := migrateUp(url); err != nil {
		t.Fatal(err)
	}
	p, err := postgres.OpenPool(ctx, url, postgres.PoolOptions{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	store := postgres.NewMessageStore(p, postgres.MessageStoreOptions{})
	t.Cleanup(store.Close)
	return &isolated{url: url, pool: p, store: store}
}

// insertDelivered stores n messages of queue queueID with the given priority that were
// delivered attempts times and whose lease ended a minute ago, with plain SQL, as a consumer
// fleet that crashed with work in flight leaves them.
func (s *isolated) insertDelivered(t *testing.T, queueID domain.ID, n, attempts, maxAttempts int, priority domain.Priority) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), `
		INSERT INTO messages (queue_id, id, priority, payload, expires_at, visible_at, state, receipt_handle,
		                      delivery_attempts, max_delivery_attempts, visibility_timeout_seconds, first_delivered_at)
		SELECT $1, gen_random_uuid(), $2, 'returned', now() + interval '1 day', now() - interval '1 minute', 2,
		       gen_random_uuid(), $3, $4, 30, now() - interval '2 minutes'
		FROM generate_series(1, $5)`, queueID, int16(priority), attempts, maxAttempts, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(context.Background(), "VACUUM ANALYZE messages"); err != nil {
		t.Fatal(err)
	}
}

// claimBuffers returns the shared buffers that one claim of max messages touches, as the
// server's connections run it (generic plan), in a transaction that is rolled back.
func (s *isolated) claimBuffers(t *testing.T, queueID domain.ID, max int) int {
	t.Helper()
	return s.statementBuffers(t, postgres.ClaimStatement, fmt.Sprintf("'%s', %d, false", queueID, max))
}

// statementBuffers returns the shared buffers that statement, prepared and run with the SQL
// arguments given, touches, in a transaction that is rolled back, after the SET LOCAL
// settings given.
func (s *isolated) statementBuffers(t *testing.T, statement, arguments string, settings ...string) int {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, setting := range settings {
		if _, err := tx.Exec(ctx, "SET LOCAL "+setting); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(ctx, "PREPARE measured AS "+statement); err != nil {
		t.Fatal(err)
	}
	defer tx.Exec(ctx, "DEALLOCATE measured")
	var plan string
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured("+arguments+")").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	return postgres.SharedBuffers(t, plan)
}

func TestClaim_CostDoesNotGrowWithReturnedMessages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	small, large := newID(), newID()
	s.insertDelivered(t, small, 1000, 1, 5, domain.PriorityLow)
	s.insertDelivered(t, large, 50000, 1, 5, domain.PriorityLow)
	smallCost, largeCost := s.claimBuffers(t, small, 10), s.claimBuffers(t, large, 10)
	t.Logf("buffers per claim of 10: 1,000 returned %d, 50,000 returned %d", smallCost, largeCost)
	is.True(float64(largeCost) <= 1.5*float64(smallCost)) // a claim reads what it takes, not the whole backlog
}

func TestClaim_ReturnedMessages_KeepTheirPriorityAheadOfNewOnes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	s.insertDelivered(t, queueID, 3, 1, 5, domain.PriorityHigh)
	fresh := newEnqueue(queueID, domain.PriorityMedium, "fresh")
	is.NoErr(enqueueOne(s.store, fresh))
	dequeued, err := s.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 4})
	is.NoErr(err)
	is.Equal(len(dequeued.Deliveries), 4)
	for _, d := range dequeued.Deliveries[:3] {
		is.Equal(d.Priority, domain.PriorityHigh) // the returned HIGH messages come first
		is.Equal(d.DeliveryAttempts, 2)           // as their second attempt
	}
	is.Equal(dequeued.Deliveries[3].MessageID, fresh.MessageID) // then the fresh MEDIUM one
}

func TestClaim_ExhaustedBacklog_DoesNotHoldBackADeliverableMessage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	s.insertDelivered(t, queueID, 5000, 1, 1, domain.PriorityHigh)
	ready := newEnqueue(queueID, domain.PriorityLow, "behind the backlog")
	is.NoErr(enqueueOne(s.store, ready))
	dequeued, _, err := postgres.Round(s.store, context.Background(), []postgres.Operation{postgres.Dequeueing(queueID)})
	is.NoErr(err)
	is.Equal(len(dequeued[0].Deliveries), 1)
	is.Equal(dequeued[0].Deliveries[0].MessageID, ready.MessageID) // one round delivers the message behind 5,000 exhausted ones
	is.True(dequeued[0].DeadLettered > 0)                          // and moves part of the backlog, in bulk
	is.True(dequeued[0].DeadLettered <= 1000)                      // bounded per claim
	moved := dequeued[0].DeadLettered
	for moved < 5000 {
		got, err := dequeueOne(s.store, queueID)
		is.NoErr(err)
		is.True(got.DeadLettered > 0) // every later dequeue moves more, until none is left
		moved += got.DeadLettered
	}
	is.Equal(moved, 5000) // each exhausted message was moved once
}

// holdLock locks the messages table for d in a transaction of its own, on a connection of
// its own, as a migration or a careless operator would, and returns once the lock is held;
// done is closed when it is released.
func (s *isolated) holdLock(t *testing.T, d time.Duration) (done chan struct{}) {
	t.Helper()
	return s.holdFor(t, d, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
}

// holdFor runs statement in a transaction on a connection of its own, and commits it d after
// it returned; done is closed then.
func (s *isolated) holdFor(t *testing.T, d time.Duration, statement string, arguments ...any) (done chan struct{}) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, statement, arguments...); err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(d)
		_ = tx.Commit(ctx)
	}()
	return done
}

func TestRound_SentBeforeTheRequesterGaveUp_AnswersItsOutcome(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	waiting := newEnqueue(queueID, domain.PriorityHigh, "waiting")
	is.NoErr(enqueueOne(s.store, waiting))

	released := s.holdLock(t, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	dequeued, err := s.store.Dequeue(ctx, ports.DequeueParams{QueueID: queueID, Max: 1})
	<-released
	is.NoErr(err)                                                 // the round was sent before the deadline: its outcome is the answer
	is.Equal(len(dequeued.Deliveries), 1)                         // the claim it made
	is.Equal(dequeued.Deliveries[0].MessageID, waiting.MessageID) // of the waiting message
	removed, err := acknowledgeOne(s.store, queueID, dequeued.Deliveries[0])
	is.NoErr(err)
	is.True(removed) // which the requester can still complete

	released = s.holdLock(t, time.Second)
	stored := newEnqueue(queueID, domain.PriorityHigh, "stored")
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = s.store.Enqueue(ctx, ports.EnqueueParams{QueueID: queueID, Messages: []domain.Enqueue{stored}})
	<-released
	is.NoErr(err) // an enqueue whose round was sent answers that it stored the message
	got, err := dequeueOne(s.store, queueID)
	is.NoErr(err)
	is.Equal(got.Deliveries[0].MessageID, stored.MessageID) // and it did
}

func TestRound_RequesterThatGaveUpBeforeItsRoundLeft_IsTakenOut(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	released := s.holdLock(t, time.Second)
	ahead := make(chan error, 1)
	go func() { ahead <- enqueueOne(s.store, newEnqueue(queueID, domain.PriorityHigh, "ahead")) }()
	time.Sleep(100 * time.Millisecond) // the round carrying "ahead" waits for the lock

	behind := newEnqueue(queueID, domain.PriorityHigh, "gave up")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.store.Enqueue(ctx, ports.EnqueueParams{QueueID: queueID, Messages: []domain.Enqueue{behind}})
	is.True(errors.Is(err, context.DeadlineExceeded)) // the request behind the stuck round gives up with its deadline
	<-released
	is.NoErr(<-ahead)
	var n int
	is.NoErr(s.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages WHERE id = $1", behind.MessageID).Scan(&n))
	is.Equal(n, 0) // and what it asked for was never done
}

func TestClaim_LeaseStartsWhenTheClaimIsMade(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	e := newEnqueue(queueID, domain.PriorityHigh, "slow to claim")
	// A lease of 2 s and a wait of 2.5 s: the ack below has 2 s after the claim, as this
	// machine's disk has stalled a commit for more than a second under make test's load.
	e.VisibilityTimeout = 2 * time.Second
	is.NoErr(enqueueOne(s.store, e))
	// A connection that has run the claim before starts the claim's transaction when it is
	// sent, and only then waits for the lock, as a busy server's connections do.
	_, err := s.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: newID(), Max: 1})
	is.NoErr(err)
	released := s.holdLock(t, 2500*time.Millisecond)
	result := make(chan ports.Dequeued, 1)
	go func() {
		// The claim's round starts its transaction now and waits for the lock longer than
		// the lease lasts.
		got, err := dequeueOne(s.store, queueID)
		if err != nil {
			t.Error(err)
		}
		result <- got
	}()
	<-released
	got := <-result
	is.Equal(len(got.Deliveries), 1)
	removed, err := acknowledgeOne(s.store, queueID, got.Deliveries[0])
	is.NoErr(err)
	is.True(removed) // the lease the consumer got was still running: it started at the claim, after the wait
}

func TestEnqueue_KeyHeldByAnUncommittedRequest_IsInUse(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	ctx := context.Background()
	// Another round holds the key's lock: its transaction has not committed yet.
	conn, err := pgx.Connect(ctx, s.url)
	is.NoErr(err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	is.NoErr(err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0) # hashtextextended($2::text, 1))", "order-7", queueID)
	is.NoErr(err)

	key := &ports.IdempotencyKey{Key: "order-7", Fingerprint: domain.Fingerprint{7}, Retention: time.Hour}
	e := newEnqueue(queueID, domain.PriorityHigh, "charge")
	_, err = s.store.Enqueue(ctx, ports.EnqueueParams{QueueID: queueID, Messages: []domain.Enqueue{e}, Key: key})
	is.True(errors.Is(err, domain.ErrIdempotencyKeyInUse)) // the request with the same key is told it is in use
	var n int
	is.NoErr(s.pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE id = $1", e.MessageID).Scan(&n))
	is.Equal(n, 0) // and stored nothing

	is.NoErr(tx.Rollback(ctx)) // the other request gave up
	enqueued, err := s.store.Enqueue(ctx, ports.EnqueueParams{QueueID: queueID, Messages: []domain.Enqueue{e}, Key: key})
	is.NoErr(err) // the retry stores
	is.True(!enqueued.Replayed)
}

// leaseSeconds returns how many seconds from now the message's lease ends.
func (s *isolated) leaseSeconds(t *testing.T, id domain.ID) float64 {
	t.Helper()
	var seconds float64
	err := s.pool.QueryRow(context.Background(),
		"SELECT extract(epoch FROM visible_at - clock_timestamp())::float8 FROM messages WHERE id = $1", id).Scan(&seconds)
	if err != nil {
		t.Fatal(err)
	}
	return seconds
}

// Two extends of one lease that meet in a round both hold it, as they would one after the
// other, and the later one's timeout is the one that applies; of two releases, the first
// ends the lease and applies its delay, and the second finds it gone.
func TestRound_OneLeaseTwiceInARound_AnswersAsOneAfterTheOther(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	e := newEnqueue(queueID, domain.PriorityHigh, "extended twice")
	e.VisibilityTimeout = 30 * time.Second
	is.NoErr(enqueueOne(s.store, e))
	got, err := dequeueOne(s.store, queueID)
	is.NoErr(err)
	r := got.Deliveries[0].Receipt()

	for _, order := range [][2]int32{{600, 1200}, {1200, 600}} {
		held, err := postgres.RoundHeld(s.store, ctx, []postgres.Operation{
			postgres.Extending(queueID, r, order[0]), postgres.Extending(queueID, r, order[1])})
		is.NoErr(err)
		is.Equal(held, []bool{true, true}) // both extends hold the lease
		left := s.leaseSeconds(t, r.MessageID)
		is.True(left > float64(order[1])-10 && left <= float64(order[1])) // which ends after the later one's timeout
	}

	held, err := postgres.RoundHeld(s.store, ctx, []postgres.Operation{
		postgres.Releasing(queueID, r, 0), postgres.Releasing(queueID, r, 3600)})
	is.NoErr(err)
	is.Equal(held, []bool{true, false}) // the first release ends the lease; the second finds it gone
	again, err := dequeueOne(s.store, queueID)
	is.NoErr(err)
	is.Equal(len(again.Deliveries), 1) // and the first one's delay, none, is the one that applied
}

// insertExpired stores n ready messages of queue queueID whose lifetime ended a minute ago,
// with plain SQL, as a queue nobody consumed for longer than its lifetime leaves them.
func (s *isolated) insertExpired(t *testing.T, queueID domain.ID, n int) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), `
		INSERT INTO messages (queue_id, id, priority, payload, expires_at, visible_at, state,
		                      max_delivery_attempts, visibility_timeout_seconds)
		SELECT $1, gen_random_uuid(), 1, 'expired', now() - interval '1 minute', now() - interval '1 day', 0, 5, 30
		FROM generate_series(1, $2)`, queueID, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(context.Background(), "VACUUM ANALYZE messages"); err != nil {
		t.Fatal(err)
	}
}

// A long run of expired messages at the head of a queue's line, which the expired-message
// cleaner has not reached yet, is passed over inside the line's index: a claim behind
// 20,000 of them costs about what it costs on a queue without them, not a table read each.
func TestClaim_ExpiredMessagesAhead_PassedOverInTheIndex(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	clean, neglected := newID(), newID()
	s.insertExpired(t, neglected, 20_000)
	for _, queueID := range []domain.ID{clean, neglected} {
		for i := range 10 {
			is.NoErr(enqueueOne(s.store, newEnqueue(queueID, domain.PriorityHigh, fmt.Sprint("live ", i))))
		}
	}
	cleanCost, neglectedCost := s.claimBuffers(t, clean, 10), s.claimBuffers(t, neglected, 10)
	t.Logf("buffers per claim of 10: %d without expired messages ahead, %d behind 20,000", cleanCost, neglectedCost)
	is.True(neglectedCost < 3*cleanCost) // the expired ones cost index pages, not a heap fetch each
	got, err := s.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: neglected, Max: 10})
	is.NoErr(err)
	is.Equal(len(got.Deliveries), 10) // and the live messages behind them are delivered
}

// Ended leases of messages whose lifetime ended too are deleted by the claims that meet them,
// a bounded number per claim, so that no later claim reads them again.
func TestClaim_ExpiredEndedLeases_DeletedByTheClaimsThatMeetThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	queueID := newID()
	s.insertDelivered(t, queueID, 1500, 1, 5, domain.PriorityHigh)
	if _, err := s.pool.Exec(context.Background(), "UPDATE messages SET expires_at = now() - interval '1 second' WHERE queue_id = $1", queueID); err != nil {
		t.Fatal(err)
	}
	is.NoErr(enqueueOne(s.store, newEnqueue(queueID, domain.PriorityLow, "live")))
	expired := 0
	for range 2 {
		got, err := s.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})
		is.NoErr(err)
		expired += got.Expired
		if len(got.Deliveries) == 1 {
			is.Equal(got.Deliveries[0].Payload, "live") // the live message goes out
		}
	}
	is.Equal(expired, 1500) // and the claims deleted the expired ones, at most a thousand each
}

// A message that a round holds while a purge passes it (a release or a delivery about to
// commit) is removed once the round is done, not left behind: the purge removes every
// message committed before it.
func TestPurge_MessageHeldByARound_RemovedWhenTheRoundIsDone(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	for i := range 5 {
		is.NoErr(enqueueOne(s.store, newEnqueue(queueID, domain.PriorityHigh, fmt.Sprint("doomed ", i))))
	}
	tx, err := s.pool.Begin(ctx) // holds one message as a round's statement would
	is.NoErr(err)
	defer tx.Rollback(ctx)
	var held domain.ID
	is.NoErr(tx.QueryRow(ctx, "SELECT id FROM messages WHERE queue_id = $1 ORDER BY seq LIMIT 1 FOR UPDATE", queueID).Scan(&held))
	purged := make(chan int, 1)
	go func() {
		n, err := s.store.Purge(ctx, queueID)
		if err != nil {
			t.Error(err)
		}
		purged <- n
	}()
	time.Sleep(300 * time.Millisecond)
	is.NoErr(tx.Commit(ctx)) // the round is done
	is.Equal(<-purged, 5)    // the purge removed every message, the held one too
	stats, err := s.store.Stats(ctx, queueID)
	is.NoErr(err)
	is.Equal(stats.Priorities[0].Ready, int64(0)) // none is left
}

func TestRound_Deadlock_IsRetried(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	is.NoErr(enqueueOne(s.store, newEnqueue(queueID, domain.PriorityHigh, "locked")))
	got, err := dequeueOne(s.store, queueID)
	is.NoErr(err)
	is.Equal(len(got.Deliveries), 1)
	delivery := got.Deliveries[0]

	// Another transaction locks the message, so the round's acknowledgement waits for it
	// while holding its slot's lock, then waits for that lock: a deadlock, which PostgreSQL
	// breaks (after deadlock_timeout) by failing the round, the first to wait.
	tx, err := s.pool.Begin(ctx)
	is.NoErr(err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SELECT FROM messages WHERE queue_id = $1 AND id = $2 FOR UPDATE", queueID, delivery.MessageID)
	is.NoErr(err)
	// This side checks for the deadlock long after the round does, so that PostgreSQL breaks
	// it on the round's side also when a loaded machine delays the round's check.
	_, err = tx.Exec(ctx, "SET LOCAL deadlock_timeout = '30s'")
	is.NoErr(err)
	var pid int32
	is.NoErr(tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	type answer struct {
		removed []bool
		err     error
	}
	done := make(chan answer, 1)
	go func() {
		_, removed, err := postgres.Round(s.store, ctx, []postgres.Operation{postgres.Acknowledging(queueID, delivery)})
		done <- answer{removed, err}
	}()
	waitForBlockedBy(t, s, pid)
	class, slot := postgres.RoundLockKeys(0)
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+postgres.RoundLockArguments+")", class, slot)
	is.NoErr(err) // the deadlock is broken on the round's side
	is.NoErr(tx.Rollback(ctx))

	a := <-done
	is.NoErr(a.err)                   // the round ran again instead of failing its requests
	is.Equal(a.removed, []bool{true}) // and its acknowledgement removed the message
}

// waitForBlockedBy waits until a backend waits for a lock that the backend pid holds.
func waitForBlockedBy(t *testing.T, s *isolated, pid int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var waiting bool
		err := s.pool.QueryRow(context.Background(),
			"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid)))", pid).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no backend came to wait for the lock")
}

func TestDeleteIdempotencyKeys_CostDoesNotGrowWithUnexpiredKeys(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	_, err := s.pool.Exec(ctx, `
INSERT INTO idempotency_keys (queue_id, key, fingerprint, message_ids, created_at, expires_at)
SELECT $1, 'key-' || i, '\x00', '{}', now(), now() + interval '1 hour' FROM generate_series(1, 5000) AS i`, queueID)
	is.NoErr(err)
	_, err = s.pool.Exec(ctx, "ANALYZE idempotency_keys")
	is.NoErr(err)
	buffers := s.statementBuffers(t, postgres.DeleteIdempotencyKeysStatement, fmt.Sprintf("'%s', 1000", queueID), "enable_seqscan = off")
	is.True(buffers < 20) // the statement reads the expired range of the index only, not the 5,000 live keys
}

// A plan of the expired-message cleaner cached before a backlog must still read only the
// expired ranges. A plan made from statistics that estimate about one row for
// `state IN (0, 1)` (an empty or never-analyzed table, or one of leased messages) put that
// list in a filter, so the scan read every unleased message of the queue (about 250 buffers
// here, for 40,000 messages, before deleteExpired scanned per state). The backlog's lifetimes
// differ, as a real backlog's do: with one lifetime for all, the index's deduplication would
// hide the whole-range scan. A second way to a whole-queue read, a plan that estimates one
// row for the queue and takes messages_pkey and a sort, is the one the lifecycle benchmark
// met: see the next test.
func TestDeleteExpired_PlannedBeforeABacklog_ReadsOnlyTheExpiredRanges(t *testing.T) {
	t.Parallel()
	// The statistics the plan is made from: whatever the table held at the last ANALYZE.
	for _, before := range []struct {
		name     string
		rows     int
		state    int
		analyzed bool
	}{
		{"another queue's 1,000 ready messages", 1000, 0, true},
		{"another queue's 1,000 leased messages", 1000, 2, true},
		{"an empty table", 0, 0, true},
		{"a table never analyzed, as a new database's", 0, 0, false},
	} {
		t.Run(before.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			s := newIsolated(t)
			ctx := context.Background()
			queueID := newID()
			insert := `
INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts,
                      state, visible_at)
SELECT $1, gen_random_uuid(), 1 + i % 3, 'x', now() + interval '1 day' + i * interval '1 millisecond', 30, 5, $3,
       now() + interval '30 seconds'
FROM generate_series(1, $2) AS i`
			_, err := s.pool.Exec(ctx, insert, newID(), before.rows, before.state)
			is.NoErr(err)
			if before.analyzed {
				_, err = s.pool.Exec(ctx, "ANALYZE messages")
				is.NoErr(err)
			}
			tx, err := s.pool.Begin(ctx)
			is.NoErr(err)
			defer tx.Rollback(ctx)
			_, err = tx.Exec(ctx, "PREPARE measured AS "+postgres.DeleteExpiredStatement)
			is.NoErr(err)
			arguments := fmt.Sprintf("'%s', 1000", queueID)
			_, err = tx.Exec(ctx, "EXECUTE measured("+arguments+")") // planned, and the plan cached, now
			is.NoErr(err)
			_, err = tx.Exec(ctx, insert, queueID, 40000, 0) // then a backlog arrives, before any ANALYZE
			is.NoErr(err)
			var plan string
			is.NoErr(tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured("+arguments+")").Scan(&plan))
			buffers := postgres.SharedBuffers(t, plan)
			t.Logf("expired-message cleaner over 40,000 unexpired messages: %d buffers", buffers)
			is.True(buffers < 100) // it reads the expired ranges of the expiry indexes, not the queue's 40,000 messages
		})
	}
}

// Statistics that an ANALYZE took while a backlog was being inserted (autovacuum's, during
// a producer's burst) count only the rows committed then: here one message in each of 100
// queues. Planned from them, with the backlog's index entries already there, the claim and
// the expired-message cleaner once estimated one row for the queue, took messages_pkey for
// `queue_id = $1` and sorted what it returned: a claim then read the whole queue, 20,000
// messages here (about 20,000 buffers), and the cleaner twice (40,000), as the lifecycle
// benchmark's cleaner did for seconds over a million. The pool's enable_sort = off leaves
// them the indexes that give their order.
func TestPlannedFromStatisticsTakenDuringABacklog_ReadIndexesInOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	insert := `
INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts)
SELECT CASE WHEN $3 = 1 THEN $1::uuid ELSE md5($1::uuid::text || i % $3)::uuid END, gen_random_uuid(), 1 + i % 3, 'x',
       now() + interval '1 day' + i * interval '1 millisecond', 30, 5
FROM generate_series(1, $2) AS i`
	_, err := s.pool.Exec(ctx, insert, newID(), 100, 100) // 100 other queues of one message
	is.NoErr(err)
	burst, err := s.pool.Begin(ctx)
	is.NoErr(err)
	defer burst.Rollback(ctx)
	_, err = burst.Exec(ctx, insert, queueID, 20000, 1) // a producer's burst, under way
	is.NoErr(err)
	_, err = s.pool.Exec(ctx, "ANALYZE messages") // autovacuum's ANALYZE meanwhile
	is.NoErr(err)
	is.NoErr(burst.Commit(ctx))

	claim := s.claimBuffers(t, queueID, 10)
	cleaner := s.statementBuffers(t, postgres.DeleteExpiredStatement, fmt.Sprintf("'%s', 1000", queueID))
	t.Logf("over a backlog of 20,000 messages: a claim of 10 %d buffers, the expired-message cleaner %d", claim, cleaner)
	is.True(claim < 500)   // the claim reads the head of the queue's line, not the queue
	is.True(cleaner < 100) // the cleaner reads the expired ranges of the expiry indexes
}

// A plan that keeps a disabled node (the pool's enable_sort = off leaves the sorts that no
// index can replace, as the enqueue's of its requests) carries a cost of 10^10, past every
// JIT threshold: with jit on, PostgreSQL compiled the enqueue of two messages for close to a
// second, each time. SharedBuffers fails a plan that was compiled.
func TestEnqueueStatement_IsNotCompiled(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	arguments := fmt.Sprintf(`ARRAY['%s']::uuid[], ARRAY[NULL]::text[], ARRAY[NULL]::bytea[], ARRAY[0]::float8[],
		ARRAY[1, 1]::bigint[], ARRAY['%s', '%s']::uuid[], ARRAY[1, 2]::smallint[], ARRAY['a', 'b']::bytea[],
		ARRAY[NULL, NULL]::bytea[], ARRAY[60, 60], ARRAY[0, 0], ARRAY[30, 30], ARRAY[5, 5]`, newID(), newID(), newID())
	buffers := s.statementBuffers(t, postgres.InsertStatement, arguments) // fails if compiled
	t.Logf("the enqueue of two messages: %d buffers", buffers)
	is.True(buffers > 0) // it was explained and run
}

func TestDeleteDeadLetters_CostDoesNotGrowWithRetainedDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	_, err := s.pool.Exec(ctx, `
INSERT INTO dead_letters (queue_id, id, priority, payload, delivery_attempts, enqueued_at, dead_lettered_at)
SELECT $1, gen_random_uuid(), 1, '\x00', 1, now(), now() FROM generate_series(1, 5000)`, queueID)
	is.NoErr(err)
	_, err = s.pool.Exec(ctx, "ANALYZE dead_letters")
	is.NoErr(err)
	buffers := s.statementBuffers(t, postgres.DeleteDeadLettersStatement, fmt.Sprintf("'%s', 3600, 1000", queueID), "enable_seqscan = off")
	is.True(buffers < 20) // the statement reads the old range of the index only, not the 5,000 retained dead letters
}

func TestDeleteQueueData_RowHeldByAnother_TriedAgainFromItsBatch(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	var held domain.Enqueue
	for i := range 5 {
		e := newEnqueue(queueID, domain.PriorityLow, fmt.Sprintf("doomed %d", i))
		is.NoErr(enqueueOne(s.store, e))
		if i == 3 {
			held = e
		}
	}
	tx, err := s.pool.Begin(ctx)
	is.NoErr(err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SELECT 1 FROM messages WHERE queue_id = $1 AND id = $2 FOR UPDATE", queueID, held.MessageID)
	is.NoErr(err) // a round racing the deletion holds one row

	deleted, cursor, err := s.store.DeleteQueueData(ctx, queueID, ports.QueueDataCursor{}, 100)
	is.NoErr(err)         // the batch that met it is left for later, no error
	is.Equal(deleted, 0)  // nothing of that batch went
	is.True(!cursor.Done) // and the queue is not done
	is.NoErr(tx.Rollback(ctx))

	deleted, cursor, err = s.store.DeleteQueueData(ctx, queueID, cursor, 100)
	is.NoErr(err)
	is.Equal(deleted, 5) // the next pass deletes it all, the held row included
	is.True(cursor.Done)
	var left int
	is.NoErr(s.pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE queue_id = $1", queueID).Scan(&left))
	is.Equal(left, 0)
}
