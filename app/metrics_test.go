package app_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// monitored is a service over memory stores on a manual clock that reports to Metrics.
type monitored struct {
	clock   *memory.ManualClock
	service *app.Service
	metrics *prometheus.Metrics
	logs    *bytes.Buffer
}

// setupMonitored returns a monitored service over memory stores and the cache that cache
// makes; messages, when given, wraps the message store.
func setupMonitored(t *testing.T, cache func(ports.Clock) ports.QueueCache, messages func(ports.MessageStore) ports.MessageStore) *monitored {
	t.Helper()
	m := &monitored{
		clock:   memory.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		metrics: prometheus.New(),
		logs:    &bytes.Buffer{},
	}
	var store ports.MessageStore = memory.NewMessageStore(memory.MessageStoreOptions{Clock: m.clock})
	if messages != nil {
		store = messages(store)
	}
	m.service = app.NewService(app.Ports{
		Queues:   memory.NewQueueStore(memory.QueueStoreOptions{}),
		Messages: store,
		Cache:    cache(m.clock),
		Logger:   slog.New(slog.NewTextHandler(m.logs, nil)),
		Metrics:  m.metrics,
		Clock:    m.clock,
	}, app.Options{})
	return m
}

func memoryCache(lifetime time.Duration) func(ports.Clock) ports.QueueCache {
	return func(clock ports.Clock) ports.QueueCache {
		return memory.NewQueueCache(memory.QueueCacheOptions{Clock: clock, Lifetime: lifetime})
	}
}

func (m *monitored) scrape(t *testing.T) prometheustest.Families {
	t.Helper()
	return prometheustest.Scrape(t, m.metrics.Handler())
}

func TestServiceMetrics_CountEveryStepOfTheLifecycle(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	m := setupMonitored(t, memoryCache(0), nil)
	q, err := m.service.CreateQueue(ctx, domain.NewQueue{Name: "orders", SettingsUpdate: domain.SettingsUpdate{
		VisibilityTimeout: new(30 * time.Second), MaxDeliveryAttempts: new(2),
	}})
	is.NoErr(err)
	for _, p := range domain.Priorities {
		_, err := m.service.Enqueue(ctx, q.ID, domain.NewMessage{Payload: "x", Priority: p})
		is.NoErr(err)
	}
	dequeue := func() domain.Delivery {
		d, ok, err := m.service.Dequeue(ctx, q.ID)
		is.NoErr(err)
		is.True(ok) // a message is delivered
		return d
	}

	high := dequeue()
	is.NoErr(m.service.Acknowledge(ctx, q.ID, high.MessageID, high.ReceiptHandle))
	is.NoErr(m.service.Acknowledge(ctx, q.ID, high.MessageID, high.ReceiptHandle)) // a repeat removes nothing
	is.Equal(dequeue().Priority, domain.PriorityMedium)
	m.clock.Advance(31 * time.Second)
	is.Equal(dequeue().DeliveryAttempts, 2) // the MEDIUM one again, its last attempt
	m.clock.Advance(31 * time.Second)
	is.Equal(dequeue().Priority, domain.PriorityLow) // the MEDIUM one is dead-lettered on the way

	f := m.scrape(t)
	is.Equal(f.Value("retsu_messages_enqueued_total"), 3.0)        // three enqueued
	is.Equal(f.Value("retsu_messages_delivered_total"), 4.0)       // HIGH, MEDIUM twice, LOW
	is.Equal(f.Value("retsu_messages_redelivered_total"), 1.0)     // MEDIUM's second delivery
	is.Equal(f.Value("retsu_messages_dead_lettered_total"), 1.0)   // MEDIUM, exhausted
	is.Equal(f.Value("retsu_messages_acknowledged_total"), 1.0)    // HIGH, removed
	is.Equal(f.Value("retsu_acknowledgements_ignored_total"), 1.0) // the repeat
	is.Equal(f.Value("retsu_queue_cache_hits_total"), 9.0)         // 3 enqueues, 4 dequeues, 2 acknowledgements: the create filled the cache
	is.Equal(f.Value("retsu_queue_cache_misses_total"), 0.0)       // nothing missed

	s, err := m.service.Stats(ctx, q.ID)
	is.NoErr(err)
	is.Equal(s.Priorities[0], domain.PriorityStats{Priority: domain.PriorityHigh})                    // HIGH: acknowledged, gone
	is.Equal(s.Priorities[1], domain.PriorityStats{Priority: domain.PriorityMedium, DeadLettered: 1}) // MEDIUM: a dead letter
	is.Equal(s.Priorities[2], domain.PriorityStats{Priority: domain.PriorityLow, InFlight: 1})        // LOW: in flight
}

