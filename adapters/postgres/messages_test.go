package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// The tests in this file drive the coalesced MessageStore with many concurrent callers, so
// that its statements carry batches of several requests and of several queues.

func newMessageStore(t *testing.T, o postgres.MessageStoreOptions) *postgres.MessageStore {
	store := postgres.NewMessageStore(pool, o)
	t.Cleanup(store.Close)
	return store
}

func newID() domain.ID { return domain.ID(uuid.Must(uuid.NewV7())) }

// enqueueOne, dequeueOne and acknowledgeOne call the store with one message, receipt or
// delivery.
func enqueueOne(store *postgres.MessageStore, e domain.Enqueue) error {
	_, err := store.Enqueue(context.Background(), ports.EnqueueParams{QueueID: e.QueueID, Messages: []domain.Enqueue{e}})
	return err
}

func dequeueOne(store *postgres.MessageStore, queueID domain.ID) (ports.Dequeued, error) {
	return store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})
}

func acknowledgeOne(store *postgres.MessageStore, queueID domain.ID, d domain.Delivery) (bool, error) {
	removed, err := store.Acknowledge(context.Background(), queueID, []domain.Receipt{d.Receipt()})
	return len(removed) == 1 && removed[0], err
}

func newEnqueue(queueID domain.ID, p domain.Priority, payload string) domain.Enqueue {
	return domain.Enqueue{
		QueueID: queueID, MessageID: newID(), Priority: p, Payload: payload,
		TTL: time.Minute, VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 5,
	}
}

// enqueued is an enqueue as its caller saw it.
type enqueued struct {
	message      domain.Enqueue
	sent, stored time.Time
}

// dequeued is a delivery as its caller saw it.
type dequeued struct {
	queueID        domain.ID
	delivery       domain.Delivery
	sent, returned time.Time
}

func TestMessageStore_ConcurrentCallers_KeepOrderAndNeverDuplicate(t *testing.T) {
	t.Parallel()
	for _, rounds := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d rounds in flight", rounds), func(t *testing.T) {
			t.Parallel()
			testConcurrentCallers(t, newMessageStore(t, postgres.MessageStoreOptions{RoundsInFlight: rounds}))
		})
	}
}

