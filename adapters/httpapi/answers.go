package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/retsu/retsu/domain"
)

// This file writes successful answers; problem.go writes the errors.

// queueJSON is a queue as the API shows it.
type queueJSON struct {
	ID                       domain.ID `json:"id"`
	Name                     string    `json:"name"`
	VisibilityTimeoutSeconds int64     `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int       `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64     `json:"default_message_ttl_seconds"`
}

func toQueueJSON(q domain.Queue) queueJSON {
	return queueJSON{
		ID:                       q.ID,
		Name:                     q.Name,
		VisibilityTimeoutSeconds: int64(q.VisibilityTimeout / time.Second),
		MaxDeliveryAttempts:      q.MaxDeliveryAttempts,
		DefaultMessageTTLSeconds: int64(q.DefaultMessageTTL / time.Second),
	}
}

// enqueuedJSON and batchEnqueuedJSON are the answers of an enqueue and of a batch enqueue.
type (
	enqueuedJSON struct {
		ID domain.ID `json:"id"`
	}
	batchEnqueuedJSON struct {
		IDs []domain.ID `json:"ids"`
	}
)

// messageJSON is a delivered message as the API shows it.
type messageJSON struct {
	ID               domain.ID `json:"id"`
	Payload          string    `json:"payload"`
	Priority         string    `json:"priority"`
	ReceiptHandle    domain.ID `json:"receipt_handle"`
	DeliveryAttempts int       `json:"delivery_attempts"`
}

func toMessageJSON(d domain.Delivery) messageJSON {
	return messageJSON{d.MessageID, d.Payload, d.Priority.String(), d.ReceiptHandle, d.DeliveryAttempts}
}

// acknowledgedJSON is the answer of a batch acknowledgement, one result per entry.
type acknowledgedJSON struct {
	Results []acknowledgementJSON `json:"results"`
}

type acknowledgementJSON struct {
	ID           domain.ID `json:"id"`
	Acknowledged bool      `json:"acknowledged"`
}

func toAcknowledgedJSON(receipts []domain.Receipt, removed []bool) acknowledgedJSON {
	answer := acknowledgedJSON{Results: make([]acknowledgementJSON, len(receipts))}
	for i, r := range receipts {
		answer.Results[i] = acknowledgementJSON{ID: r.MessageID, Acknowledged: i < len(removed) && removed[i]}
	}
	return answer
}

// deadLetterJSON is a dead letter as the API shows it.
type deadLetterJSON struct {
	ID               domain.ID `json:"id"`
	Payload          string    `json:"payload"`
	Priority         string    `json:"priority"`
	DeliveryAttempts int       `json:"delivery_attempts"`
	EnqueuedAt       string    `json:"enqueued_at"`
	DeadLetteredAt   string    `json:"dead_lettered_at"`
}

func toDeadLetterJSON(d domain.DeadLetter) deadLetterJSON {
	return deadLetterJSON{
		ID:               d.MessageID,
		Payload:          d.Payload,
		Priority:         d.Priority.String(),
		DeliveryAttempts: d.DeliveryAttempts,
		EnqueuedAt:       formatTime(d.EnqueuedAt),
		DeadLetteredAt:   formatTime(d.DeadLetteredAt),
	}
}

// deletedJSON counts what a purge or a deletion of dead letters removed.
type deletedJSON struct {
	Deleted int `json:"deleted"`
}

// redrivenJSON lists the dead letters a redrive moved.
type redrivenJSON struct {
	Redriven []domain.ID `json:"redriven"`
}

// nonNil returns ids, or an empty slice for nil, so that the answer holds [] rather than
// null.
func nonNil(ids []domain.ID) []domain.ID {
	if ids == nil {
		return []domain.ID{}
	}
	return ids
}