func TestServiceMetrics_CacheMissesWhenEntriesExpire(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	m := setupMonitored(t, memoryCache(time.Second), nil)
	q, err := m.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"})
	is.NoErr(err)

	_, err = m.service.Queue(ctx, q.ID) // cached by the create
	is.NoErr(err)
	m.clock.Advance(2 * time.Second)
	_, err = m.service.Queue(ctx, q.ID) // expired: read from the store, and cached again
	is.NoErr(err)
	_, err = m.service.Queue(ctx, q.ID)
	is.NoErr(err)

	f := m.scrape(t)
	is.Equal(f.Value("retsu_queue_cache_hits_total"), 2.0)     // before expiry and after the refill
	is.Equal(f.Value("retsu_queue_cache_misses_total"), 1.0)   // the read after expiry
	is.Equal(f.Value("retsu_queue_cache_failures_total"), 0.0) // an expired entry is no failure
}

// brokenCache fails every call, as Redis does while it is down.
type brokenCache struct{}

func (brokenCache) Queue(context.Context, domain.ID) (domain.Queue, bool, error) {
	return domain.Queue{}, false, errors.New("redis: connection refused")
}
func (brokenCache) Fill(context.Context, domain.Queue) error {
	return errors.New("redis: connection refused")
}
func (brokenCache) Store(context.Context, domain.Queue) error {
	return errors.New("redis: connection refused")
}
func (brokenCache) Delete(context.Context, domain.ID) error {
	return errors.New("redis: connection refused")
}

func TestServiceMetrics_CacheFailures_CountedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	m := setupMonitored(t, func(ports.Clock) ports.QueueCache { return brokenCache{} }, nil)
	q, err := m.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"}) // the store into the cache fails
	is.NoErr(err)

	for range 3 {
		_, err := m.service.Queue(ctx, q.ID) // each read fails, and is answered by the store
		is.NoErr(err)
	}

	f := m.scrape(t)
	is.Equal(f.Value("retsu_queue_cache_failures_total"), 4.0)                     // one store, three reads
	is.Equal(f.Value("retsu_queue_cache_misses_total"), 3.0)                       // every read went to the store
	is.Equal(f.Value("retsu_queue_cache_hits_total"), 0.0)                         // none was served by the cache
	is.Equal(strings.Count(m.logs.String(), "queue-details cache unavailable"), 1) // the outage is logged once
}

// outageStore is a message store whose database can be switched off.
type outageStore struct {
	ports.MessageStore
	down bool
}

func (s *outageStore) Enqueue(ctx context.Context, p ports.EnqueueParams) (ports.Enqueued, error) {
	if s.down {
		return ports.Enqueued{}, domain.Unavailable(errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"))
	}
	return s.MessageStore.Enqueue(ctx, p)
}

func TestService_DatabaseOutage_LoggedWhenItStartsAndWhenItEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	var store *outageStore
	m := setupMonitored(t, memoryCache(0), func(s ports.MessageStore) ports.MessageStore {
		store = &outageStore{MessageStore: s}
		return store
	})
	q, err := m.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"})
	is.NoErr(err)
	enqueue := func() error {
		_, err := m.service.Enqueue(ctx, q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityLow})
		return err
	}

	store.down = true
	for range 5 {
		is.True(errors.Is(enqueue(), domain.ErrUnavailable)) // every request during the outage fails with 503's code
	}
	store.down = false
	is.NoErr(enqueue())
	is.NoErr(enqueue())

	logs := m.logs.String()
	is.Equal(strings.Count(logs, "level=WARN msg=\"database unavailable"), 1) // one warning for five failures
	is.True(strings.Contains(logs, "connection refused"))                     // naming the cause
	is.Equal(strings.Count(logs, "database available again"), 1)              // and one line when it is back
	is.Equal(m.scrape(t).Value("retsu_messages_enqueued_total"), 2.0)         // only stored messages count
}

func TestService_FlappingDatabase_LoggedAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	var store *outageStore
	m := setupMonitored(t, memoryCache(0), func(s ports.MessageStore) ports.MessageStore {
		store = &outageStore{MessageStore: s}
		return store
	})
	q, err := m.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"})
	is.NoErr(err)
	flap := func() {
		store.down = true
		_, err := m.service.Enqueue(ctx, q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityLow})
		is.True(err != nil) // the database is down
		m.clock.Advance(100 * time.Millisecond)
		store.down = false
		_, err = m.service.Enqueue(ctx, q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityLow})
		is.NoErr(err) // and back
		m.clock.Advance(100 * time.Millisecond)
	}

	for range 10 {
		flap()
	}
	is.Equal(strings.Count(m.logs.String(), "database unavailable"), 1)                       // ten outages in two seconds: one warning
	is.Equal(strings.Count(m.logs.String(), "database available again"), 1)                   // and the end of that one
	is.True(strings.Contains(m.logs.String(), `msg="database available again" outage=100ms`)) // with its length
	m.clock.Advance(time.Minute)
	flap()

	is.Equal(strings.Count(m.logs.String(), "database unavailable"), 2) // a minute later, the next outage is logged
	is.True(strings.Contains(m.logs.String(), "outages_not_logged=9"))  // counting those left out
}

