package httpclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// The worker's tests run over both implementations of app.Retsu: the in-process service,
// and the client talking to the HTTP adapter in front of one.
var backends = map[string]func(t *testing.T) app.Retsu{
	"service": func(t *testing.T) app.Retsu { return newLocal(t) },
	"client":  func(t *testing.T) app.Retsu { return newRemote(t, httpclient.Options{}) },
}

// workerTest is one test's Retsu, queue and record of what the worker did.
type workerTest struct {
	t      *testing.T
	is     *is.I
	retsu  app.Retsu
	queue  domain.Queue
	events *eventLog
}

// forEachBackend runs test over each backend, in parallel, with a queue of settings.
func forEachBackend(t *testing.T, settings domain.SettingsUpdate, test func(w *workerTest)) {
	for name, newRetsu := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRetsu(t)
			q, err := r.CreateQueue(context.Background(), domain.NewQueue{Name: fmt.Sprintf("w%d", time.Now().UnixNano()), SettingsUpdate: settings})
			if err != nil {
				t.Fatal(err)
			}
			test(&workerTest{t: t, is: is.New(t), retsu: r, queue: q, events: &eventLog{}})
		})
	}
}

// enqueue stores n messages with payloads "0", "1", … and returns their IDs.
func (w *workerTest) enqueue(n int) []domain.ID {
	w.t.Helper()
	messages := make([]domain.NewMessage, n)
	for i := range messages {
		messages[i] = domain.NewMessage{Payload: fmt.Sprint(i), Priority: domain.PriorityMedium}
	}
	enqueued, err := w.retsu.EnqueueMessages(context.Background(), app.EnqueueParams{QueueID: w.queue.ID, Messages: messages, Batch: true})
	if err != nil {
		w.t.Fatal(err)
	}
	return enqueued.IDs
}

// run starts a worker with o (its OnEvent recording into the test's log) and returns a
// function that stops it and returns what Run returned.
func (w *workerTest) run(handle httpclient.Handler, o httpclient.WorkerOptions) (stop func() error) {
	o.OnEvent = w.events.record
	worker := httpclient.NewWorker(w.retsu, w.queue.ID, handle, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				w.t.Fatal("the worker did not stop within 30 s")
			}
		})
		return err
	}
	w.t.Cleanup(func() { _ = stop() })
	return stop
}

// remaining takes every message that is deliverable now and returns their IDs.
func (w *workerTest) remaining() map[domain.ID]bool {
	w.t.Helper()
	ids := map[domain.ID]bool{}
	for {
		deliveries, err := w.retsu.DequeueMessages(context.Background(), app.DequeueParams{QueueID: w.queue.ID, Max: domain.MaxDequeueBatch})
		if err != nil {
			w.t.Fatal(err)
		}
		if len(deliveries) == 0 {
			return ids
		}
		for _, d := range deliveries {
			ids[d.MessageID] = true
		}
	}
}

// counts sums the queue's counts.
func (w *workerTest) counts() (ready, delayed, inFlight, deadLettered int64) {
	w.t.Helper()
	stats, err := w.retsu.Stats(context.Background(), w.queue.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, p := range stats.Priorities {
		ready, delayed, inFlight, deadLettered = ready+p.Ready, delayed+p.Delayed, inFlight+p.InFlight, deadLettered+p.DeadLettered
	}
	return ready, delayed, inFlight, deadLettered
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 10 s", what)
		}
	}
}

// eventLog records a worker's events.
type eventLog struct {
	mu     sync.Mutex
	events []httpclient.WorkerEvent
}

func (l *eventLog) record(e httpclient.WorkerEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// count returns how many events of kind were recorded.
func (l *eventLog) count(kind httpclient.WorkerEventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// acknowledged returns how many messages the acknowledgements removed.
func (l *eventLog) acknowledged() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == httpclient.EventAcknowledged {
			n += e.Count
		}
	}
	return n
}