// testConcurrentCallers has producers and consumers work on three queues at once, then
// checks every delivery against the order and uniqueness rules.
func testConcurrentCallers(t *testing.T, store *postgres.MessageStore) {
	is := is.New(t)
	queues := []domain.ID{newID(), newID(), newID()}
	const producers, consumers, perProducer = 8, 8, 100
	var mu sync.Mutex
	sent := map[domain.ID]enqueued{}
	var deliveries []dequeued
	var producing, consuming sync.WaitGroup
	for p := range producers {
		producing.Go(func() {
			for i := range perProducer {
				e := newEnqueue(queues[(p+i)%len(queues)], domain.Priorities[(p*7+i)%3], "work")
				start := time.Now()
				if err := enqueueOne(store, e); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				sent[e.MessageID] = enqueued{e, start, time.Now()}
				mu.Unlock()
			}
		})
	}
	done := make(chan struct{})
	stopConsumers := sync.OnceFunc(func() {
		close(done)
		consuming.Wait()
	})
	defer stopConsumers() // also when an assertion fails, before the test returns
	for c := range consumers {
		consuming.Go(func() {
			for i := c; ; i++ {
				d, ok := dequeueAndAcknowledge(t, store, queues[i%len(queues)])
				if ok {
					mu.Lock()
					deliveries = append(deliveries, d)
					mu.Unlock()
					continue
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	producing.Wait()
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(deliveries) >= producers*perProducer })
	stopConsumers()

	is.Equal(len(sent), producers*perProducer) // every enqueue succeeded
	seen := map[domain.ID]bool{}
	for _, d := range deliveries {
		is.True(!seen[d.delivery.MessageID]) // no message is delivered twice
		seen[d.delivery.MessageID] = true
		_, known := sent[d.delivery.MessageID]
		is.True(known) // and every delivery is of a message enqueued here
	}
	is.Equal(len(seen), producers*perProducer) // every message is delivered
	checkDeliveryOrder(t, sent, deliveries)
	for _, q := range queues {
		result, err := dequeueOne(store, q)
		is.NoErr(err)
		is.True(!(len(result.Deliveries) == 1)) // every message was acknowledged: the queues are empty
	}
}

// dequeueAndAcknowledge dequeues from queueID and acknowledges what it got.
func dequeueAndAcknowledge(t *testing.T, store *postgres.MessageStore, queueID domain.ID) (dequeued, bool) {
	start := time.Now()
	result, err := dequeueOne(store, queueID)
	if err != nil || !(len(result.Deliveries) == 1) {
		if err != nil {
			t.Error(err)
		}
		return dequeued{}, false
	}
	d := dequeued{queueID, result.Deliveries[0], start, time.Now()}
	removed, err := acknowledgeOne(store, queueID, d.delivery)
	if err != nil || !removed {
		t.Errorf("acknowledge %s: removed %v, %v", d.delivery.MessageID, removed, err)
	}
	return d, true
}

// checkDeliveryOrder fails when a dequeue got a message although a better one was surely
// available: one of the same queue, stored before that dequeue was sent, ahead in delivery
// order (higher priority, or the same priority and stored before the other was sent), and
// delivered only by a dequeue sent after the first one returned.
func checkDeliveryOrder(t *testing.T, sent map[domain.ID]enqueued, deliveries []dequeued) {
	t.Helper()
	for _, a := range deliveries {
		ma := sent[a.delivery.MessageID]
		for _, b := range deliveries {
			mb := sent[b.delivery.MessageID]
			if a.queueID != b.queueID || !a.returned.Before(b.sent) || !mb.stored.Before(a.sent) {
				continue
			}
			if surelyAhead(mb, ma) {
				t.Fatalf("dequeue got %s (%v) while %s (%v), ahead of it, was ready",
					ma.message.MessageID, ma.message.Priority, mb.message.MessageID, mb.message.Priority)
			}
		}
	}
}

// surelyAhead reports whether x comes before y in delivery order whatever the timing.
func surelyAhead(x, y enqueued) bool {
	if x.message.Priority != y.message.Priority {
		return x.message.Priority < y.message.Priority
	}
	return x.stored.Before(y.sent)
}

func waitUntil(t *testing.T, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMessageStore_ConcurrentDequeues_MoveExhaustedMessagesAndGoOn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	for range 3 {
		e := newEnqueue(queueID, domain.PriorityHigh, "poison")
		e.MaxDeliveryAttempts, e.VisibilityTimeout = 1, time.Second
		is.NoErr(enqueueOne(store, e))
	}
	results := dequeueConcurrently(t, store, queueID, 3)
	is.Equal(results.delivered, 3) // each poison message is delivered once
	time.Sleep(time.Second + 150*time.Millisecond)
	fresh := map[domain.ID]bool{}
	for range 2 {
		e := newEnqueue(queueID, domain.PriorityLow, "fine")
		fresh[e.MessageID] = true
		is.NoErr(enqueueOne(store, e))
	}
	results = dequeueConcurrently(t, store, queueID, 6)
	is.Equal(results.deadLettered, 3) // the exhausted messages are moved, each once
	is.Equal(results.delivered, 2)    // and the search goes on to the fresh ones
	for id := range results.ids {
		is.True(fresh[id]) // only the fresh messages are delivered
	}
}

// dequeueResults sums up concurrent dequeues.
type dequeueResults struct {
	delivered, deadLettered int
	ids                     map[domain.ID]bool
}

func dequeueConcurrently(t *testing.T, store *postgres.MessageStore, queueID domain.ID, n int) dequeueResults {
	var mu sync.Mutex
	results := dequeueResults{ids: map[domain.ID]bool{}}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			result, err := dequeueOne(store, queueID)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			results.deadLettered += result.DeadLettered
			if len(result.Deliveries) == 1 {
				results.delivered++
				results.ids[result.Deliveries[0].MessageID] = true
			}
		})
	}
	wg.Wait()
	return results
}

func TestMessageStore_ConcurrentAcknowledgementsOfOneDelivery_RemoveOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	is.NoErr(enqueueOne(store, newEnqueue(queueID, domain.PriorityHigh, "once")))
	result, err := dequeueOne(store, queueID)
	is.NoErr(err)
	d := result.Deliveries[0]
	var mu sync.Mutex
	removals := 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			removed, err := acknowledgeOne(store, queueID, d)
			if err != nil {
				t.Error(err)
			}
			if removed {
				mu.Lock()
				removals++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	is.Equal(removals, 1) // exactly one acknowledgement removed the message
}

