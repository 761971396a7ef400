package app_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// start is the time the manual clocks of these tests start at.
var start = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// patience bounds, in real time, how long a test waits for something that happens in
// another goroutine at once: a woken dequeue's answer, a timer being set.
const patience = 5 * time.Second

// fixture is a service over memory stores on a manual clock, with what the tests watch.
type fixture struct {
	clock    *watchedClock
	queues   *memory.QueueStore
	store    *memory.MessageStore
	messages *watchedStore
	metrics  *prometheus.Metrics
	service  *app.Service
}

// setup returns a fixture whose service runs with o; the service is closed when the test
// ends.
func setup(t *testing.T, o app.Options) *fixture {
	t.Helper()
	f := &fixture{clock: newWatchedClock(), metrics: prometheus.New()}
	f.queues = memory.NewQueueStore(memory.QueueStoreOptions{Clock: f.clock.ManualClock})
	f.store = memory.NewMessageStore(memory.MessageStoreOptions{Clock: f.clock.ManualClock, Queues: f.queues})
	f.messages = &watchedStore{MessageStore: f.store, asks: make(chan ports.DequeueParams, 1024)}
	f.service = f.newService(o, memory.NewQueueCache(memory.QueueCacheOptions{Clock: f.clock.ManualClock}))
	t.Cleanup(f.service.Close)
	return f
}

// newService returns another service over the fixture's stores, with a cache of its own:
// another instance of Retsu. Close it when done.
func (f *fixture) newService(o app.Options, cache ports.QueueCache) *app.Service {
	return app.NewService(app.Ports{
		Queues: f.queues, Messages: f.messages, DeadLetters: f.store, Cleaning: f.store, Wakeups: f.store,
		Cache: cache, Metrics: f.metrics, Clock: f.clock,
	}, o)
}

// queue creates a queue with the supplied settings.
func (f *fixture) queue(t *testing.T, settings domain.SettingsUpdate) domain.Queue {
	t.Helper()
	q, err := f.service.CreateQueue(context.Background(), domain.NewQueue{Name: "q" + newName(), SettingsUpdate: settings})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// newTimeOrderedID returns a fresh ID, as the service makes them.
func newTimeOrderedID() domain.ID { return domain.ID(uuid.Must(uuid.NewV7())) }

// names numbers the queues of the tests.
var names atomic.Int64

// newName returns a suffix no other queue of the test binary has.
func newName() string { return strconv.FormatInt(names.Add(1), 10) }

// enqueue stores messages in one request and returns their IDs.
func (f *fixture) enqueue(t *testing.T, q domain.Queue, messages ...domain.NewMessage) []domain.ID {
	t.Helper()
	enqueued, err := f.service.EnqueueMessages(context.Background(), app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: len(messages) > 1})
	if err != nil {
		t.Fatal(err)
	}
	return enqueued.IDs
}

// dequeue expects a delivery, without waiting.
func (f *fixture) dequeue(t *testing.T, q domain.Queue) domain.Delivery {
	t.Helper()
	d, ok, err := f.service.Dequeue(context.Background(), q.ID)
	if err != nil || !ok {
		t.Fatalf("dequeue: ok %t, err %v", ok, err)
	}
	return d
}

func (f *fixture) scrape(t *testing.T) prometheustest.Families {
	t.Helper()
	return prometheustest.Scrape(t, f.metrics.Handler())
}

// message is a LOW message with the payload.
func message(payload string) domain.NewMessage {
	return domain.NewMessage{Payload: payload, Priority: domain.PriorityLow}
}

// dequeued is the answer of a dequeue that ran in its own goroutine.
type dequeued struct {
	waiter     int
	deliveries []domain.Delivery
	err        error
}

// dequeueAsync runs DequeueMessages in its own goroutine and sends its answer, labelled
// waiter, to answers.
func (f *fixture) dequeueAsync(ctx context.Context, p app.DequeueParams, waiter int, answers chan<- dequeued) {
	go func() {
		deliveries, err := f.service.DequeueMessages(ctx, p)
		answers <- dequeued{waiter: waiter, deliveries: deliveries, err: err}
	}()
}

// answer returns the next answer, failing the test when none comes in time.
func answer(t *testing.T, answers <-chan dequeued) dequeued {
	t.Helper()
	select {
	case a := <-answers:
		return a
	case <-time.After(patience):
		t.Fatal("no dequeue answered")
		return dequeued{}
	}
}

// noAnswerYet fails the test when a dequeue has answered.
func noAnswerYet(t *testing.T, answers <-chan dequeued) {
	t.Helper()
	select {
	case a := <-answers:
		t.Fatalf("waiter %d answered early: %d deliveries, err %v", a.waiter, len(a.deliveries), a.err)
	case <-time.After(20 * time.Millisecond):
	}
}

// watchedStore is a message store that reports the asks of waiting dequeues (those that
// want Dequeued.Next), and can cancel a request's context while its dequeue runs.
type watchedStore struct {
	*memory.MessageStore
	asks chan ports.DequeueParams

	mu sync.Mutex
	// cancelAfterDequeue, when set, is called after the next dequeue that delivered,
	// before it returns: the requester went away while the store worked.
	cancelAfterDequeue func()
}

func (s *watchedStore) Dequeue(ctx context.Context, p ports.DequeueParams) (ports.Dequeued, error) {
	result, err := s.MessageStore.Dequeue(ctx, p)
	s.mu.Lock()
	if cancel := s.cancelAfterDequeue; cancel != nil && len(result.Deliveries) > 0 {
		s.cancelAfterDequeue = nil
		cancel()
	}
	s.mu.Unlock()
	if p.Next {
		select {
		case s.asks <- p:
		default: // never block the service; a test that misses an ask times out
		}
	}
	return result, err
}

// cancelDuringNextDequeue makes the next dequeue that delivers cancel its request.
func (s *watchedStore) cancelDuringNextDequeue(cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelAfterDequeue = cancel
}

// awaitAsks waits until waiting dequeues asked the store n times more.
func (s *watchedStore) awaitAsks(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.asks:
		case <-time.After(patience):
			t.Fatal("no waiting dequeue asked the store")
		}
	}
}

// awaitFirstWait waits until the service's first waiting dequeue asked the store twice: on
// entering its wait, and again once the subscription to the stores' wakeups that the wait
// started is in place (every wait present then asks again). From then on a dequeue that
// comes to wait asks once, and the asks and timers a test awaits are those of its own
// dequeues, not that one's. Start a test's other waiting dequeues after it.
func (f *fixture) awaitFirstWait(t *testing.T) {
	t.Helper()
	f.messages.awaitAsks(t, 2)
}

// watchedClock is a manual clock that reports the timers set on it, so that a test
// advances it only once a waiting dequeue has set the timer it waits on.
type watchedClock struct {
	*memory.ManualClock
	timers chan time.Duration
}

func newWatchedClock() *watchedClock {
	return &watchedClock{ManualClock: memory.NewManualClock(start), timers: make(chan time.Duration, 1024)}
}

func (c *watchedClock) AfterFunc(d time.Duration, f func()) func() bool {
	stop := c.ManualClock.AfterFunc(d, f)
	select {
	case c.timers <- d:
	default: // never block the service; a test that misses a timer times out
	}
	return stop
}

// awaitTimer waits until a timer of d is set.
func (c *watchedClock) awaitTimer(t *testing.T, d time.Duration) {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case set := <-c.timers:
			if set == d {
				return
			}
		case <-timeout:
			t.Fatalf("no timer of %s was set", d)
		}
	}
}
