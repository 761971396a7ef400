package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// countedWakeups are a store's wakeups that count the subscriptions: every Subscribe call
// from the moment it is entered, being made or in place, until it is cancelled. They can hold
// the next Subscribe until released, as a store whose LISTEN takes a moment does.
type countedWakeups struct {
	ports.Wakeups

	mu            sync.Mutex
	subscriptions int
	hold          chan struct{} // when set, the next Subscribe waits for it to close
}

func (c *countedWakeups) Subscribe(notify func(ports.Wakeup)) func() {
	c.mu.Lock()
	hold := c.hold
	c.hold = nil
	c.subscriptions++
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	cancel := c.Wakeups.Subscribe(notify)
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			c.mu.Lock()
			c.subscriptions--
			c.mu.Unlock()
		})
	}
}

// count returns how many subscriptions there are now.
func (c *countedWakeups) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subscriptions
}

// await waits until there are want subscriptions, and returns how many there are.
func (c *countedWakeups) await(want int) int {
	deadline := time.Now().Add(patience)
	for {
		if n := c.count(); n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// setupCounted returns a fixture whose service takes its wakeups through a countedWakeups.
func setupCounted(t *testing.T) (*fixture, *countedWakeups) {
	t.Helper()
	f := setup(t, app.Options{})
	wakeups := &countedWakeups{Wakeups: f.store}
	service := app.NewService(app.Ports{
		Queues: f.queues, Messages: f.messages, DeadLetters: f.store, Cleaning: f.store, Wakeups: wakeups,
		Cache: memory.NewQueueCache(memory.QueueCacheOptions{Clock: f.clock.ManualClock}), Metrics: f.metrics, Clock: f.clock,
	}, app.Options{})
	t.Cleanup(service.Close)
	f.service = service
	return f, wakeups
}

// A service subscribes to wakeups only while dequeues wait, and for a while after.
func TestService_SubscribesToWakeupsOnlyWhileDequeuesWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, wakeups := setupCounted(t)
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, message("polled"))
	f.dequeue(t, q)
	is.Equal(wakeups.await(0), 0) // neither a new service nor a dequeue that does not wait subscribes

	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.messages.awaitAsks(t, 1)
	is.Equal(wakeups.await(1), 1) // a waiting dequeue subscribes
	f.messages.awaitAsks(t, 1)    // and asks again once the subscription is in place
	f.enqueue(t, q, message("wake up"))
	a := answer(t, answers)
	is.Equal(len(a.deliveries), 1) // the wakeup reaches it

	f.clock.awaitTimer(t, 30*time.Second)
	f.clock.Advance(30*time.Second - time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	is.Equal(wakeups.await(1), 1) // the subscription stays a while after the last wait
	f.clock.Advance(time.Millisecond)
	is.Equal(wakeups.await(0), 0) // and then ends

	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 1, answers)
	f.messages.awaitAsks(t, 2)
	is.Equal(wakeups.await(1), 1) // the next waiting dequeue subscribes again
	f.enqueue(t, q, message("again"))
	a = answer(t, answers)
	is.Equal(len(a.deliveries), 1)
}

// A message that comes between a waiting dequeue's first ask and the subscription that its
// wait starts sends its wakeup to nobody: the dequeue asks again once the subscription is in
// place, and gets it.
func TestDequeueMessages_MessageBeforeTheSubscription_FoundOnceItIsInPlace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := waitWithSubscriptionHeld(t)
	id := h.f.enqueue(t, h.q, message("meanwhile"))[0]
	noAnswerYet(t, h.answers)

	close(h.release)
	a := answer(t, h.answers)
	is.Equal(len(a.deliveries), 1)          // found by the ask after the subscription
	is.Equal(a.deliveries[0].MessageID, id) // the message that came meanwhile
	is.Equal(h.f.clock.Now(), start)        // before the wait ended
}

// heldWait is a dequeue waiting on a fresh queue while the subscription its wait started is
// held in Subscribe until release is closed.
type heldWait struct {
	f       *fixture
	wakeups *countedWakeups
	q       domain.Queue
	answers chan dequeued
	release chan struct{}
}

// waitWithSubscriptionHeld starts a heldWait and returns once its dequeue asked the store
// and its subscription is held.
func waitWithSubscriptionHeld(t *testing.T) heldWait {
	t.Helper()
	f, wakeups := setupCounted(t)
	h := heldWait{f: f, wakeups: wakeups, q: f.queue(t, domain.SettingsUpdate{}), answers: make(chan dequeued, 1), release: make(chan struct{})}
	wakeups.hold = h.release
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: h.q.ID, Wait: 10 * time.Second}, 0, h.answers)
	f.messages.awaitAsks(t, 1)
	if wakeups.await(1) != 1 {
		t.Fatal("the wait did not subscribe")
	}
	return h
}

// A service closed while the subscription that a wait started is still being made returns
// once that subscription is cancelled too: nothing of the service keeps listening, or is
// still subscribing, after Close.
func TestService_Close_DuringSubscription_NothingLeftSubscribed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := waitWithSubscriptionHeld(t)

	closed := make(chan struct{})
	go func() {
		h.f.service.Close()
		close(closed)
	}()
	a := answer(t, h.answers)
	is.NoErr(a.err) // the wait ends at once
	time.AfterFunc(20*time.Millisecond, func() { close(h.release) })
	select {
	case <-closed:
	case <-time.After(patience):
		t.Fatal("Close did not return")
	}
	is.Equal(h.wakeups.count(), 0) // the subscription that finished after Close began is cancelled before Close returns
}