// timeLayout is RFC 3339 in UTC with microseconds, always six digits, so that answers sort
// and compare as text: 2026-12-01T20:59:52.123456Z.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// formatTime spells t in timeLayout, truncated to the microsecond, PostgreSQL's precision.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// priorityStatsJSON counts the messages of one priority of a queue.
type priorityStatsJSON struct {
	Priority              string `json:"priority"`
	Ready                 int64  `json:"ready"`
	Delayed               int64  `json:"delayed"`
	InFlight              int64  `json:"in_flight"`
	DeadLettered          int64  `json:"dead_lettered"`
	OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
}

// queueStatsJSON is the answer of GET /v1/queues/{queue_id}/stats.
type queueStatsJSON struct {
	QueueID    domain.ID           `json:"queue_id"`
	Priorities []priorityStatsJSON `json:"priorities"`
}

func toQueueStatsJSON(queueID domain.ID, stats domain.QueueStats) queueStatsJSON {
	answer := queueStatsJSON{QueueID: queueID, Priorities: make([]priorityStatsJSON, 0, len(stats.Priorities))}
	for _, p := range stats.Priorities {
		answer.Priorities = append(answer.Priorities, priorityStatsJSON{
			Priority:              p.Priority.String(),
			Ready:                 p.Ready,
			Delayed:               p.Delayed,
			InFlight:              p.InFlight,
			DeadLettered:          p.DeadLettered,
			OldestReadyAgeSeconds: int64(p.OldestReadyAge / time.Second),
		})
	}
	return answer
}

// writeJSON answers v as JSON with the given status, encoded straight into w. The status and
// headers go out with the first byte of the body, which encoding/json writes only once it
// has encoded the whole of v: an encoding error therefore leaves the answer unstarted, to be
// answered as a problem.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body := &answerBody{w: w, status: status}
	enc := json.NewEncoder(body)
	enc.SetEscapeHTML(false)
	return body.result(enc.Encode(v))
}

// writeList answers {"<member>":[…]} with the given status, the entries converted by toJSON
// and encoded one at a time, so that a page of large entries (a dead letter's payload may
// take 6 MiB once escaped) is never held encoded in memory whole. Each entry is encoded
// before any of it is written, so that an error in the first leaves the answer unstarted;
// one in a later entry ends an answer already on its way, which the caller cannot undo (see
// problemWriter.write). None is expected: the entries are our own structs.
func writeList[E, J any](w http.ResponseWriter, status int, member string, entries []E, toJSON func(E) J) error {
	body := &answerBody{w: w, status: status}
	var entry bytes.Buffer
	enc := json.NewEncoder(&entry)
	enc.SetEscapeHTML(false)
	separator := `{"` + member + `":[`
	for _, e := range entries {
		entry.Reset()
		if err := enc.Encode(toJSON(e)); err != nil {
			return body.result(err)
		}
		body.write([]byte(separator), bytes.TrimSuffix(entry.Bytes(), []byte("\n")))
		if body.writeErr != nil {
			return nil // the client went away: spare encoding the rest
		}
		separator = ","
	}
	if len(entries) == 0 {
		body.write([]byte(separator))
	}
	body.write([]byte("]}\n"))
	return nil
}

// answerBody writes the body of a JSON answer into w, sending the status and the JSON
// headers with its first bytes.
type answerBody struct {
	w       http.ResponseWriter
	status  int
	started bool
	// writeErr is the first error of writing to the connection: the client went away.
	writeErr error
}

// write writes parts in turn, until one fails.
func (b *answerBody) write(parts ...[]byte) {
	for _, p := range parts {
		_, _ = b.Write(p)
	}
}

func (b *answerBody) Write(p []byte) (int, error) {
	if b.writeErr != nil {
		return 0, b.writeErr
	}
	if !b.started {
		b.started = true
		b.w.Header().Set("Content-Type", "application/json")
		b.w.WriteHeader(b.status)
	}
	n, err := b.w.Write(p)
	b.writeErr = err
	return n, err
}

// result returns the error of an answer that could not be encoded. An error of the
// connection is none: the client went away, and nobody is left to answer.
func (b *answerBody) result(err error) error {
	if err == nil || b.writeErr != nil {
		return nil
	}
	return fmt.Errorf("encode answer: %w", err)
}
