package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
)

// queueStats answers GET /v1/queues/{queue_id}/stats.
func (a *api) queueStats(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	stats, err := a.svc.Stats(r.Context(), queueID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toQueueStatsJSON(queueID, stats))
}

// healthz answers GET /healthz: the process is alive.
func (a *api) healthz(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers GET /readyz: the instance is ready when it can reach PostgreSQL. Redis'
// state is reported too, but without Redis requests read queue details from PostgreSQL, so
// it does not decide readiness. The states come from the readiness checks, which run at
// most once a second.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) error {
	state, err := a.readiness.state(r.Context())
	switch {
	case err != nil:
		return domain.Unavailable(err)
	case state.postgresErr != nil:
		return domain.Unavailable(state.postgresErr)
	}
	return writeJSON(w, http.StatusOK, map[string]string{
		"status":   "ready",
		"postgres": state.postgres,
		"redis":    state.redis,
	})
}

// readinessLifetime is how long the result of the readiness checks answers /readyz. A
// load balancer probes every few seconds; a flood of probes, from anyone since they need
// no token, then costs PostgreSQL and Redis one ping each a second, not one a probe.
const readinessLifetime = time.Second

// readinessTimeout bounds a run of the readiness checks: the request timeout, or 5 s
// without one.
func readinessTimeout(requestTimeout time.Duration) time.Duration {
	if requestTimeout > 0 {
		return requestTimeout
	}
	return 5 * time.Second
}

// readiness runs the checks of /readyz for every caller at once, and keeps their result
// for readinessLifetime after they end.
type readiness struct {
	postgres, redis func(context.Context) error
	// timeout bounds a run of the checks, which no caller's leaving cuts short.
	timeout time.Duration

	mu      sync.Mutex
	last    readyState
	checked time.Time
	// running is closed when the run in progress ends; nil when none runs.
	running chan struct{}
}

// readyState is what a run of the readiness checks found.
type readyState struct {
	// postgresErr is why PostgreSQL did not answer; nil when it did or is not configured.
	postgresErr     error
	postgres, redis string
}

// state returns the result of the latest run of the checks if it is recent enough, and
// otherwise waits for a run (starting one unless one runs). Returns ctx's error when ctx
// ends first.
func (c *readiness) state(ctx context.Context) (readyState, error) {
	c.mu.Lock()
	if !c.checked.IsZero() && time.Since(c.checked) < readinessLifetime {
		defer c.mu.Unlock()
		return c.last, nil
	}
	running := c.running
	if running == nil {
		running = make(chan struct{})
		c.running = running
		go c.check(running)
	}
	c.mu.Unlock()
	select {
	case <-running:
	case <-ctx.Done():
		return readyState{}, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, nil
}

// check runs the checks, records their result and closes done.
func (c *readiness) check(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	s := readyState{postgres: stateNotConfigured, redis: probe(ctx, c.redis)}
	if c.postgres != nil {
		s.postgres = stateUp
		if s.postgresErr = c.postgres(ctx); s.postgresErr != nil {
			s.postgres = stateDown
		}
	}
	c.mu.Lock()
	c.last, c.checked, c.running = s, time.Now(), nil
	c.mu.Unlock()
	close(done)
}

// serveMetrics answers GET /metrics.
func (a *api) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	a.metrics.ServeHTTP(w, r)
	return nil
}

// The states of a dependency in the answer of /readyz.
const (
	stateUp            = "up"
	stateDown          = "down"
	stateNotConfigured = "not_configured"
)

// probe returns the state of the optional dependency that check reaches; a nil check
// means that it is not configured.
func probe(ctx context.Context, check func(context.Context) error) string {
	switch {
	case check == nil:
		return stateNotConfigured
	case check(ctx) != nil:
		return stateDown
	}
	return stateUp
}
