package test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// The worker of adapters/httpclient against the real binary on PostgreSQL: its lease
// extensions, its backoff and its stop.

// workerSetup returns a client of the shared server and a queue created with settings.
func workerSetup(t *testing.T, settings domain.SettingsUpdate) (*httpclient.Client, domain.Queue) {
	t.Helper()
	client, err := httpclient.New(shared.URL(), httpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := client.CreateQueue(t.Context(), domain.NewQueue{Name: uniqueName("worker"), SettingsUpdate: settings})
	if err != nil {
		t.Fatal(err)
	}
	return client, q
}

// enqueueN stores n messages in one batch and returns their IDs.
func enqueueN(t *testing.T, client *httpclient.Client, q domain.Queue, n int) []domain.ID {
	t.Helper()
	messages := make([]domain.NewMessage, n)
	for i := range messages {
		messages[i] = domain.NewMessage{Payload: fmt.Sprint(i), Priority: domain.PriorityMedium}
	}
	enqueued, err := client.EnqueueMessages(t.Context(), app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: true})
	if err != nil {
		t.Fatal(err)
	}
	return enqueued.IDs
}

// startWorker runs a worker until the returned stop is called, which returns Run's error.
func startWorker(t *testing.T, w *httpclient.Worker) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				err = errors.New("the worker did not stop within 60 s")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// handledSet records which messages a handler completed, and how often each ran.
type handledSet struct {
	mu   sync.Mutex
	runs map[domain.ID][]time.Time
	done map[domain.ID]bool
}

func newHandledSet() *handledSet {
	return &handledSet{runs: map[domain.ID][]time.Time{}, done: map[domain.ID]bool{}}
}

func (h *handledSet) ran(id domain.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs[id] = append(h.runs[id], time.Now())
}

func (h *handledSet) finished(id domain.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done[id] = true
}

func (h *handledSet) isDone(id domain.ID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done[id]
}

func (h *handledSet) times(id domain.ID) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.runs[id]...)
}

func (h *handledSet) started() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.runs)
}

func (h *handledSet) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.done)
}

// waitFor polls cond every 50 ms for up to limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %v", what, limit)
		}
	}
}

