package httpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// Handler processes one delivery. Returning nil acknowledges the message; returning an
// error releases it, to come back after a backoff (see WorkerOptions.RetryBackoff), or to
// go to the queue's dead letters once it used its attempts; returning an error that wraps
// ErrGiveUp hands it to WorkerOptions.OnGiveUp.
//
// ctx ends when the worker loses the message's lease (context.Cause(ctx) is then
// domain.ErrLeaseLost: the message will be delivered again, and whatever the handler does
// after that is not acknowledged), when the queue was deleted (the cause is then an error
// with domain.ErrQueueNotFound, and Run returns it), or when the worker stops and the handler outlived
// WorkerOptions.StopTimeout (the cause is ErrWorkerStopped). A handler must return soon
// after its context ends.
type Handler func(ctx context.Context, d domain.Delivery) error

// ErrGiveUp marks a handler's error as final: retrying the message is pointless (it is
// malformed, or asks for something that will never succeed). Wrap it, as in
// fmt.Errorf("%w: unknown customer %q", httpclient.ErrGiveUp, id).
//
// Retsu's API has no operation that moves one message to the dead letters now: a message
// becomes a dead letter only when a dequeue finds it with all its delivery attempts used,
// which keeps that move in one place, inside the claiming transaction. So the worker gives
// up on a message in the only way that loses nothing: it calls WorkerOptions.OnGiveUp,
// which keeps the message where the program wants it (another queue, a table, a log), and
// acknowledges the message only once OnGiveUp returned nil. Without OnGiveUp, or when it
// fails, the error counts as an ordinary failure: the message is released with backoff, and
// ends in the queue's dead letters after its attempts, where it can be listed and redriven.
var ErrGiveUp = errors.New("give up on this message")

// ErrMaxLease is the cause of a handler's context that ended because the handler ran for
// longer than WorkerOptions.MaxLease: the worker stopped extending the lease, and the message
// will be delivered again.
var ErrMaxLease = errors.New("the handler ran past the worker's MaxLease")

// ErrWorkerStopped is the cause of a handler's context that the worker cancelled because it
// stopped (see WorkerOptions.StopTimeout).
var ErrWorkerStopped = errors.New("the worker stopped")

// WorkerOptions configure a Worker; a zero field takes its default.
type WorkerOptions struct {
	// Concurrency is how many handlers run at once; the default is 10.
	Concurrency int
	// Wait is how long a poll waits for a message when none is deliverable, up to
	// domain.MaxWait; the default is domain.MaxWait (20 s). Each poll asks for as many
	// messages as there are idle handlers, up to domain.MaxDequeueBatch.
	Wait time.Duration
	// LeaseTimeout is the visibility timeout that each extension of a running message's
	// lease asks for, in whole seconds; the default is the queue's visibility timeout, read
	// when Run starts. The worker extends a lease at each third of it, so that two
	// extensions in a row may fail before the lease ends. The first extension comes a third
	// of the shorter of LeaseTimeout and the queue's visibility timeout after the poll
	// answered, so that a LeaseTimeout longer than the queue's does not let the dequeue's
	// own lease lapse.
	LeaseTimeout time.Duration
	// MaxLease bounds how long a message is kept leased for one handler, counted from the
	// poll's answer; the default is 12 h (as SQS bounds a message's visibility). The last
	// extension asks only for what is left of it; when that lease ends, the handler's
	// context ends with ErrMaxLease as its cause, its outcome is dropped, and the message
	// is delivered again.
	MaxLease time.Duration
	// AckBatchSize and AckDelay batch the acknowledgements: a batch is sent once it holds
	// AckBatchSize receipts or its first receipt waited AckDelay. The defaults are 100
	// receipts and 50 ms.
	AckBatchSize int
	AckDelay     time.Duration
	// RetryBackoff is the delay of the release of a message after every failure of its
	// handler, the first included: RetryBackoff.DelaySeconds of its delivery attempts, so
	// Initial after its first delivery, doubled with each attempt up to Max, drawn at random
	// between half of it and all of it, in whole seconds (the API's unit). A message that
	// used the queue's attempts is released without delay, so that the next dequeue moves it
	// to the dead letters. The defaults are 2 s and 5 min, so that the first release is
	// already 1 or 2 s at random.
	RetryBackoff Backoff
	// StopTimeout is how long the handlers that run when Run's context ends may go on
	// before their contexts are cancelled; the default is 30 s.
	StopTimeout time.Duration
	// OnGiveUp receives the messages whose handler returned an error wrapping ErrGiveUp,
	// with that error. When it returns nil, the worker acknowledges the message; otherwise
	// the message is released as after any failure.
	OnGiveUp func(ctx context.Context, d domain.Delivery, err error) error
	// OnEvent is told of everything the worker does, for metrics; it must not block.
	OnEvent func(WorkerEvent)
	// Logger receives a line per event: failures at warn level, the rest at debug level.
	// Nil discards them.
	Logger *slog.Logger
}

