package httpapi

import (
	"context"
	"net/http"
	"time"
)

// This file decides when a routed request starts its work. A request takes a slot of the cap
// on concurrent requests, and works within the request timeout. A dequeue that may wait
// (wait_seconds above 0) counts among the waiting requests instead, which have a cap of
// their own, and its work is bounded by its wait plus the request timeout rather than by the
// request timeout alone.

// admission says how the requests of a route are admitted.
type admission int

const (
	// served requests take a slot of the cap on concurrent requests, then work within the
	// request timeout.
	served admission = iota
	// selfAdmitted requests (the dequeues) read and check their body, then call admit with
	// their wait, which decides their cap.
	selfAdmitted
)

// admitted returns h admitted as admission says.
func (a *api) admitted(admission admission, h handlerFunc) handlerFunc {
	if admission == selfAdmitted {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, leave, err := a.admit(r, 0)
		if err != nil {
			return err
		}
		defer leave()
		return h(w, r.WithContext(ctx))
	}
}

// admit starts the work of a request: it takes a slot of
// the cap on waiting requests when the request may wait (a dequeue with wait above 0), of
// the cap on concurrent requests otherwise, and returns the context of the work and the
// function that ends it. The context keeps the client's cancellation and ends after the
// request timeout, plus the wait. Returns service_unavailable past the cap.
func (a *api) admit(r *http.Request, wait time.Duration) (ctx context.Context, leave func(), err error) {
	limit := a.serving
	if wait > 0 {
		limit = a.waiting
	}
	free, err := limit.enter()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := a.bounded(r.Context(), wait)
	return ctx, func() { cancel(); free() }, nil
}

// bounded returns ctx ending after the request timeout plus wait, when there is a request
// timeout.
func (a *api) bounded(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if a.requestTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, wait+a.requestTimeout)
}

// limiter caps how many requests hold one of its slots at once.
type limiter struct {
	slots chan struct{}
	// full answers a request that finds no free slot.
	full error
}

// newLimiter returns a limiter of max slots, or nil, which has a slot for everyone, when max
// is not positive.
func newLimiter(max int, full error) *limiter {
	if max <= 0 {
		return nil
	}
	return &limiter{slots: make(chan struct{}, max), full: full}
}

// enter takes a slot and returns the function that frees it, or the limiter's error, at
// once, when every slot is taken.
func (l *limiter) enter() (free func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	default:
		return nil, l.full
	}
}
