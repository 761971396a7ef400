package httpapi

import (
	"context"
	"net/http"

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
// it does not decide readiness.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) error {
	postgres := stateNotConfigured
	if a.ready != nil {
		if err := a.ready(r.Context()); err != nil {
			return domain.Unavailable(err)
		}
		postgres = stateUp
	}
	return writeJSON(w, http.StatusOK, map[string]string{
		"status":   "ready",
		"postgres": postgres,
		"redis":    probe(r.Context(), a.cacheReady),
	})
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