// runs counts the handler's runs per message.
type runs struct {
	mu sync.Mutex
	n  map[domain.ID]int
	at map[domain.ID][]time.Time
}

func newRuns() *runs { return &runs{n: map[domain.ID]int{}, at: map[domain.ID][]time.Time{}} }

func (r *runs) add(id domain.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[id]++
	r.at[id] = append(r.at[id], time.Now())
}

func (r *runs) of(id domain.ID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

func (r *runs) times(id domain.ID) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.at[id]...)
}

func TestWorker_HandledMessages_AcknowledgedInBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{}, func(w *workerTest) {
		ids := w.enqueue(50)
		handled := newRuns()
		stop := w.run(func(_ context.Context, d domain.Delivery) error {
			handled.add(d.MessageID)
			return nil
		}, httpclient.WorkerOptions{Concurrency: 5, Wait: time.Second, AckBatchSize: 10})
		eventually(w.t, "50 acknowledgements", func() bool { return w.events.acknowledged() == 50 })
		w.is.NoErr(stop()) // a stop by the context is no error
		for _, id := range ids {
			w.is.Equal(handled.of(id), 1) // every message handled once
		}
		ready, delayed, inFlight, _ := w.counts()
		w.is.Equal(ready+delayed+inFlight, int64(0))                 // and removed
		w.is.True(w.events.count(httpclient.EventAcknowledged) < 50) // in batches, not one call per message
	})
}

func TestWorker_PollsSizedToIdleHandlers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{}, func(w *workerTest) {
		w.enqueue(30)
		var running, most atomic.Int64
		probe := &dequeueProbe{Retsu: w.retsu}
		w.retsu = probe
		w.run(func(context.Context, domain.Delivery) error {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			return nil
		}, httpclient.WorkerOptions{Concurrency: 4, Wait: time.Second})
		eventually(w.t, "30 acknowledgements", func() bool { return w.events.acknowledged() == 30 })
		w.is.True(most.Load() <= 4)     // never more handlers than the concurrency
		w.is.True(probe.largest() <= 4) // and never a poll for more messages than idle handlers
		w.is.True(probe.largest() >= 2) // polls ask for several messages at once
	})
}

// dequeueProbe records the largest Max of the dequeues made through it.
type dequeueProbe struct {
	app.Retsu
	most atomic.Int64
}

func (p *dequeueProbe) DequeueMessages(ctx context.Context, params app.DequeueParams) ([]domain.Delivery, error) {
	for m := p.most.Load(); int64(params.Max) > m && !p.most.CompareAndSwap(m, int64(params.Max)); m = p.most.Load() {
	}
	return p.Retsu.DequeueMessages(ctx, params)
}

func (p *dequeueProbe) largest() int { return int(p.most.Load()) }

func TestWorker_SlowHandler_KeepsItsLeaseThroughExtensions(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second)}, func(w *workerTest) {
		ids := w.enqueue(2)
		handled := newRuns()
		stop := w.run(func(ctx context.Context, d domain.Delivery) error {
			handled.add(d.MessageID)
			select {
			case <-time.After(2500 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, httpclient.WorkerOptions{Concurrency: 4, Wait: time.Second})
		eventually(w.t, "2 acknowledgements", func() bool { return w.events.acknowledged() == 2 })
		w.is.NoErr(stop())
		for _, id := range ids {
			w.is.Equal(handled.of(id), 1) // the message was never delivered again while its handler ran
		}
		w.is.True(w.events.count(httpclient.EventExtended) >= 4) // its lease was extended while it ran
		w.is.Equal(w.events.count(httpclient.EventLeaseLost), 0) // and never lost
	})
}

func TestWorker_FailingHandler_BackoffThenDeadLetters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{MaxDeliveryAttempts: new(3), VisibilityTimeout: new(30 * time.Second)}, func(w *workerTest) {
		id := w.enqueue(1)[0]
		handled := newRuns()
		w.run(func(_ context.Context, d domain.Delivery) error {
			handled.add(d.MessageID)
			return errors.New("always fails")
		}, httpclient.WorkerOptions{Wait: time.Second, RetryBackoff: httpclient.Backoff{Initial: time.Second, Max: time.Second}})
		eventually(w.t, "the dead letter", func() bool { _, _, _, dead := w.counts(); return dead == 1 })
		at := handled.times(id)
		w.is.Equal(len(at), 3) // one run per attempt
		for i := 1; i < len(at); i++ {
			gap := at[i].Sub(at[i-1])
			w.is.True(gap >= 900*time.Millisecond) // back after the backoff
			w.is.True(gap < 10*time.Second)        // not after the visibility timeout
		}
		letter, err := w.retsu.DeadLetter(context.Background(), w.queue.ID, id)
		w.is.NoErr(err)
		w.is.Equal(letter.DeliveryAttempts, 3) // a dead letter after its attempts
	})
}

