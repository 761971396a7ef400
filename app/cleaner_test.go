package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// cleanerSetup is a service and cleaners over memory stores on a manual clock.
type cleanerSetup struct {
	clock    *memory.ManualClock
	queues   *memory.QueueStore
	service  *app.Service
	messages *countingStore
	cleaners *app.Cleaners
	logs     *bytes.Buffer
}

// setupCleaners returns cleaners with settings that count in metrics (nil: nowhere).
func setupCleaners(t *testing.T, settings app.CleanerSettings, metrics ports.Metrics) *cleanerSetup {
	t.Helper()
	clock := memory.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	queues := memory.NewQueueStore(memory.QueueStoreOptions{Clock: clock})
	messages := &countingStore{MessageStore: memory.NewMessageStore(memory.MessageStoreOptions{Clock: clock, Queues: queues})}
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	return &cleanerSetup{
		clock:  clock,
		queues: queues,
		service: app.NewService(app.Ports{Queues: queues, Messages: messages, Cache: memory.NewQueueCache(memory.QueueCacheOptions{Clock: clock})},
			app.Options{IdempotencyRetention: settings.IdempotencyRetention}),
		messages: messages,
		cleaners: app.NewCleaners(app.Ports{Queues: queues, Messages: messages, Clock: clock, Logger: log, Metrics: metrics}, settings),
		logs:     logs,
	}
}

var defaultCleanerSettings = app.CleanerSettings{Interval: time.Second, BatchSize: 1000, DeadLetterRetention: 336 * time.Hour}

// countingStore records the rows each cleaning statement deleted, and fails the calls it
// is told to.
type countingStore struct {
	*memory.MessageStore
	mu           sync.Mutex
	expiredCalls []int
	// queueDataCalls are the rows each DeleteQueueData deleted, and queueDataQueues the
	// queue of each.
	queueDataCalls  []int
	queueDataQueues []domain.ID
	failNext        error
	// clock and batchTakes, when set, make each DeleteExpired take batchTakes of clock.
	clock      *memory.ManualClock
	batchTakes time.Duration
}

func (s *countingStore) expired() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.expiredCalls)
}

func (s *countingStore) DeleteQueueData(ctx context.Context, queueID domain.ID, from ports.QueueDataCursor, limit int) (int, ports.QueueDataCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, next, err := s.MessageStore.DeleteQueueData(ctx, queueID, from, limit)
	s.queueDataCalls = append(s.queueDataCalls, n)
	s.queueDataQueues = append(s.queueDataQueues, queueID)
	return n, next, err
}

func (s *countingStore) DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return 0, err
	}
	n, err := s.MessageStore.DeleteExpired(ctx, queueID, limit)
	s.expiredCalls = append(s.expiredCalls, n)
	if s.batchTakes > 0 {
		s.clock.Advance(s.batchTakes)
	}
	return n, err
}

func (c *cleanerSetup) queue(t *testing.T, name string, settings domain.SettingsUpdate) domain.Queue {
	t.Helper()
	q, err := c.service.CreateQueue(context.Background(), domain.NewQueue{Name: name, SettingsUpdate: settings})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func (c *cleanerSetup) enqueue(t *testing.T, q domain.Queue, ttl time.Duration) {
	t.Helper()
	if _, err := c.service.Enqueue(context.Background(), q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityLow, TTL: &ttl}); err != nil {
		t.Fatal(err)
	}
}

func (c *cleanerSetup) stats(t *testing.T, q domain.Queue) (ready, inFlight, deadLettered int64) {
	t.Helper()
	s, err := c.service.Stats(context.Background(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Priorities {
		ready, inFlight, deadLettered = ready+p.Ready, inFlight+p.InFlight, deadLettered+p.DeadLettered
	}
	return ready, inFlight, deadLettered
}

func removed(passes []app.Pass, cleaner string) int {
	for _, p := range passes {
		if p.Cleaner == cleaner {
			return p.Removed
		}
	}
	return -1
}

func TestCleaners_ExpiredWaitingMessages_RemovedLiveOnesStay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, defaultCleanerSettings, nil)
	q := c.queue(t, "orders", domain.SettingsUpdate{})
	c.enqueue(t, q, time.Second)
	c.enqueue(t, q, time.Hour)
	c.clock.Advance(2 * time.Second)

	passes := c.cleaners.RunOnce(context.Background())
	is.Equal(removed(passes, app.ExpiredMessageCleaner), 1) // the expired message is deleted
	ready, _, _ := c.stats(t, q)
	is.Equal(ready, int64(1)) // the live one stays
}

