package httpclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retsu/retsu/domain"
)

// This file is the life of one delivery in a Worker: its handler, its lease, and its end
// (acknowledgement, release or give-up).

// process runs the handler of d, which a poll answered at receivedAt, under a kept lease and
// settles the outcome.
func (w *Worker) process(d domain.Delivery, receivedAt time.Time) {
	defer w.running.Done()
	// The slot is free once the outcome is handed on (queued for acknowledgement, or
	// released), so that a poll never asks for a message that no handler could start.
	defer w.releaseSlots(1)
	l := w.keepLease(d, receivedAt)
	started := time.Now()
	err := w.runHandler(l.ctx, d)
	took := time.Since(started)
	cause := context.Cause(l.ctx)
	l.endHandler(nil)
	switch {
	case errors.Is(cause, domain.ErrLeaseLost), errors.Is(cause, ErrMaxLease), errors.Is(cause, domain.ErrQueueNotFound):
		// The message will be delivered again, or its queue is gone; nothing this delivery
		// does counts.
		l.stop()
	case err == nil:
		w.emit(WorkerEvent{Kind: EventHandled, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Duration: took})
		w.acks.add(d, l.stop)
	case errors.Is(cause, ErrWorkerStopped):
		l.stop()
		w.release(d, 0, EventGivenBack, err)
	case errors.Is(err, ErrGiveUp) && w.o.OnGiveUp != nil:
		w.giveUp(d, err, l)
	default:
		l.stop()
		w.release(d, w.retryDelay(d), EventReleased, err)
	}
}

// runHandler calls the handler, turning a panic into an error so that the message is
// released rather than the process brought down.
func (w *Worker) runHandler(ctx context.Context, d domain.Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the handler panicked: %v", p)
		}
	}()
	return w.handle(ctx, d)
}

// giveUp hands d to OnGiveUp while its lease is kept, then acknowledges it; should OnGiveUp
// fail, d is released as after any failure.
func (w *Worker) giveUp(d domain.Delivery, handlerErr error, l *lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.handlers), callTimeout)
	err := w.o.OnGiveUp(ctx, d, handlerErr)
	cancel()
	if err != nil {
		l.stop()
		w.emit(WorkerEvent{Kind: EventGiveUpFailed, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: err})
		w.release(d, w.retryDelay(d), EventReleased, handlerErr)
		return
	}
	w.emit(WorkerEvent{Kind: EventGaveUp, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: handlerErr})
	w.acks.add(d, l.stop)
}

// retryDelay returns the delay of the release of d after a failure: the jittered backoff of
// its attempts, in whole seconds, or none once it used the queue's attempts, since the next
// dequeue then moves it to the dead letters.
func (w *Worker) retryDelay(d domain.Delivery) time.Duration {
	if d.DeliveryAttempts >= w.maxAttempts {
		return 0
	}
	return min(w.o.RetryBackoff.DelaySeconds(d.DeliveryAttempts), domain.MaxReleaseDelay)
}

// release ends the lease of d with delay and reports it as kind, with the handler's error
// cause. Should the release fail, the message comes back when its lease ends.
func (w *Worker) release(d domain.Delivery, delay time.Duration, kind WorkerEventKind, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	event := WorkerEvent{Kind: kind, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Delay: delay, Err: cause}
	switch err := w.retsu.Release(ctx, w.queueID, d.Receipt(), delay); {
	case errors.Is(err, domain.ErrLeaseLost):
		event = WorkerEvent{Kind: EventLeaseLost, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: err}
	case err != nil:
		event = WorkerEvent{Kind: EventReleaseFailed, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: err}
	}
	w.emit(event)
}

// lease is the kept lease of one delivery, and the context of its handler.
type lease struct {
	// ctx is the handler's; it ends with domain.ErrLeaseLost as its cause when an
	// extension finds the lease lost, with domain.ErrQueueNotFound when it finds the queue
	// deleted, and with ErrMaxLease once MaxLease is reached.
	ctx        context.Context
	endHandler context.CancelCauseFunc
	stopKeeper context.CancelFunc
	kept       chan struct{}
}

// keepLease starts extending the lease of d, which a poll answered at receivedAt, until stop.
func (w *Worker) keepLease(d domain.Delivery, receivedAt time.Time) *lease {
	l := &lease{kept: make(chan struct{})}
	l.ctx, l.endHandler = context.WithCancelCause(w.handlers)
	keeperCtx, stopKeeper := context.WithCancel(context.Background())
	l.stopKeeper = stopKeeper
	w.kept.Add(1)
	go func() {
		defer w.kept.Done()
		defer close(l.kept)
		w.keep(keeperCtx, d, receivedAt, l.endHandler)
	}()
	return l
}

// stop ends the extensions and waits until none is in flight.
func (l *lease) stop() {
	l.stopKeeper()
	<-l.kept
}

// keep extends the lease of d until ctx ends, the lease is lost or MaxLease is reached, which
// it reports to end. The first lease is the dequeue's, counted from receivedAt (the poll's
// answer, not the handler's start) and taken as long as the shorter of the queue's visibility
// timeout and LeaseTimeout; each extension starts a lease of LeaseTimeout from when it was
// sent. An extension is sent at each third of the current lease, so that two in a row may
// fail before it ends. The last one asks only for what is left of MaxLease; once that lease
// ends, the handler's context ends with ErrMaxLease.
func (w *Worker) keep(ctx context.Context, d domain.Delivery, receivedAt time.Time, end context.CancelCauseFunc) {
	leaseStart, leaseLength := receivedAt, w.firstLease
	limit := receivedAt.Add(w.o.MaxLease)
	for third := 1; ; third++ {
		at := leaseStart.Add(time.Duration(third) * leaseLength / 3)
		timeout := min(w.leaseTimeout, limit.Sub(at).Truncate(time.Second))
		if timeout < domain.MinLeaseExtension {
			if sleepUntil(ctx, leaseStart.Add(leaseLength)) {
				end(ErrMaxLease)
				w.emit(WorkerEvent{Kind: EventLeaseLimit, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: ErrMaxLease})
			}
			return
		}
		if !sleepUntil(ctx, at) {
			return
		}
		sent := time.Now()
		// An answer after the current lease ended is of no use: this one is lost anyway.
		callCtx, cancel := context.WithTimeout(ctx, leaseLength)
		err := w.retsu.Extend(callCtx, w.queueID, d.Receipt(), timeout)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, domain.ErrLeaseLost), errors.Is(err, domain.ErrQueueNotFound):
			end(err)
			w.emit(WorkerEvent{Kind: EventLeaseLost, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: err})
			return
		case err != nil:
			w.emit(WorkerEvent{Kind: EventExtendFailed, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Err: err})
		default:
			w.emit(WorkerEvent{Kind: EventExtended, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts})
			leaseStart, leaseLength, third = sent, timeout, 0
		}
	}
}

// sleepUntil waits until t, or until ctx ends; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return sleep(ctx, time.Until(t))
}