func TestWorker_LeaseLost_CancelsTheHandlersContext(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second)}, func(w *workerTest) {
		w.enqueue(1)
		started, causes := make(chan struct{}, 1), make(chan error, 1)
		w.run(func(ctx context.Context, d domain.Delivery) error {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, httpclient.WorkerOptions{Wait: time.Second})
		<-started
		_, err := w.retsu.PurgeQueue(context.Background(), w.queue.ID)
		w.is.NoErr(err)
		select {
		case cause := <-causes:
			w.is.True(errors.Is(cause, domain.ErrLeaseLost)) // the next extension found the lease lost and said so
		case <-time.After(5 * time.Second):
			w.t.Fatal("the handler's context did not end")
		}
		eventually(w.t, "the lease_lost event", func() bool { return w.events.count(httpclient.EventLeaseLost) == 1 })
	})
}

func TestWorker_GiveUp_OnGiveUpKeepsItThenAcknowledged(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{}, func(w *workerTest) {
		id := w.enqueue(1)[0]
		kept := make(chan error, 1)
		w.run(func(context.Context, domain.Delivery) error {
			return fmt.Errorf("%w: malformed", httpclient.ErrGiveUp)
		}, httpclient.WorkerOptions{Wait: time.Second, OnGiveUp: func(_ context.Context, d domain.Delivery, err error) error {
			if d.MessageID == id {
				kept <- err
			}
			return nil
		}})
		err := <-kept
		w.is.True(errors.Is(err, httpclient.ErrGiveUp)) // the hook gets the handler's error
		eventually(w.t, "the acknowledgement", func() bool { return w.events.acknowledged() == 1 })
		ready, delayed, inFlight, dead := w.counts()
		w.is.Equal(ready+delayed+inFlight+dead, int64(0)) // the message left the queue once the hook kept it
	})
}

func TestWorker_GiveUpWithoutHook_AnOrdinaryFailure(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{MaxDeliveryAttempts: new(1)}, func(w *workerTest) {
		w.enqueue(1)
		w.run(func(context.Context, domain.Delivery) error {
			return fmt.Errorf("%w: malformed", httpclient.ErrGiveUp)
		}, httpclient.WorkerOptions{Wait: time.Second})
		eventually(w.t, "the dead letter", func() bool { _, _, _, dead := w.counts(); return dead == 1 }) // released, and dead-lettered after its attempts, never dropped
	})
}

func TestWorker_PanickingHandler_MessageReleased(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(30 * time.Second)}, func(w *workerTest) {
		w.enqueue(1)
		var calls atomic.Int64
		w.run(func(context.Context, domain.Delivery) error {
			if calls.Add(1) == 1 {
				panic("boom")
			}
			return nil
		}, httpclient.WorkerOptions{Wait: time.Second, RetryBackoff: httpclient.Backoff{Initial: time.Second, Max: time.Second}})
		eventually(w.t, "the acknowledgement of the second run", func() bool { return w.events.acknowledged() == 1 })
		w.is.Equal(w.events.count(httpclient.EventReleased), 1) // the panic released the message, long before its visibility timeout
	})
}