func TestCleaners_ExpiredInFlightMessage_StaysUntilItsVisibilityTimeoutEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, defaultCleanerSettings, nil)
	ctx := context.Background()
	q := c.queue(t, "leases", domain.SettingsUpdate{VisibilityTimeout: new(10 * time.Second)})
	c.enqueue(t, q, time.Second)
	c.enqueue(t, q, time.Second)
	acknowledged, _, err := c.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	_, _, err = c.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	c.clock.Advance(5 * time.Second) // both expired, both in flight

	is.Equal(removed(c.cleaners.RunOnce(ctx), app.ExpiredMessageCleaner), 0) // an active delivery is never removed
	is.NoErr(c.service.Acknowledge(ctx, q.ID, acknowledged.MessageID, acknowledged.ReceiptHandle))
	_, inFlight, _ := c.stats(t, q)
	is.Equal(inFlight, int64(1)) // the acknowledgement removed its message; the other is still in flight

	c.clock.Advance(5 * time.Second)                                         // the other's visibility timeout ends
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.ExpiredMessageCleaner), 1) // then it is removed
}

func TestCleaners_DeadLetters_RemovedAfterRetention(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 10, DeadLetterRetention: 3 * time.Second}, nil)
	ctx := context.Background()
	q := c.queue(t, "poison", domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	deadLetter := func() {
		c.enqueue(t, q, time.Hour)
		_, _, err := c.service.Dequeue(ctx, q.ID)
		is.NoErr(err)
		c.clock.Advance(time.Second)
		_, ok, err := c.service.Dequeue(ctx, q.ID) // moves the exhausted message
		is.NoErr(err)
		is.True(!ok)
	}
	deadLetter()
	c.clock.Advance(time.Second)
	deadLetter()
	c.clock.Advance(500 * time.Millisecond) // the first is 2.5 s old, the second 0.5 s

	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeadLetterCleaner), 0) // both are younger than the retention
	c.clock.Advance(time.Second)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeadLetterCleaner), 1) // the first has outlived it
	_, _, deadLettered := c.stats(t, q)
	is.Equal(deadLettered, int64(1)) // the younger one stays
}

func TestCleaners_Backlog_DeletedInBoundedBatches(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 100, DeadLetterRetention: time.Hour}, nil)
	q := c.queue(t, "backlog", domain.SettingsUpdate{})
	for range 1050 {
		c.enqueue(t, q, time.Second)
	}
	c.clock.Advance(2 * time.Second)

	is.Equal(removed(c.cleaners.RunOnce(context.Background()), app.ExpiredMessageCleaner), 1050) // one pass clears the backlog
	is.Equal(len(c.messages.expiredCalls), 11)                                                   // in eleven statements
	for _, n := range c.messages.expiredCalls {
		is.True(n <= 100) // none deleting more than the batch size
	}
}

func TestCleaners_ManyQueues_AllCleaned(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, defaultCleanerSettings, nil)
	const queues = domain.MaxListLimit + 5 // more than one page of queues
	for i := range queues {
		c.enqueue(t, c.queue(t, fmt.Sprintf("q%04d", i), domain.SettingsUpdate{}), time.Second)
	}
	c.clock.Advance(2 * time.Second)
	is.Equal(removed(c.cleaners.RunOnce(context.Background()), app.ExpiredMessageCleaner), queues) // every page of queues is cleaned
}

func TestCleaners_FailedPass_IsLoggedAndRetried(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, defaultCleanerSettings, nil)
	q := c.queue(t, "flaky", domain.SettingsUpdate{})
	c.enqueue(t, q, time.Second)
	c.clock.Advance(2 * time.Second)
	c.messages.failNext = errors.New("connection reset by peer")

	is.Equal(removed(c.cleaners.RunOnce(context.Background()), app.ExpiredMessageCleaner), 0) // the failed pass removed nothing
	is.True(strings.Contains(c.logs.String(), "connection reset by peer"))                    // and logged why
	is.Equal(removed(c.cleaners.RunOnce(context.Background()), app.ExpiredMessageCleaner), 1) // the next pass does the work
}