func TestCleanerMetrics_CountPassesAndRowsRemoved(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	metrics := prometheus.New()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 2, DeadLetterRetention: time.Second}, metrics)
	q := c.queue(t, "orders", domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	c.enqueue(t, q, time.Hour)
	for range 5 {
		c.enqueue(t, q, time.Second)
	}
	_, _, err := c.service.Dequeue(ctx, q.ID) // the long-lived one, on its only attempt
	is.NoErr(err)
	c.clock.Advance(time.Second)
	_, _, err = c.service.Dequeue(ctx, q.ID) // moves it to the dead letters; the others have expired
	is.NoErr(err)
	c.clock.Advance(2 * time.Second)

	c.cleaners.RunOnce(ctx)
	c.messages.failNext = errors.New("connection reset by peer")
	c.cleaners.RunOnce(ctx)

	f := prometheustest.Scrape(t, metrics.Handler())
	is.Equal(f.Value("retsu_expired_messages_removed_total"), 5.0)                                                // the five expired ones, in batches of two
	is.Equal(f.Value("retsu_dead_letters_removed_total"), 1.0)                                                    // the dead letter, past its retention
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", app.ExpiredMessageCleaner, "result", "ok"), 1.0)    // the first pass finished
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", app.ExpiredMessageCleaner, "result", "error"), 1.0) // the second failed
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", app.DeadLetterCleaner, "result", "ok"), 2.0)        // both dead-letter passes finished
	is.Equal(f.Value("retsu_cleaner_pass_duration_seconds", "cleaner", app.DeadLetterCleaner), 2.0)               // and were timed
}

func TestServiceMetrics_EnqueueBatchesReplaysAndDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	request := app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{message("a"), message("b"), message("c")}, Batch: true, IdempotencyKey: "k"}
	_, err := f.service.EnqueueMessages(ctx, request)
	is.NoErr(err)
	_, err = f.service.EnqueueMessages(ctx, request) // a replay
	is.NoErr(err)
	_, err = f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 10})
	is.NoErr(err)
	f.clock.Advance(time.Second)
	_, err = f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 10}) // moves the three
	is.NoErr(err)

	m := f.scrape(t)
	is.Equal(m.Value("retsu_messages_enqueued_total"), 3.0)      // the batch's messages, once
	is.Equal(m.Value("retsu_enqueue_replays_total"), 1.0)        // the replay, apart
	is.Equal(m.Value("retsu_messages_delivered_total"), 3.0)     // one batch dequeue delivered three
	is.Equal(m.Value("retsu_messages_dead_lettered_total"), 3.0) // the next moved them
	is.Equal(m.Value("retsu_waiting_dequeues"), 0.0)             // nothing waited
}

func TestServiceMetrics_WaitingDequeuesGauge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 2)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 5 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 5 * time.Second}, 1, answers)
	f.messages.awaitAsks(t, 1)

	is.Equal(f.scrape(t).Value("retsu_waiting_dequeues"), 2.0) // both dequeues count while they wait
	f.clock.Advance(5 * time.Second)
	answer(t, answers)
	answer(t, answers)
	is.Equal(f.scrape(t).Value("retsu_waiting_dequeues"), 0.0) // and no longer once they answered
}

func TestCleanerMetrics_RowsRemovedByCleaner(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	metrics := prometheus.New()
	c := setupCleaners(t, app.CleanerSettings{Interval: time.Second, BatchSize: 2, DeadLetterRetention: time.Hour, IdempotencyRetention: time.Hour}, metrics)
	keyed := c.queue(t, "keyed", domain.SettingsUpdate{})
	for _, key := range []string{"a", "b", "c"} {
		_, err := c.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: keyed.ID, Messages: []domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow}}, IdempotencyKey: key})
		is.NoErr(err)
	}
	gone := c.queue(t, "gone", domain.SettingsUpdate{})
	for range 5 {
		c.enqueue(t, gone, 48*time.Hour)
	}
	is.NoErr(c.service.DeleteQueue(ctx, gone.ID))
	c.clock.Advance(time.Hour)

	c.cleaners.RunOnce(ctx)

	f := prometheustest.Scrape(t, metrics.Handler())
	is.Equal(f.Value("retsu_cleaner_rows_removed_total", "cleaner", app.IdempotencyKeyCleaner), 3.0)           // the three keys past their retention
	is.Equal(f.Value("retsu_cleaner_rows_removed_total", "cleaner", app.DeletedQueueCleaner), 5.0)             // the deleted queue's five messages
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", app.IdempotencyKeyCleaner, "result", "ok"), 1.0) // each cleaner's pass is counted
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", app.DeletedQueueCleaner, "result", "ok"), 1.0)
}