func TestWorker_Stop_LosesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)}, func(w *workerTest) {
		ids := w.enqueue(200)
		var mu sync.Mutex
		done := map[domain.ID]bool{}
		stop := w.run(func(_ context.Context, d domain.Delivery) error {
			time.Sleep(30 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			done[d.MessageID] = true
			return nil
		}, httpclient.WorkerOptions{Concurrency: 8, Wait: time.Second})
		eventually(w.t, "some acknowledgements", func() bool { return w.events.acknowledged() >= 20 })
		w.is.NoErr(stop())
		back := w.remaining()
		for _, id := range ids {
			if done[id] == back[id] {
				w.t.Errorf("message %s: handled %v, back in the queue %v; want exactly one", id, done[id], back[id])
			}
		}
		w.is.Equal(w.events.acknowledged(), len(done)) // every handled message was acknowledged before Run returned
	})
}

func TestWorker_StopTimeout_CancelsHandlersAndGivesBack(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)}, func(w *workerTest) {
		id := w.enqueue(1)[0]
		started, causes := make(chan struct{}, 1), make(chan error, 1)
		stop := w.run(func(ctx context.Context, d domain.Delivery) error {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, httpclient.WorkerOptions{Wait: time.Second, StopTimeout: 200 * time.Millisecond})
		<-started
		began := time.Now()
		w.is.NoErr(stop())
		w.is.True(time.Since(began) < 5*time.Second)                // the stop did not wait for the handler beyond its timeout
		w.is.True(errors.Is(<-causes, httpclient.ErrWorkerStopped)) // whose context said why it ended
		w.is.Equal(w.remaining(), map[domain.ID]bool{id: true})     // and its message is back at once, not after its visibility timeout
	})
}

func TestWorker_QueueDeleted_RunReturnsQueueNotFound(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{}, func(w *workerTest) {
		stop := w.run(func(context.Context, domain.Delivery) error { return nil }, httpclient.WorkerOptions{Wait: time.Second})
		eventually(w.t, "the first poll", func() bool { return w.events.count(httpclient.EventPolled) >= 1 })
		w.is.NoErr(w.retsu.DeleteQueue(context.Background(), w.queue.ID))
		eventually(w.t, "the failed poll", func() bool { return w.events.count(httpclient.EventPollFailed) >= 1 })
		w.is.True(errors.Is(stop(), domain.ErrQueueNotFound)) // a deleted queue ends the worker with the reason
	})
}

func TestWorker_LeaseTimeoutLongerThanTheQueues_FirstExtensionWithinTheFirstLease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(2 * time.Second)}, func(w *workerTest) {
		id := w.enqueue(1)[0]
		handled := newRuns()
		w.run(func(ctx context.Context, d domain.Delivery) error {
			handled.add(d.MessageID)
			select {
			case <-time.After(3500 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, httpclient.WorkerOptions{Wait: time.Second, LeaseTimeout: 30 * time.Second})
		eventually(w.t, "the outcome", func() bool {
			return w.events.acknowledged()+w.events.count(httpclient.EventAckLost)+w.events.count(httpclient.EventLeaseLost) >= 1
		})
		w.is.Equal(handled.of(id), 1)                            // the 2 s lease did not lapse while the handler ran
		w.is.Equal(w.events.count(httpclient.EventLeaseLost), 0) // no extension found it lost
		w.is.Equal(w.events.acknowledged(), 1)                   // and the acknowledgement removed it
		w.is.True(w.events.count(httpclient.EventExtended) >= 1) // an extension came within the queue's 2 s, not after a third of 30 s
	})
}

func TestWorker_SlotHeldUntilTheReleaseIsAnswered(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(30 * time.Second)}, func(w *workerTest) {
		w.enqueue(3)
		slow := &slowRelease{Retsu: w.retsu, pause: 300 * time.Millisecond}
		w.retsu = slow
		w.run(func(context.Context, domain.Delivery) error { return errors.New("fails") },
			httpclient.WorkerOptions{Concurrency: 1, Wait: time.Second, RetryBackoff: httpclient.Backoff{Initial: time.Minute}})
		eventually(w.t, "3 releases", func() bool { return w.events.count(httpclient.EventReleased) >= 3 })
		w.is.Equal(slow.overlaps.Load(), int64(0)) // no poll while the release of the only handler's message was in flight
	})
}