// The defaults of WorkerOptions.
const (
	defaultConcurrency  = 10
	defaultAckBatchSize = 100
	defaultAckDelay     = 50 * time.Millisecond
	defaultRetryMin     = 2 * time.Second
	defaultRetryMax     = 5 * time.Minute
	defaultStopTimeout  = 30 * time.Second
	defaultMaxLease     = 12 * time.Hour
	// callTimeout bounds each call the worker makes besides its polls.
	callTimeout = 10 * time.Second
	// ackAttempts is how often the worker sends a batch acknowledgement whose outcome stays
	// unknown (each send retried by the client itself as its RetryPolicy says).
	ackAttempts = 3
	// pollStopGrace is how long a poll in flight may go on once the worker stops.
	pollStopGrace = 500 * time.Millisecond
	// pollBackoffMin and pollBackoffMax space the polls after a failed one.
	pollBackoffMin = 100 * time.Millisecond
	pollBackoffMax = 5 * time.Second
)

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = defaultConcurrency
	}
	if o.Wait <= 0 {
		o.Wait = domain.MaxWait
	}
	if o.AckBatchSize <= 0 {
		o.AckBatchSize = defaultAckBatchSize
	}
	o.AckBatchSize = min(o.AckBatchSize, domain.MaxAcknowledgeBatch)
	if o.AckDelay <= 0 {
		o.AckDelay = defaultAckDelay
	}
	o.RetryBackoff = o.RetryBackoff.withDefaults(defaultRetryMin, defaultRetryMax)
	if o.MaxLease <= 0 {
		o.MaxLease = defaultMaxLease
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = defaultStopTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Worker runs a Handler over the deliveries of one queue: polls in batches sized to its
// idle handlers, lease extensions while a handler runs, acknowledgements in batches, and
// releases with backoff after failures. It works over any app.Retsu: a *Client, or an
// embedded *app.Service. Deliveries are at least once: a message whose lease is lost, or
// whose acknowledgement fails, is delivered again.
type Worker struct {
	retsu   app.Retsu
	queueID domain.ID
	handle  Handler
	o       WorkerOptions

	// Set by Run from the queue's settings.
	leaseTimeout, firstLease time.Duration
	maxAttempts              int

	// slots holds a token per message a poll may bring, and per message from the start of
	// its handler until its outcome was handed on.
	slots chan struct{}
	// handlers ends the handlers' contexts once the stop timeout passed.
	handlers      context.Context
	stopHandlers  context.CancelCauseFunc
	acks          *acker
	running, kept sync.WaitGroup
}

// NewWorker returns a worker that runs handle over the deliveries of the queue queueID of
// retsu. Run starts it.
func NewWorker(retsu app.Retsu, queueID domain.ID, handle Handler, o WorkerOptions) *Worker {
	return &Worker{retsu: retsu, queueID: queueID, handle: handle, o: o.withDefaults()}
}

// Run works until ctx ends, then stops gracefully: it polls no more (a poll in flight has
// half a second more to answer), gives back at once the messages a poll brought that no
// handler started, lets the running handlers finish within StopTimeout (then cancels their
// contexts and waits for them), releases or acknowledges their messages, and sends the
// acknowledgements it holds. It returns nil after such a stop. It returns an error, after
// the same stop, when the queue cannot be read at the start or a poll fails for a reason
// that waiting will not cure (the queue was deleted, the token is refused, …); transient
// failures are retried with backoff. When the queue was deleted, the running handlers'
// contexts end at once, with the poll's or the extension's queue_not_found as their cause,
// rather than after StopTimeout. A Worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.start(ctx); err != nil {
		return err
	}
	err := w.poll(ctx)
	w.stop()
	return err
}

