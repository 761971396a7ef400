package httpclient

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/retsu/retsu/domain"
)

// RetryPolicy says how often and how patiently the client repeats a request that is safe to
// repeat: a read, an update, an acknowledgement, an extension, the deletion of one dead
// letter, or an enqueue that carries an Idempotency-Key (every one, unless
// Options.NoEnqueueKeys). It repeats such a request when no answer came (a *TransportError
// other than the context's end), on 503 service_unavailable, and on a proxy's 502 Bad
// Gateway and 504 Gateway Timeout; a keyed enqueue also on 409 idempotency_key_in_use, whose
// retry gets the first request's answer. A request that never reached the server, because the connection
// could not be made, is repeated whatever its route. Dequeues, releases and the other
// requests are sent once otherwise. A zero field takes its default.
type RetryPolicy struct {
	// MaxAttempts is how many times a request is sent at most, the first included; 1 turns
	// retries off. The default is 4.
	MaxAttempts int
	// MinBackoff is the pause before the first retry; each retry doubles it, up to
	// MaxBackoff. Each pause is drawn at random between half of it and all of it (jitter),
	// so that clients that failed together do not retry together. A Retry-After header of
	// the answer lengthens the pause to what it asks. The defaults are 100 ms and 5 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// The defaults of RetryPolicy.
const (
	defaultMaxAttempts = 4
	defaultMinBackoff  = 100 * time.Millisecond
	defaultMaxBackoff  = 5 * time.Second
	// maxRetryAfter is the longest Retry-After the client waits for: a server that asks
	// for more is better reported to the caller at once.
	maxRetryAfter = 30 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = defaultMaxAttempts
	}
	if p.MinBackoff <= 0 {
		p.MinBackoff = defaultMinBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = defaultMaxBackoff
	}
	p.MaxBackoff = max(p.MaxBackoff, p.MinBackoff)
	return p
}

// retrySafety says which failures a request may be repeated after.
type retrySafety int

const (
	// sendOnce repeats only a request that never reached the server.
	sendOnce retrySafety = iota
	// idempotent repeats after a lost answer, a 502, a 503 and a 504 too.
	idempotent
	// keyedEnqueue repeats as idempotent does, and after 409 idempotency_key_in_use.
	keyedEnqueue
)

// pauseBeforeRetry returns how long to wait before sending again a request whose attempt
// (1 for the first) failed with err, and false when it must not be sent again.
func (p RetryPolicy) pauseBeforeRetry(ctx context.Context, safety retrySafety, attempt int, err error) (time.Duration, bool) {
	if attempt >= p.MaxAttempts || ctx.Err() != nil || !retryable(safety, err) {
		return 0, false
	}
	pause := backoff(p.MinBackoff, p.MaxBackoff, attempt)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		if apiErr.RetryAfter > maxRetryAfter {
			return 0, false
		}
		pause = max(pause, apiErr.RetryAfter)
	}
	return pause, true
}

// retryable reports whether err allows another attempt of a request of safety.
func retryable(safety retrySafety, err error) bool {
	var transportErr *TransportError
	if errors.As(err, &transportErr) {
		return neverSent(transportErr) || safety != sendOnce
	}
	var apiErr *Error
	if !errors.As(err, &apiErr) || safety == sendOnce {
		return false
	}
	switch apiErr.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return safety == keyedEnqueue && apiErr.Code == domain.CodeIdempotencyKeyInUse
}

// neverSent reports whether the request failed before reaching the server: the connection
// could not be made.
func neverSent(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// backoff returns the pause after the attempt-th failure: first doubled attempt-1 times, at
// most limit, drawn at random between half of it and all of it.
func backoff(first, limit time.Duration, attempt int) time.Duration {
	d := first
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(d-half+1)
}

// Backoff is an exponential backoff with jitter: the pause after the n-th failure is Initial
// doubled n-1 times, at most Max, drawn at random between half of it and all of it, so that
// callers that failed together do not come back together. A zero field takes the default of
// the option that holds the Backoff.
type Backoff struct {
	Initial, Max time.Duration
}

// withDefaults returns b with initial and limit for its zero fields, and Max at least Initial.
func (b Backoff) withDefaults(initial, limit time.Duration) Backoff {
	if b.Initial <= 0 {
		b.Initial = initial
	}
	if b.Max <= 0 {
		b.Max = limit
	}
	b.Max = max(b.Max, b.Initial)
	return b
}

// Delay returns the pause after the attempt-th failure (1 for the first).
func (b Backoff) Delay(attempt int) time.Duration {
	return backoff(b.Initial, max(b.Max, b.Initial), attempt)
}

// DelaySeconds returns the pause after the attempt-th failure in whole seconds, for the API's
// delays: drawn among the whole seconds between half of the pause and all of it, and at least
// 1 s. An Initial below 2 s therefore has no jitter on the first failure.
func (b Backoff) DelaySeconds(attempt int) time.Duration {
	limit := max(b.Max, b.Initial)
	d := b.Initial
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	most := max(int64(d/time.Second), 1)
	least := min(max((int64(d/time.Second)+1)/2, 1), most)
	return time.Duration(least+rand.N(most-least+1)) * time.Second
}

// sleep waits d, or until ctx ends; it reports whether the whole pause passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