func TestMessageStore_Closed_RefusesRequests(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := postgres.NewMessageStore(pool, postgres.MessageStoreOptions{})
	store.Close()
	err := enqueueOne(store, newEnqueue(newID(), domain.PriorityHigh, "late"))
	is.Equal(domain.ErrorCode(err), domain.CodeUnavailable) // a closed store answers service_unavailable
}

func TestRound_GivesTheBestMessageToTheEarliestDequeue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	busy, quiet := newID(), newID()
	low, high, medium := newEnqueue(busy, domain.PriorityLow, "low"),
		newEnqueue(busy, domain.PriorityHigh, "high"), newEnqueue(busy, domain.PriorityMedium, "medium")
	other := newEnqueue(quiet, domain.PriorityLow, "other")
	_, _, err := postgres.Round(store, context.Background(), []postgres.Operation{
		postgres.Enqueueing(low), postgres.Enqueueing(high), postgres.Enqueueing(medium), postgres.Enqueueing(other)})
	is.NoErr(err)
	dequeued, _, err := postgres.Round(store, context.Background(), []postgres.Operation{
		postgres.Dequeueing(busy), postgres.Dequeueing(quiet), postgres.Dequeueing(busy),
		postgres.Dequeueing(busy), postgres.Dequeueing(busy)})
	is.NoErr(err)
	is.Equal(dequeued[0].Deliveries[0].MessageID, high.MessageID)   // the earliest dequeue gets the best message
	is.Equal(dequeued[1].Deliveries[0].MessageID, other.MessageID)  // another queue's dequeue gets its own queue's
	is.Equal(dequeued[2].Deliveries[0].MessageID, medium.MessageID) // the next dequeue of the busy queue the next best
	is.Equal(dequeued[3].Deliveries[0].MessageID, low.MessageID)
	is.True(!(len(dequeued[4].Deliveries) == 1)) // and a dequeue beyond the queue's messages gets nothing
}

func TestRound_KeepsEnqueueOrderAndServesDequeuesOfTheSameRound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	var batch []postgres.Operation
	var enqueues []domain.Enqueue
	for range 3 {
		e := newEnqueue(queueID, domain.PriorityMedium, "same priority")
		enqueues = append(enqueues, e)
		batch = append(batch, postgres.Enqueueing(e), postgres.Dequeueing(queueID))
	}
	dequeued, _, err := postgres.Round(store, context.Background(), batch)
	is.NoErr(err)
	for i, e := range enqueues {
		is.Equal(dequeued[2*i+1].Deliveries[0].MessageID, e.MessageID) // messages of one round come in round order, to its own dequeues too
	}
}

func TestRound_RepeatedAcknowledgement_RemovesOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	is.NoErr(enqueueOne(store, newEnqueue(queueID, domain.PriorityHigh, "once")))
	result, err := dequeueOne(store, queueID)
	is.NoErr(err)
	_, removed, err := postgres.Round(store, context.Background(), []postgres.Operation{
		postgres.Acknowledging(newID(), result.Deliveries[0]),
		postgres.Acknowledging(queueID, result.Deliveries[0]),
		postgres.Acknowledging(queueID, result.Deliveries[0])})
	is.NoErr(err)
	is.Equal(removed, []bool{false, true, false}) // the first matching acknowledgement removed it, the others nothing
}

func TestRound_FailedStatement_FailsTheWholeRound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	is.NoErr(enqueueOne(store, newEnqueue(queueID, domain.PriorityHigh, "delivered")))
	result, err := dequeueOne(store, queueID)
	is.NoErr(err)
	duplicate := newEnqueue(queueID, domain.PriorityLow, "twice")
	_, _, err = postgres.Round(store, context.Background(), []postgres.Operation{
		postgres.Acknowledging(queueID, result.Deliveries[0]),
		postgres.Enqueueing(duplicate), postgres.Enqueueing(duplicate)})
	is.True(err != nil) // a message ID used twice fails the insert, and so the round
	removed, err := acknowledgeOne(store, queueID, result.Deliveries[0])
	is.NoErr(err)
	is.True(removed) // the acknowledgement of the failed round was rolled back with it
}