func TestCleaners_Run_PassesUntilStopped(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: 10 * time.Millisecond, BatchSize: 10, DeadLetterRetention: time.Hour}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.cleaners.Run(ctx)
		close(done)
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	is.True(strings.Count(c.logs.String(), "cleaner pass") >= 4) // it passed on its interval
}

func TestCleaners_IdempotencyKeys_RemovedAfterRetention(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 10, DeadLetterRetention: time.Hour, IdempotencyRetention: time.Hour}, nil)
	q := c.queue(t, "keyed", domain.SettingsUpdate{})
	request := app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow}}, IdempotencyKey: "k"}
	_, err := c.service.EnqueueMessages(ctx, request)
	is.NoErr(err)

	c.clock.Advance(time.Hour - time.Second)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.IdempotencyKeyCleaner), 0) // a key within its retention is kept
	c.clock.Advance(time.Second)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.IdempotencyKeyCleaner), 1) // then removed

	request.Messages[0].Payload = "another request"
	enqueued, err := c.service.EnqueueMessages(ctx, request)
	is.NoErr(err) // the key is free for another request
	is.True(!enqueued.Replayed)
	ready, _, _ := c.stats(t, q)
	is.Equal(ready, int64(2)) // and the first request's message stays
}

func TestCleaners_IdempotencyKeys_DefaultRetentionIsADay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, defaultCleanerSettings, nil)
	q := c.queue(t, "keyed", domain.SettingsUpdate{})
	_, err := c.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow}}, IdempotencyKey: "k"})
	is.NoErr(err)

	c.clock.Advance(23 * time.Hour)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.IdempotencyKeyCleaner), 0) // kept for a day by default
	c.clock.Advance(time.Hour)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.IdempotencyKeyCleaner), 1) // and no longer
}

func TestCleaners_DeletedQueue_DataRemovedInBoundedBatches_RecordForgottenAfterGrace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 100, DeadLetterRetention: time.Hour}, nil)
	gone := c.queue(t, "gone", domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	kept := c.queue(t, "kept", domain.SettingsUpdate{})
	c.enqueue(t, gone, time.Hour)
	_, _, err := c.service.Dequeue(ctx, gone.ID)
	is.NoErr(err)
	c.clock.Advance(time.Second)
	_, _, err = c.service.Dequeue(ctx, gone.ID) // one dead letter
	is.NoErr(err)
	for range 250 {
		c.enqueue(t, gone, time.Hour)
	}
	_, err = c.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: gone.ID, Messages: []domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow}}, IdempotencyKey: "k"})
	is.NoErr(err) // a key, and a message more
	c.enqueue(t, kept, time.Hour)
	is.NoErr(c.service.DeleteQueue(ctx, gone.ID))

	passes := c.cleaners.RunOnce(ctx)

	is.Equal(removed(passes, app.DeletedQueueCleaner), 1+251+1) // the dead letter, the messages and the key
	is.Equal(len(c.messages.queueDataCalls), 3)                 // in statements of at most the batch size
	for _, n := range c.messages.queueDataCalls {
		is.True(n <= 100)
	}
	ready, _, _ := c.stats(t, kept)
	is.Equal(ready, int64(1)) // the live queue keeps its messages
	deleted, err := c.queues.DeletedQueues(ctx, domain.ID{}, 10)
	is.NoErr(err)
	is.Equal(len(deleted), 1) // the deletion is still recorded during its grace
	_, err = c.messages.Enqueue(ctx, ports.EnqueueParams{QueueID: gone.ID, Messages: []domain.Enqueue{{QueueID: gone.ID, MessageID: domain.ID{1}, Priority: domain.PriorityLow, TTL: time.Hour, VisibilityTimeout: time.Second, MaxDeliveryAttempts: 1}}})
	is.True(errors.Is(err, domain.ErrQueueNotFound)) // so the store still refuses a straggler's message

	c.clock.Advance(time.Hour - time.Second)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeletedQueueCleaner), 0)
	is.Equal(len(c.messages.queueDataCalls), 3) // the emptied queue is not searched again
	deleted, err = c.queues.DeletedQueues(ctx, domain.ID{}, 10)
	is.NoErr(err)
	is.Equal(len(deleted), 1) // kept until the grace of an hour is over
	c.clock.Advance(time.Second)
	c.cleaners.RunOnce(ctx)
	deleted, err = c.queues.DeletedQueues(ctx, domain.ID{}, 10)
	is.NoErr(err)
	is.Equal(len(deleted), 0) // then forgotten
}