// messageCounts sums a queue's counts.
func messageCounts(t *testing.T, client *httpclient.Client, q domain.Queue) (waiting, inFlight, deadLettered int64) {
	t.Helper()
	stats, err := client.Stats(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stats.Priorities {
		waiting, inFlight, deadLettered = waiting+p.Ready+p.Delayed, inFlight+p.InFlight, deadLettered+p.DeadLettered
	}
	return waiting, inFlight, deadLettered
}

func TestWorker_HandlerSlowerThanTheVisibilityTimeout_KeepsItsLease_NeverRunTwice(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	// A lease of 2 s: this machine's disk has stalled a commit for over a second under make
	// test's load, which a 1 s lease did not survive between two extensions.
	client, q := workerSetup(t, domain.SettingsUpdate{VisibilityTimeout: new(2 * time.Second)})
	ids := enqueueN(t, client, q, 3)
	handled := newHandledSet()
	var extended, lost atomic.Int64
	worker := httpclient.NewWorker(client, q.ID, func(ctx context.Context, d domain.Delivery) error {
		handled.ran(d.MessageID)
		select {
		case <-time.After(7 * time.Second): // three and a half visibility timeouts
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		handled.finished(d.MessageID)
		return nil
	}, httpclient.WorkerOptions{Concurrency: 3, Wait: time.Second, OnEvent: func(e httpclient.WorkerEvent) {
		switch e.Kind {
		case httpclient.EventExtended:
			extended.Add(1)
		case httpclient.EventLeaseLost:
			lost.Add(1)
		}
	}})
	stop := startWorker(t, worker)
	waitFor(t, "three running handlers", 10*time.Second, func() bool { return handled.started() == 3 })
	stolen := 0
	for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		deliveries, err := client.DequeueMessages(t.Context(), app.DequeueParams{QueueID: q.ID, Max: 10})
		is.NoErr(err)
		stolen += len(deliveries)
	}
	waitFor(t, "three handled messages", 20*time.Second, func() bool { return handled.count() == 3 })
	is.NoErr(stop())
	is.Equal(stolen, 0) // no other consumer got a message while its handler ran
	for _, id := range ids {
		is.Equal(len(handled.times(id)), 1) // and the worker never ran one twice
	}
	is.True(extended.Load() >= 3*5) // its leases were extended every third of a lease or so
	is.Equal(lost.Load(), int64(0)) // and never lost
	waiting, inFlight, _ := messageCounts(t, client, q)
	is.Equal(waiting+inFlight, int64(0)) // every message acknowledged
}

func TestWorker_FailingHandler_BackAfterTheBackoff_ThenDeadLettered(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, q := workerSetup(t, domain.SettingsUpdate{VisibilityTimeout: new(30 * time.Second), MaxDeliveryAttempts: new(3)})
	id := enqueueN(t, client, q, 1)[0]
	handled := newHandledSet()
	worker := httpclient.NewWorker(client, q.ID, func(_ context.Context, d domain.Delivery) error {
		handled.ran(d.MessageID)
		return errors.New("the payment service is down")
	}, httpclient.WorkerOptions{Wait: time.Second, RetryBackoff: httpclient.Backoff{Initial: time.Second, Max: 2 * time.Second}})
	startWorker(t, worker)
	waitFor(t, "the dead letter", 20*time.Second, func() bool { _, _, dead := messageCounts(t, client, q); return dead == 1 })
	runs := handled.times(id)
	is.Equal(len(runs), 3) // one run per delivery attempt
	for i := 1; i < len(runs); i++ {
		gap := runs[i].Sub(runs[i-1])
		is.True(gap >= 900*time.Millisecond) // back after the backoff, not at once
		is.True(gap < 10*time.Second)        // and not after the 30 s visibility timeout
	}
	letter, err := client.DeadLetter(t.Context(), q.ID, id)
	is.NoErr(err)
	is.Equal(letter.DeliveryAttempts, 3) // a dead letter once its attempts were used
}

func TestWorker_Stop_EveryMessageAcknowledgedOrBack(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, q := workerSetup(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	ids := enqueueN(t, client, q, 300)
	handled := newHandledSet()
	var acknowledged atomic.Int64
	worker := httpclient.NewWorker(client, q.ID, func(_ context.Context, d domain.Delivery) error {
		time.Sleep(20 * time.Millisecond)
		handled.finished(d.MessageID)
		return nil
	}, httpclient.WorkerOptions{Concurrency: 8, Wait: time.Second, OnEvent: func(e httpclient.WorkerEvent) {
		if e.Kind == httpclient.EventAcknowledged {
			acknowledged.Add(int64(e.Count))
		}
	}})
	stop := startWorker(t, worker)
	waitFor(t, "50 acknowledgements", 20*time.Second, func() bool { return acknowledged.Load() >= 50 })
	is.NoErr(stop())
	back := map[domain.ID]bool{}
	for {
		deliveries, err := client.DequeueMessages(t.Context(), app.DequeueParams{QueueID: q.ID, Max: domain.MaxDequeueBatch})
		is.NoErr(err)
		if len(deliveries) == 0 {
			break
		}
		for _, d := range deliveries {
			back[d.MessageID] = true
		}
	}
	for _, id := range ids {
		if handled.isDone(id) == back[id] {
			t.Errorf("message %s: handled %v, back in the queue %v; want exactly one", id, handled.isDone(id), back[id])
		}
	}
	is.Equal(int(acknowledged.Load()), handled.count()) // every handled message was acknowledged before Run returned
	is.True(len(back) > 0)                              // and the rest came back at once, not after the one-minute visibility timeout
}

func TestWorker_StopTimeout_HandlersCancelled_MessagesBackAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, q := workerSetup(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	ids := enqueueN(t, client, q, 4)
	var started atomic.Int64
	causes := make(chan error, len(ids))
	worker := httpclient.NewWorker(client, q.ID, func(ctx context.Context, _ domain.Delivery) error {
		started.Add(1)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, httpclient.WorkerOptions{Concurrency: 4, Wait: time.Second, StopTimeout: 300 * time.Millisecond})
	stop := startWorker(t, worker)
	waitFor(t, "four running handlers", 10*time.Second, func() bool { return started.Load() == 4 })
	is.NoErr(stop())
	for range ids {
		is.True(errors.Is(<-causes, httpclient.ErrWorkerStopped)) // each handler was told why its context ended
	}
	deliveries, err := client.DequeueMessages(t.Context(), app.DequeueParams{QueueID: q.ID, Max: 10})
	is.NoErr(err)
	is.Equal(len(deliveries), 4) // the messages are back at once, released rather than left to their timeout
}