func TestRounds_OfEveryInstance_TakeTheirSlotsLock(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	other := postgres.NewMessageStore(s.pool, postgres.MessageStoreOptions{}) // another instance
	t.Cleanup(other.Close)
	conn, err := s.pool.Acquire(context.Background())
	is.NoErr(err)
	defer conn.Release()
	class, slot := postgres.RoundLockKeys(0)
	_, err = conn.Exec(context.Background(), "SELECT pg_advisory_lock("+postgres.RoundLockArguments+")", class, slot)
	is.NoErr(err)
	done := make(chan error, 2)
	for _, store := range []*postgres.MessageStore{s.store, other} {
		go func() { done <- enqueueOne(store, newEnqueue(newID(), domain.PriorityLow, "waits its turn")) }()
	}
	select {
	case err := <-done:
		t.Fatalf("a round ran while another transaction held its slot's lock (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	_, err = conn.Exec(context.Background(), "SELECT pg_advisory_unlock("+postgres.RoundLockArguments+")", class, slot)
	is.NoErr(err)
	is.NoErr(<-done) // once the lock is free, the rounds of both instances run,
	is.NoErr(<-done) // one after the other
}

func TestRounds_AfterWaitingForTheirLock_GatherTheRequestsOfTheWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	conn, err := s.pool.Acquire(context.Background())
	is.NoErr(err)
	defer conn.Release()
	class, slot := postgres.RoundLockKeys(0)
	hold := func() {
		_, err := conn.Exec(context.Background(), "SELECT pg_advisory_lock("+postgres.RoundLockArguments+")", class, slot)
		is.NoErr(err)
	}
	free := func() {
		_, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock("+postgres.RoundLockArguments+")", class, slot)
		is.NoErr(err)
	}
	queueID := newID()
	// Another instance's round holds the lock: this instance's round waits for it.
	hold()
	first := make(chan error, 1)
	go func() { first <- enqueueOne(s.store, newEnqueue(queueID, domain.PriorityLow, "waited")) }()
	time.Sleep(100 * time.Millisecond)
	free()
	is.NoErr(<-first)
	// The lock is taken again; the next round waits for it, and the requests that arrive
	// meanwhile go with it, not in a round of their own after it.
	hold()
	before := postgres.RoundsRun(s.store)
	done := make(chan error, 4)
	enqueue := func(payload string) {
		go func() { done <- enqueueOne(s.store, newEnqueue(queueID, domain.PriorityLow, payload)) }()
	}
	enqueue("leaves first")
	time.Sleep(200 * time.Millisecond) // its round waits for the lock
	for _, p := range []string{"a", "b", "c"} {
		enqueue("arrives during the wait " + p)
	}
	time.Sleep(100 * time.Millisecond)
	free()
	for range 4 {
		is.NoErr(<-done)
	}
	is.Equal(postgres.RoundsRun(s.store)-before, int64(1)) // one round carried all four
	got, err := s.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 10})
	is.NoErr(err)
	is.Equal(len(got.Deliveries), 5) // and stored them, with the first
}

func TestRounds_BackToBack_TakeTheirLockBeforeTheirBatch(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	ctx := context.Background()
	queueID := newID()
	for i := range 3 {
		is.NoErr(enqueueOne(s.store, newEnqueue(queueID, domain.PriorityHigh, fmt.Sprint("first ", i))))
	}
	d, err := dequeueOne(s.store, queueID)
	is.NoErr(err)
	is.Equal(len(d.Deliveries), 1)

	// A round held up in the database (its acknowledgement waits for the message's row) while
	// three requests arrive.
	row, err := s.pool.Begin(ctx)
	is.NoErr(err)
	defer row.Rollback(ctx)
	_, err = row.Exec(ctx, "SELECT 1 FROM messages WHERE id = $1 FOR UPDATE", d.Deliveries[0].MessageID)
	is.NoErr(err)
	before := postgres.RoundsRun(s.store)
	acked := make(chan error, 1)
	go func() {
		_, err := acknowledgeOne(s.store, queueID, d.Deliveries[0])
		acked <- err
	}()
	awaitCondition(t, "the acknowledgement's round left", func() bool { return postgres.RoundsRun(s.store) > before })
	gatedBefore := s.store.RoundStats().Gated
	done := make(chan error, 4)
	enqueue := func(payload string) {
		go func() { done <- enqueueOne(s.store, newEnqueue(queueID, domain.PriorityLow, payload)) }()
	}
	for i := range 3 {
		enqueue(fmt.Sprint("waits ", i))
	}
	awaitCondition(t, "three requests wait", func() bool { return postgres.WaitingRequests(s.store) == 3 })

	// The slot's lock is asked for by another transaction, queued behind the held round, so
	// that it holds the lock when the round ends.
	other, err := s.pool.Begin(ctx)
	is.NoErr(err)
	defer other.Rollback(ctx)
	var otherPID int32
	is.NoErr(other.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&otherPID))
	class, slot := postgres.RoundLockKeys(0)
	locked := make(chan error, 1)
	go func() {
		_, err := other.Exec(ctx, "SELECT pg_advisory_xact_lock("+postgres.RoundLockArguments+")", class, slot)
		locked <- err
	}()
	awaitCondition(t, "the other transaction waits for the lock", func() bool {
		var waits bool
		err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND NOT granted)",
			otherPID).Scan(&waits)
		return err == nil && waits
	})
	is.NoErr(row.Commit(ctx))
	is.NoErr(<-acked)
	is.NoErr(<-locked)

	// The round that follows takes the lock before its batch: it waits for the lock with the
	// three still waiting, and a fourth that arrives meanwhile goes with them.
	waitForBlockedBy(t, s, otherPID)
	enqueue("arrives while the round waits for its lock")
	awaitCondition(t, "four requests wait", func() bool { return postgres.WaitingRequests(s.store) == 4 })
	is.NoErr(other.Commit(ctx))
	for range 4 {
		is.NoErr(<-done)
	}
	is.Equal(s.store.RoundStats().Gated-gatedBefore, int64(1)) // one gated round
	is.Equal(postgres.RoundsRun(s.store)-before, int64(2))     // carried the four
	got, err := s.store.Dequeue(ctx, ports.DequeueParams{QueueID: queueID, Max: 10})
	is.NoErr(err)
	is.Equal(len(got.Deliveries), 6) // two of the first, and the four
}