// start reads the queue's settings and starts the acknowledgements.
func (w *Worker) start(ctx context.Context) error {
	q, err := w.retsu.Queue(ctx, w.queueID)
	if err != nil {
		return fmt.Errorf("worker of queue %s: %w", w.queueID, err)
	}
	w.leaseTimeout = w.o.LeaseTimeout
	if w.leaseTimeout == 0 {
		w.leaseTimeout = q.VisibilityTimeout
	}
	if err := domain.ValidateLeaseExtension(w.leaseTimeout); err != nil {
		return fmt.Errorf("worker of queue %s: LeaseTimeout: %w", w.queueID, err)
	}
	w.firstLease, w.maxAttempts = min(w.leaseTimeout, q.VisibilityTimeout), q.MaxDeliveryAttempts
	w.slots = make(chan struct{}, w.o.Concurrency)
	w.handlers, w.stopHandlers = context.WithCancelCause(context.WithoutCancel(ctx))
	w.acks = newAcker(w)
	return nil
}

// stop waits for the running handlers, up to the stop timeout, then cancels them and waits
// for the rest, and flushes the acknowledgements; the lease keepers end with them.
func (w *Worker) stop() {
	finished := make(chan struct{})
	go func() {
		w.running.Wait()
		close(finished)
	}()
	timer := time.NewTimer(w.o.StopTimeout)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
		w.stopHandlers(ErrWorkerStopped)
		<-finished
	}
	w.acks.close()
	w.kept.Wait()
	w.stopHandlers(ErrWorkerStopped)
}

// poll takes messages until ctx ends or a poll fails for good, and starts a handler for each.
//
// A poll in flight when ctx ends gets pollStopGrace more to bring its answer, whose messages
// are then given back. Cancelling it at once could drop an answer that the server had
// already sent: its messages would stay hidden until their visibility timeout ended.
func (w *Worker) poll(ctx context.Context) error {
	pollCtx, cancelPolls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPolls()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(pollStopGrace, cancelPolls) })()
	failures := 0
	for {
		n := w.acquire(ctx)
		if n == 0 {
			return nil
		}
		deliveries, err := w.retsu.DequeueMessages(pollCtx, app.DequeueParams{QueueID: w.queueID, Max: n, Wait: w.o.Wait})
		w.releaseSlots(n - len(deliveries))
		switch {
		case ctx.Err() != nil:
			w.giveBack(deliveries)
			return nil
		case err != nil && !transient(err):
			w.emit(WorkerEvent{Kind: EventPollFailed, Err: err})
			if errors.Is(err, domain.ErrQueueNotFound) {
				// The queue's leases went with it: its handlers need not finish.
				w.stopHandlers(err)
			}
			return fmt.Errorf("worker of queue %s: %w", w.queueID, err)
		case err != nil:
			failures++
			w.emit(WorkerEvent{Kind: EventPollFailed, Err: err})
			sleep(ctx, backoff(pollBackoffMin, pollBackoffMax, failures))
			continue
		}
		failures = 0
		received := time.Now()
		w.emit(WorkerEvent{Kind: EventPolled, Count: len(deliveries)})
		for _, d := range deliveries {
			w.running.Add(1)
			go w.process(d, received)
		}
	}
}

// transient reports whether a failed poll may succeed later: the service was unavailable,
// the answer was lost, or something unexpected happened on the server.
func transient(err error) bool {
	switch domain.ErrorCode(err) {
	case domain.CodeUnavailable, domain.CodeInternal:
		return true
	}
	return false
}

// acquire waits for an idle handler, then takes every other idle one, up to a dequeue's
// batch size, and returns how many it took; 0 when ctx ended first.
func (w *Worker) acquire(ctx context.Context) int {
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < domain.MaxDequeueBatch {
		select {
		case w.slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

func (w *Worker) releaseSlots(n int) {
	for range n {
		<-w.slots
	}
}

// giveBack releases at once the deliveries that a poll brought after the worker began to
// stop, which no handler started.
func (w *Worker) giveBack(deliveries []domain.Delivery) {
	for _, d := range deliveries {
		w.release(d, 0, EventGivenBack, nil)
		w.releaseSlots(1)
	}
}
