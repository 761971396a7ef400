package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/retsu/retsu/domain"
)

// priorityStatsJSON counts the messages of one priority of a queue.
type priorityStatsJSON struct {
	Priority              string `json:"priority"`
	Ready                 int64  `json:"ready"`
	InFlight              int64  `json:"in_flight"`
	DeadLettered          int64  `json:"dead_lettered"`
	OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
}

// queueStatsJSON is the answer of GET /v1/queues/{queue_id}/stats.
type queueStatsJSON struct {
	QueueID    domain.ID           `json:"queue_id"`
	Priorities []priorityStatsJSON `json:"priorities"`
}

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
	answer := queueStatsJSON{QueueID: queueID, Priorities: make([]priorityStatsJSON, 0, len(stats.Priorities))}
	for _, p := range stats.Priorities {
		answer.Priorities = append(answer.Priorities, priorityStatsJSON{
			Priority:              p.Priority.String(),
			Ready:                 p.Ready,
			InFlight:              p.InFlight,
			DeadLettered:          p.DeadLettered,
			OldestReadyAgeSeconds: int64(p.OldestReadyAge / time.Second),
		})
	}
	return writeJSON(w, http.StatusOK, answer)
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