// setupDeletedQueue returns cleaners, their queue "gone" deleted with messages left in it,
// and the cleaners of another process on the same stores.
func setupDeletedQueue(t *testing.T, messages int) (*cleanerSetup, *app.Cleaners) {
	t.Helper()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 100, DeadLetterRetention: time.Hour}, nil)
	gone := c.queue(t, "gone", domain.SettingsUpdate{})
	for range messages {
		c.enqueue(t, gone, time.Hour)
	}
	if err := c.service.DeleteQueue(context.Background(), gone.ID); err != nil {
		t.Fatal(err)
	}
	return c, app.NewCleaners(app.Ports{Queues: c.queues, Messages: c.messages, Clock: c.clock}, defaultCleanerSettings)
}

func TestCleaners_DeletedQueue_EmptiedByAnotherProcess_CheckedOnceThenForgotten(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c, other := setupDeletedQueue(t, 1)
	is.Equal(removed(other.RunOnce(ctx), app.DeletedQueueCleaner), 1) // another instance's pass empties it

	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeletedQueueCleaner), 0)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeletedQueueCleaner), 0)
	is.Equal(len(c.messages.queueDataCalls), 1+1) // this process looks once, finds it done, and then no more
	c.clock.Advance(time.Hour)
	c.cleaners.RunOnce(ctx)
	deleted, err := c.queues.DeletedQueues(ctx, domain.ID{}, 10)
	is.NoErr(err)
	is.Equal(len(deleted), 0) // its record is still forgotten after the grace
}

func TestCleaners_DeletedQueue_ForgottenByAnotherProcess_ForgottenHereToo(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c, other := setupDeletedQueue(t, 0)
	c.cleaners.RunOnce(ctx) // this process sees it emptied
	c.clock.Advance(time.Hour)
	other.RunOnce(ctx) // another forgets its record
	c.cleaners.RunOnce(ctx)
	is.Equal(app.EmptiedQueues(c.cleaners), 0) // and this process no longer holds it in memory
}

func TestCleaners_DeletedQueue_EmptyQueueForgottenAfterGrace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, defaultCleanerSettings, nil)
	q := c.queue(t, "empty", domain.SettingsUpdate{})
	is.NoErr(c.service.DeleteQueue(ctx, q.ID))
	c.clock.Advance(time.Hour)

	passes := c.cleaners.RunOnce(ctx)

	is.Equal(removed(passes, app.DeletedQueueCleaner), 0) // nothing to remove
	deleted, err := c.queues.DeletedQueues(ctx, domain.ID{}, 10)
	is.NoErr(err)
	is.Equal(len(deleted), 0) // and the record of an old deletion is forgotten
}

func TestCleaners_ZeroSettings_TakeTheDefaults(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{}, nil)
	is.Equal(c.cleaners.Settings(), app.CleanerSettings{
		Interval:             app.DefaultCleanupInterval,
		BatchSize:            app.DefaultCleanupBatchSize,
		DeadLetterRetention:  app.DefaultDeadLetterRetention,
		Rest:                 app.DefaultCleanupRest,
		IdempotencyRetention: domain.DefaultIdempotencyRetention,
	}) // every unset setting takes its documented default
	is.Equal(app.DefaultCleanupInterval, 30*time.Second)    // RETSU_CLEANUP_INTERVAL's default
	is.Equal(app.DefaultCleanupBatchSize, 1000)             // RETSU_CLEANUP_BATCH_SIZE's default
	is.Equal(app.DefaultDeadLetterRetention, 336*time.Hour) // RETSU_DEAD_LETTER_RETENTION's default
	is.Equal(app.DefaultCleanupRest, 1.0)                   // RETSU_CLEANUP_REST's default: half the time
	is.Equal(app.NewCleaners(app.Ports{}, app.CleanerSettings{Interval: -time.Second, BatchSize: -1, DeadLetterRetention: -time.Hour, Rest: -1}).Settings(),
		c.cleaners.Settings()) // negative ones too
}

