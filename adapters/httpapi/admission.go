package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/domain"
)

// This file decides when a routed request starts its work. A request holds a slot of the
// cap on concurrent requests only while it is served: its body is read first, so that a
// client that uploads slowly (or stalls) holds a goroutine and its bytes so far, bounded by
// the server's ReadTimeout, but no slot. Probes and /metrics are never behind a cap, so that
// an overloaded instance still answers its load balancer and its monitoring. A dequeue that
// may wait (wait_seconds above 0) counts among the waiting requests instead, which have a cap
// of their own, and its work is bounded by its wait plus the request timeout rather than by
// the request timeout alone.

// admission says how the requests of a route are admitted.
type admission int

const (
	// served requests read their body, then take a slot of the cap on concurrent requests,
	// then work within the request timeout.
	served admission = iota
	// selfAdmitted requests (the dequeues) read and check their body, then call admit with
	// their wait, which decides their cap.
	selfAdmitted
	// uncapped requests (the probes and /metrics) work within the request timeout, whatever
	// the load.
	uncapped
)

// admitted returns h admitted as admission says.
func (a *api) admitted(admission admission, h handlerFunc) handlerFunc {
	switch admission {
	case served:
		return func(w http.ResponseWriter, r *http.Request) error {
			preread(r)
			ctx, leave, err := a.admit(r, 0)
			if err != nil {
				return err
			}
			defer leave()
			return h(w, r.WithContext(ctx))
		}
	case uncapped:
		return func(w http.ResponseWriter, r *http.Request) error {
			ctx, cancel := a.bounded(r.Context(), 0)
			defer cancel()
			return h(w, r.WithContext(ctx))
		}
	}
	return h
}

// admit starts the work of a request, whose body the caller has read: it takes a slot of
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

// limiter caps how many requests hold one of its slots at once; the slots may be shared
// with the process's other listeners.
type limiter struct {
	slots *capacity.Slots
	// full answers a request that finds no free slot.
	full error
}

// enter takes a slot and returns the function that frees it, or the limiter's error, at
// once, when every slot is taken.
func (l *limiter) enter() (free func(), err error) {
	free, ok := l.slots.TryTake()
	if !ok {
		return nil, l.full
	}
	return free, nil
}

// reserveBodyBytes reserves the bytes that the body of a request may take, as it announces
// them or, for a chunked body, the largest body, before anything reads it, and gives them
// back with the answer. Past the budget: 503 with Retry-After, and the connection is closed
// rather than the body read.
func (a *api) reserveBodyBytes(next http.Handler) http.Handler {
	if a.bodyBytes == nil {
		return next
	}
	full := requestError(domain.CodeUnavailable, "the server is at its limit of request bodies in memory; try again shortly")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, ok := a.bodyBytes.TryReserve(bodyReservation(r, MaxBodyBytes))
		if !ok {
			w.Header().Set("Connection", "close")
			a.fail(w, r, full)
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// bodyReservation is what the body of r may take in memory, for a limit of max bytes: its
// announced length, up to one byte past max (enough to tell it is too large), or that for
// a body of unknown length.
func bodyReservation(r *http.Request, max int64) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return max + 1
	}
	return min(r.ContentLength, max+1)
}

// preread reads the body of r, up to one byte more than MaxBodyBytes (enough for readBody
// to tell a body that is too large), and puts what it read, and the error that ended the
// read if any, in its place. A body that announces a length over the limit is left unread:
// readBody refuses it without reading.
func preread(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ContentLength > MaxBodyBytes {
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = &prereadBody{data: bytes.NewReader(data), err: err, body: r.Body}
}

// prereadBody is a body read ahead: its bytes, then the error of the read, if any.
type prereadBody struct {
	data *bytes.Reader
	err  error
	body io.ReadCloser
}

func (b *prereadBody) Read(p []byte) (int, error) {
	n, err := b.data.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}

// Close closes the body read ahead.
func (b *prereadBody) Close() error { return b.body.Close() }