// slowRelease answers releases after a pause, and counts the polls made while a release
// was in flight.
type slowRelease struct {
	app.Retsu
	pause              time.Duration
	inFlight, overlaps atomic.Int64
}

func (s *slowRelease) Release(ctx context.Context, queueID domain.ID, r domain.Receipt, delay time.Duration) error {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	time.Sleep(s.pause)
	return s.Retsu.Release(ctx, queueID, r, delay)
}

func (s *slowRelease) DequeueMessages(ctx context.Context, p app.DequeueParams) ([]domain.Delivery, error) {
	if s.inFlight.Load() > 0 {
		s.overlaps.Add(1)
	}
	return s.Retsu.DequeueMessages(ctx, p)
}

func TestWorker_MaxLease_EndsTheHandlersContextAndStopsExtending(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second)}, func(w *workerTest) {
		w.enqueue(1)
		causes := make(chan error, 2)
		w.run(func(ctx context.Context, d domain.Delivery) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, httpclient.WorkerOptions{Concurrency: 1, Wait: time.Second, MaxLease: 3 * time.Second})
		began := time.Now()
		select {
		case cause := <-causes:
			w.is.True(errors.Is(cause, httpclient.ErrMaxLease)) // the handler learns why its context ended
			took := time.Since(began)
			w.is.True(took >= 2500*time.Millisecond) // not before MaxLease
			w.is.True(took < 5*time.Second)          // nor long after it
		case <-time.After(10 * time.Second):
			w.t.Fatal("a handler that never returns was kept leased past MaxLease")
		}
		eventually(w.t, "the lease_limit event", func() bool { return w.events.count(httpclient.EventLeaseLimit) == 1 })
		w.is.True(w.events.count(httpclient.EventExtended) >= 2) // it was extended until then
	})
}

func TestWorker_ReleaseDelay_JitteredFromTheFirstFailure(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)}, func(w *workerTest) {
		w.enqueue(20)
		delays := &releaseDelays{Retsu: w.retsu}
		w.retsu = delays
		w.run(func(context.Context, domain.Delivery) error { return errors.New("fails") }, httpclient.WorkerOptions{Concurrency: 20, Wait: time.Second})
		eventually(w.t, "20 releases", func() bool { return len(delays.all()) >= 20 })
		seen := map[time.Duration]bool{}
		for _, d := range delays.all() {
			w.is.True(d >= time.Second && d <= 2*time.Second) // the default first backoff: between half of 2 s and 2 s
			w.is.Equal(d, d.Truncate(time.Second))            // in whole seconds, as the API takes them
			seen[d] = true
		}
		w.is.True(len(seen) > 1) // jittered already after the first failure, so that messages that failed together do not come back together
	})
}

// releaseDelays records the delays of the releases made through it.
type releaseDelays struct {
	app.Retsu
	mu     sync.Mutex
	delays []time.Duration
}

func (r *releaseDelays) Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) error {
	r.mu.Lock()
	r.delays = append(r.delays, delay)
	r.mu.Unlock()
	return r.Retsu.Release(ctx, queueID, receipt, delay)
}

func (r *releaseDelays) all() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.delays...)
}