func TestCleaners_FullBatches_RestBetweenThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 100, DeadLetterRetention: time.Hour, Rest: 2}, nil)
	q := c.queue(t, "backlog", domain.SettingsUpdate{})
	for range 250 {
		c.enqueue(t, q, time.Second)
	}
	c.clock.Advance(2 * time.Second)
	c.messages.clock, c.messages.batchTakes = c.clock, 100*time.Millisecond
	passes := make(chan []app.Pass)
	go func() { passes <- c.cleaners.RunOnce(context.Background()) }()
	resting := func(batches int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(c.messages.expired()) < batches || c.clock.Timers() == 0; {
			if time.Now().After(deadline) {
				t.Fatalf("no rest after batch %d: batches %v", batches, c.messages.expired())
			}
			time.Sleep(time.Millisecond)
		}
	}

	resting(1)
	c.clock.Advance(199 * time.Millisecond)
	is.Equal(c.clock.Timers(), 1)              // twice the 100 ms the batch took is not over
	is.Equal(c.messages.expired(), []int{100}) // and the next batch waits for it
	c.clock.Advance(time.Millisecond)
	resting(2)
	is.Equal(c.messages.expired(), []int{100, 100}) // then it runs, and rests in turn
	c.clock.Advance(200 * time.Millisecond)
	is.Equal(removed(<-passes, app.ExpiredMessageCleaner), 250) // the short last batch ends the pass
	is.Equal(c.messages.expired(), []int{100, 100, 50})
	is.Equal(c.clock.Timers(), 0) // with no rest after it
}

func TestCleaners_ZeroBatchSize_PassEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, DeadLetterRetention: time.Hour}, nil)
	q := c.queue(t, "unset-batch", domain.SettingsUpdate{})
	c.enqueue(t, q, time.Second)
	c.clock.Advance(2 * time.Second)
	done := make(chan []app.Pass)
	go func() { done <- c.cleaners.RunOnce(context.Background()) }()
	select {
	case passes := <-done:
		is.Equal(removed(passes, app.ExpiredMessageCleaner), 1) // the pass deletes and ends
	case <-time.After(5 * time.Second):
		t.Fatal("a pass with an unset batch size did not end")
	}
}

func TestCleaners_ZeroDeadLetterRetention_KeepsYoungDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 10}, nil)
	ctx := context.Background()
	q := c.queue(t, "poison", domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	c.enqueue(t, q, time.Hour)
	_, _, err := c.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	c.clock.Advance(time.Second)
	_, _, err = c.service.Dequeue(ctx, q.ID) // moves the exhausted message
	is.NoErr(err)
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeadLetterCleaner), 0) // an unset retention is 14 days, not zero
}

func TestCleaners_ZeroInterval_RunDoesNotPanic(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupCleaners(t, app.CleanerSettings{BatchSize: 10, DeadLetterRetention: time.Hour}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.cleaners.Run(ctx)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-done
	is.Equal(strings.Count(c.logs.String(), "msg=\"cleaner pass\""), 4) // one pass of each cleaner, then it waits the default interval
}

func TestCleaners_DeletedQueues_AHugeOneDoesNotHoldUpTheOthers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 10, DeadLetterRetention: time.Hour}, nil)
	huge, small := c.queue(t, "huge", domain.SettingsUpdate{}), c.queue(t, "small", domain.SettingsUpdate{})
	for range 55 {
		c.enqueue(t, huge, time.Hour)
	}
	c.enqueue(t, small, time.Hour)
	is.NoErr(c.service.DeleteQueue(ctx, huge.ID)) // deleted first
	c.clock.Advance(time.Second)
	is.NoErr(c.service.DeleteQueue(ctx, small.ID))

	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeletedQueueCleaner), 56) // one pass removes both queues' data
	firstOfSmall := slices.Index(c.messages.queueDataQueues, small.ID)
	is.True(firstOfSmall >= 0 && firstOfSmall <= 1) // the small queue's batch comes before the huge one's second
}

func TestCleaners_DeletedQueues_MoreThanAPage_AllCleaned(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	c := setupCleaners(t, defaultCleanerSettings, nil)
	const queues = domain.MaxListLimit + 5 // more than one page of deletions, all in their grace
	for i := range queues {
		q := c.queue(t, fmt.Sprintf("q%04d", i), domain.SettingsUpdate{})
		c.enqueue(t, q, time.Hour)
		is.NoErr(c.service.DeleteQueue(ctx, q.ID))
	}
	is.Equal(removed(c.cleaners.RunOnce(ctx), app.DeletedQueueCleaner), queues) // every page of deleted queues is cleaned
}
