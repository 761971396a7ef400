package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// statsJSON is the answer of GET /v1/queues/{queue_id}/stats.
type statsJSON struct {
	QueueID    string `json:"queue_id"`
	Priorities []struct {
		Priority              string `json:"priority"`
		Ready                 int64  `json:"ready"`
		Delayed               int64  `json:"delayed"`
		InFlight              int64  `json:"in_flight"`
		DeadLettered          int64  `json:"dead_lettered"`
		OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
	} `json:"priorities"`
}

// stats reads a queue's stats, checking the exact shape of the answer.
func (c *client) stats(queueID string) statsJSON {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodGet, statsPath(queueID), "")
	is.Equal(res.StatusCode, http.StatusOK)                      // stats answer 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as application/json
	body := readAll(c.t, res)
	var s statsJSON
	is.NoErr(jsonUnmarshalStrict(body, &s))                            // with no member beyond those documented
	is.Equal(membersOf(c.t, body), []string{"priorities", "queue_id"}) // and all of them
	var raw struct{ Priorities []json.RawMessage }
	is.NoErr(json.Unmarshal(body, &raw))
	for _, p := range raw.Priorities {
		is.Equal(membersOf(c.t, p), []string{"dead_lettered", "delayed", "in_flight", "oldest_ready_age_seconds", "priority", "ready"}) // each priority has its six members
	}
	return s
}

func TestStats_EnqueueThreeDequeueOneDeadLetterOne(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"orders","visibility_timeout_seconds":1,"max_delivery_attempts":1}`).ID
	c.enqueue(queueID, "h", "HIGH")
	c.enqueue(queueID, "m", "MEDIUM")
	c.enqueue(queueID, "l", "LOW")
	c.dequeue(queueID)               // HIGH, on its only attempt
	c.clock.Advance(2 * time.Second) // its visibility timeout ends
	m, ok := c.dequeue(queueID)      // moves HIGH to the dead letters, delivers MEDIUM
	is.True(ok)
	is.Equal(m.Priority, "MEDIUM")

	s := c.stats(queueID)

	is.Equal(s.QueueID, queueID)   // the queue's ID
	is.Equal(len(s.Priorities), 3) // one entry per priority
	for i, want := range []struct {
		priority                         string
		ready, inFlight, dead, ageSecond int64
	}{
		{"HIGH", 0, 0, 1, 0},   // dead-lettered
		{"MEDIUM", 0, 1, 0, 0}, // in flight
		{"LOW", 1, 0, 0, 2},    // ready, waiting for two seconds
	} {
		p := s.Priorities[i]
		is.Equal(p.Priority, want.priority)               // in delivery order
		is.Equal(p.Ready, want.ready)                     // ready messages
		is.Equal(p.InFlight, want.inFlight)               // messages in flight
		is.Equal(p.DeadLettered, want.dead)               // dead letters
		is.Equal(p.OldestReadyAgeSeconds, want.ageSecond) // the oldest ready message's age in whole seconds
	}
}

func TestStats_DelayedFromEnqueueOrRelease_AreNotReady(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("orders")
	c.enqueueBody(queueID, `{"payload":"later","priority":"HIGH","delay_seconds":60}`)
	c.enqueue(queueID, "now", "LOW")
	m, _ := c.dequeue(queueID)
	res := c.do(http.MethodPost, releasePath(queueID, m.ID), `{"receipt_handle":"`+m.ReceiptHandle+`","delay_seconds":30}`)
	is.Equal(res.StatusCode, http.StatusNoContent) // the delivery is released with a delay

	s := c.stats(queueID)

	high, low := s.Priorities[0], s.Priorities[2]
	is.Equal(high.Delayed, int64(1))           // the message delayed at its enqueue
	is.Equal(high.Ready, int64(0))             // is not ready
	is.Equal(low.Delayed, int64(1))            // the message released with a delay
	is.Equal(low.Ready+low.InFlight, int64(0)) // is neither ready nor in flight
	c.clock.Advance(time.Minute)
	s = c.stats(queueID)
	is.Equal(s.Priorities[0].Ready+s.Priorities[2].Ready, int64(2)) // once the delays end, both are ready
}

func TestStats_EmptyQueue_IsAllZeros(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("idle")

	s := c.stats(strings.ToUpper(queueID))

	is.Equal(s.QueueID, queueID)   // the canonical, lowercase ID, whatever the case asked
	is.Equal(len(s.Priorities), 3) // every priority, counted or not
	for _, p := range s.Priorities {
		is.Equal(p.Ready+p.Delayed+p.InFlight+p.DeadLettered+p.OldestReadyAgeSeconds, int64(0)) // nothing to count
	}
}

func TestStats_UnknownQueue_IsQueueNotFound(t *testing.T) {
	t.Parallel()
	c := setup(t)

	assertProblem(t, c.do(http.MethodGet, statsPath(unknownID), ""), http.StatusNotFound, "queue_not_found")
}

func TestStats_NonCanonicalID_IsInvalidPath(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"orders", "{" + unknownID + "}", strings.ReplaceAll(unknownID, "-", "")} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			c := setup(t)

			assertProblem(t, c.do(http.MethodGet, statsPath(id), ""), http.StatusBadRequest, "invalid_path")
		})
	}
}