func TestBackoff_DelaySeconds_DoublesWithJitterInWholeSeconds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b := httpclient.Backoff{Initial: 4 * time.Second, Max: 10 * time.Second}
	for attempt, bounds := range map[int][2]time.Duration{1: {2 * time.Second, 4 * time.Second}, 2: {4 * time.Second, 8 * time.Second}, 3: {5 * time.Second, 10 * time.Second}, 9: {5 * time.Second, 10 * time.Second}} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := b.DelaySeconds(attempt)
			is.True(d >= bounds[0] && d <= bounds[1]) // between half of Initial doubled attempt-1 times (at most Max) and all of it
			is.Equal(d, d.Truncate(time.Second))      // in whole seconds
			seen[d] = true
		}
		is.True(len(seen) > 1) // and drawn at random
	}
	is.Equal(httpclient.Backoff{Initial: 500 * time.Millisecond}.DelaySeconds(1), time.Second) // never below the API's 1 s
}

func TestWorker_QueueDeletedWhileHandlersRun_EndsThemAndReturns(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second)}, func(w *workerTest) {
		w.enqueue(2)
		started, causes := make(chan struct{}, 2), make(chan error, 2)
		worker := httpclient.NewWorker(w.retsu, w.queue.ID, func(ctx context.Context, d domain.Delivery) error {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, httpclient.WorkerOptions{Concurrency: 3, Wait: time.Second, OnEvent: w.events.record})
		done := make(chan error, 1)
		go func() { done <- worker.Run(context.Background()) }()
		<-started
		<-started
		w.is.NoErr(w.retsu.DeleteQueue(context.Background(), w.queue.ID))
		for range 2 {
			select {
			case cause := <-causes:
				w.is.True(errors.Is(cause, domain.ErrQueueNotFound)) // the handlers learn that their queue is gone
			case <-time.After(5 * time.Second):
				w.t.Fatal("a handler of a deleted queue was left running")
			}
		}
		select {
		case err := <-done:
			w.is.True(errors.Is(err, domain.ErrQueueNotFound)) // and Run reports it, without waiting for the stop timeout
		case <-time.After(5 * time.Second):
			w.t.Fatal("Run did not return after its queue was deleted")
		}
		w.is.True(w.events.count(httpclient.EventExtendFailed) <= 2) // no extension spins on the deleted queue
	})
}

func TestWorker_AckOutcomeUnknown_RetriedThenReportedUnknown(t *testing.T) {
	t.Parallel()
	forEachBackend(t, domain.SettingsUpdate{VisibilityTimeout: new(30 * time.Second)}, func(w *workerTest) {
		w.enqueue(1)
		lost := &lostAckAnswer{Retsu: w.retsu}
		w.retsu = lost
		w.run(func(context.Context, domain.Delivery) error { return nil }, httpclient.WorkerOptions{Wait: time.Second})
		eventually(w.t, "the acknowledgement's outcome", func() bool {
			return w.events.count(httpclient.EventAckUnknown)+w.events.count(httpclient.EventAckFailed)+w.events.count(httpclient.EventAckLost) >= 1
		})
		w.is.True(lost.calls.Load() >= 2)                         // the acknowledgement was sent again, with the same receipt
		w.is.Equal(w.events.count(httpclient.EventAckFailed), 0)  // its outcome is not reported as a failure
		w.is.Equal(w.events.count(httpclient.EventAckLost), 0)    // nor its retry's false as a lost lease
		w.is.Equal(w.events.count(httpclient.EventAckUnknown), 1) // but as unknown
		ready, delayed, inFlight, _ := w.counts()
		w.is.Equal(ready+delayed+inFlight, int64(0)) // the first attempt did remove it
	})
}

// lostAckAnswer acknowledges for real, but loses the first answer.
type lostAckAnswer struct {
	app.Retsu
	calls atomic.Int64
}

func (l *lostAckAnswer) AcknowledgeMessages(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) ([]bool, error) {
	removed, err := l.Retsu.AcknowledgeMessages(ctx, queueID, receipts)
	if l.calls.Add(1) == 1 && err == nil {
		return nil, &httpclient.TransportError{Method: "POST", Path: "/acknowledge/batch", Err: io.ErrUnexpectedEOF}
	}
	return removed, err
}