func TestRound_KeysOfDifferentRetentions_EachExpiresAfterItsOwn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queueID := newID()
	short := &ports.IdempotencyKey{Key: "short-" + newID().String(), Fingerprint: domain.Fingerprint{1}, Retention: time.Second}
	long := &ports.IdempotencyKey{Key: "long-" + newID().String(), Fingerprint: domain.Fingerprint{2}, Retention: time.Hour}
	_, _, err := postgres.Round(store, context.Background(), []postgres.Operation{
		postgres.EnqueueingWithKey(newEnqueue(queueID, domain.PriorityLow, "short"), short),
		postgres.EnqueueingWithKey(newEnqueue(queueID, domain.PriorityLow, "long"), long),
	})
	is.NoErr(err)
	time.Sleep(time.Second + 200*time.Millisecond)
	retry := *short
	retry.Fingerprint = domain.Fingerprint{3}
	enqueued, err := store.Enqueue(context.Background(), ports.EnqueueParams{QueueID: queueID,
		Messages: []domain.Enqueue{newEnqueue(queueID, domain.PriorityLow, "another")}, Key: &retry})
	is.NoErr(err)               // the short key expired after its own second, not the round's longest retention
	is.True(!enqueued.Replayed) // and a new request with it stores
	other := *long
	other.Fingerprint = domain.Fingerprint{4}
	_, err = store.Enqueue(context.Background(), ports.EnqueueParams{QueueID: queueID,
		Messages: []domain.Enqueue{newEnqueue(queueID, domain.PriorityLow, "not again")}, Key: &other})
	is.True(errors.Is(err, domain.ErrIdempotencyKeyReused)) // while the long one still holds
}

func TestRounds_ApplicationsSingleKeyAdvisoryLocks_DoNotBlockThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	conn, err := s.pool.Acquire(context.Background())
	is.NoErr(err)
	defer conn.Release()
	class, slot := postgres.RoundLockKeys(0)
	// An application's own locks with the single bigint key, on the numbers Retsu's keys
	// are made of: the class ID in the high half and the slot in the low, or either alone.
	singleKeys := []int64{int64(class)<<32 | int64(slot), int64(class), int64(slot), 0x7265747375000000}
	for _, key := range singleKeys {
		_, err = conn.Exec(context.Background(), "SELECT pg_advisory_lock($1)", key)
		is.NoErr(err)
	}
	defer func() {
		_, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock_all()")
	}()
	done := make(chan error, 1)
	go func() { done <- enqueueOne(s.store, newEnqueue(newID(), domain.PriorityLow, "not held up")) }()
	select {
	case err := <-done:
		is.NoErr(err) // the round runs: Retsu's locks live in the two-key space, under a class ID of its own
	case <-time.After(5 * time.Second):
		t.Fatal("a round waited for an application's single-key advisory lock")
	}
}
