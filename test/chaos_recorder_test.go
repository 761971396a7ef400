package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retsu/retsu/test/history"
)

// recorder sends a scenario's API requests and records each, with its outcome, in a history.
// It also tallies the answers, and notes those that break the HTTP contract whatever else
// goes wrong: a 500, a 4xx to a valid request, a 503 that is not service_unavailable with
// Retry-After, an error that is not problem+json.
type recorder struct {
	// bases are the instances' addresses; each request goes to the next, in turn, as a load
	// balancer would spread them.
	bases   []string
	next    atomic.Uint64
	client  *http.Client
	h       *history.History
	answers *answerTally
}

// newRecorder returns a recorder of the API at bases (one or more instances). Without
// keepAlive every request has a connection of its own.
func newRecorder(keepAlive bool, bases ...string) *recorder {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		DisableKeepAlives:   !keepAlive,
	}
	return &recorder{
		bases:   bases,
		client:  &http.Client{Transport: transport, Timeout: 10 * time.Second},
		h:       &history.History{},
		answers: &answerTally{statuses: map[int]int{}},
	}
}

// exchange is one request and what came of it.
type exchange struct {
	status     int
	header     http.Header
	body       []byte
	outcome    history.Outcome
	start, end time.Time
}

// apiRequest is one request to send.
type apiRequest struct {
	method, path string
	body         any // sent as JSON; none when nil
	header       map[string]string
	// answers are the problem codes that are answers of the contract to this request, not
	// breaches, such as 409 lease_lost to an extend: their outcome is Failed.
	answers []string
}

// send sends a request with body as JSON (none when nil) and classifies the outcome (see do).
func (r *recorder) send(method, path string, body any) exchange {
	return r.do(apiRequest{method: method, path: path, body: body})
}

// do sends a request to the next instance and classifies the outcome: a success is OK; a
// 4xx, or a connection that could not be made, is Failed; a 5xx, a timeout, a connection
// lost after sending, or an answer cut short is Unknown.
func (r *recorder) do(q apiRequest) exchange {
	var reader io.Reader
	if q.body != nil {
		encoded, err := json.Marshal(q.body)
		if err != nil {
			panic(err)
		}
		reader = bytes.NewReader(encoded)
	}
	base := r.bases[(r.next.Add(1)-1)%uint64(len(r.bases))]
	req, err := http.NewRequest(q.method, base+q.path, reader)
	if err != nil {
		panic(err)
	}
	if q.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, value := range q.header {
		req.Header.Set(name, value)
	}
	if req.Header.Get(idempotencyKeyHeader) != "" {
		// net/http takes a POST with an Idempotency-Key for replayable, and sends it again
		// on a new connection when a kept-alive one broke after the request was written: a
		// dial error of that second try would be recorded as Failed, though the first may
		// have been stored. Without GetBody it sends each request once, as recorded.
		req.GetBody = nil
	}
	x := exchange{start: time.Now()}
	res, err := r.client.Do(req)
	if err != nil {
		x.end, x.outcome = time.Now(), r.answers.transportError(err)
		return x
	}
	x.body, err = io.ReadAll(res.Body)
	res.Body.Close()
	x.end = time.Now()
	if err != nil {
		x.outcome = r.answers.truncatedAnswer()
		return x
	}
	x.status, x.header = res.StatusCode, res.Header
	x.outcome = r.answers.answer(q.method+" "+q.path, res, x.body, q.answers)
	return x
}

// enqueue records an attempt to add a message.
func (r *recorder) enqueue(queueID, payload, priority string) history.Outcome {
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/messages", map[string]string{"payload": payload, "priority": priority})
	e := history.Enqueue{Payload: payload, Start: x.start, End: x.end, Outcome: x.outcome}
	if x.outcome == history.OK {
		var created struct{ ID string }
		if err := json.Unmarshal(x.body, &created); err != nil || created.ID == "" {
			r.answers.breach("enqueue answered %d with %q", x.status, x.body)
			e.Outcome = history.Unknown
		}
		e.MessageID = created.ID
	}
	r.h.AddEnqueue(e)
	return e.Outcome
}

// dequeue records an attempt to take a message; the delivery is nil unless one came.
func (r *recorder) dequeue(queueID string) (*history.Delivery, history.Outcome) {
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/messages/dequeue", nil)
	d := history.Dequeue{Start: x.start, End: x.end, Outcome: x.outcome}
	if x.outcome == history.OK && x.status == http.StatusOK {
		var m message
		if err := json.Unmarshal(x.body, &m); err != nil || m.ID == "" || m.ReceiptHandle == "" {
			r.answers.breach("dequeue answered %d with %q", x.status, x.body)
			d.Outcome = history.Unknown
		} else {
			d.Delivery = &history.Delivery{MessageID: m.ID, Payload: m.Payload, ReceiptHandle: m.ReceiptHandle, Attempts: m.DeliveryAttempts}
		}
	}
	r.h.AddDequeue(d)
	return d.Delivery, d.Outcome
}

// acknowledge records an attempt to complete a delivery.
func (r *recorder) acknowledge(queueID string, d *history.Delivery) history.Outcome {
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/messages/"+d.MessageID+"/acknowledge",
		map[string]string{"receipt_handle": d.ReceiptHandle})
	r.h.AddAcknowledge(history.Acknowledge{MessageID: d.MessageID, ReceiptHandle: d.ReceiptHandle, Start: x.start, End: x.end, Outcome: x.outcome})
	return x.outcome
}

// idempotencyKeyHeader and replayedHeader are the headers of idempotent enqueues.
const (
	idempotencyKeyHeader = "Idempotency-Key"
	replayedHeader       = "Idempotent-Replayed"
)

// keyed returns the request's header and the answers it allows for an idempotency key: none
// without one; with one, 409 idempotency_key_in_use while its first request is uncommitted.
func keyed(key string) (map[string]string, []string) {
	if key == "" {
		return nil, nil
	}
	return map[string]string{idempotencyKeyHeader: key}, []string{"idempotency_key_in_use"}
}

// enqueueKeyed records an attempt to add a message with an idempotency key (none when
// empty), and reports whether its 201 was a replay.
func (r *recorder) enqueueKeyed(queueID, payload, priority, key string) (history.Outcome, bool) {
	header, answers := keyed(key)
	x := r.do(apiRequest{method: http.MethodPost, path: "/v1/queues/" + queueID + "/messages",
		body: map[string]string{"payload": payload, "priority": priority}, header: header, answers: answers})
	e := history.Enqueue{Payload: payload, Key: key, Start: x.start, End: x.end, Outcome: x.outcome}
	if x.outcome == history.OK {
		var created struct{ ID string }
		if err := json.Unmarshal(x.body, &created); err != nil || created.ID == "" {
			r.answers.breach("enqueue answered %d with %q", x.status, x.body)
			e.Outcome = history.Unknown
		}
		e.MessageID, e.Replayed = created.ID, x.header.Get(replayedHeader) == "true"
	}
	r.h.AddEnqueue(e)
	return e.Outcome, e.Replayed
}

// batchEntry is an entry of a batch enqueue.
type batchEntry struct {
	Payload  string `json:"payload"`
	Priority string `json:"priority"`
}

// enqueueBatch records an attempt to add messages in one request, with an idempotency key
// (none when empty), and reports whether its 201 was a replay.
func (r *recorder) enqueueBatch(queueID string, entries []batchEntry, key string) (history.Outcome, bool) {
	header, answers := keyed(key)
	x := r.do(apiRequest{method: http.MethodPost, path: "/v1/queues/" + queueID + "/messages/batch",
		body: map[string]any{"messages": entries}, header: header, answers: answers})
	e := history.BatchEnqueue{Key: key, Start: x.start, End: x.end, Outcome: x.outcome}
	for _, entry := range entries {
		e.Payloads = append(e.Payloads, entry.Payload)
	}
	if x.outcome == history.OK {
		var created struct{ IDs []string }
		if err := json.Unmarshal(x.body, &created); err != nil || len(created.IDs) != len(entries) {
			r.answers.breach("batch enqueue of %d answered %d with %.200q", len(entries), x.status, x.body)
			e.Outcome = history.Unknown
		} else {
			e.MessageIDs, e.Replayed = created.IDs, x.header.Get(replayedHeader) == "true"
		}
	}
	r.h.AddBatchEnqueue(e)
	return e.Outcome, e.Replayed
}

// dequeueBatch records an attempt to take up to max messages, waiting up to wait seconds.
func (r *recorder) dequeueBatch(queueID string, max, wait int) ([]history.Delivery, history.Outcome) {
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/messages/dequeue/batch", map[string]int{"max_messages": max, "wait_seconds": wait})
	d := history.Dequeue{Start: x.start, End: x.end, Outcome: x.outcome}
	if x.outcome == history.OK {
		var got messages
		switch err := json.Unmarshal(x.body, &got); {
		case err != nil || got.Messages == nil || len(got.Messages) > max:
			r.answers.breach("batch dequeue answered %d with %.200q", x.status, x.body)
			d.Outcome = history.Unknown
		default:
			for _, m := range got.Messages {
				d.Deliveries = append(d.Deliveries, history.Delivery{MessageID: m.ID, Payload: m.Payload, ReceiptHandle: m.ReceiptHandle, Attempts: m.DeliveryAttempts})
			}
		}
	}
	r.h.AddDequeue(d)
	return d.Deliveries, d.Outcome
}

// acknowledgeBatch records an attempt to complete deliveries in one request: an entry for
// each, removed or not as its answer says, or of the request's outcome when it is not OK.
func (r *recorder) acknowledgeBatch(queueID string, deliveries []history.Delivery) history.Outcome {
	entries := make([]map[string]string, len(deliveries))
	for i, d := range deliveries {
		entries[i] = map[string]string{"id": d.MessageID, "receipt_handle": d.ReceiptHandle}
	}
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/messages/acknowledge/batch", map[string]any{"messages": entries})
	var answered struct {
		Results []struct {
			ID           string `json:"id"`
			Acknowledged bool   `json:"acknowledged"`
		} `json:"results"`
	}
	outcome := x.outcome
	if outcome == history.OK {
		if err := json.Unmarshal(x.body, &answered); err != nil || len(answered.Results) != len(deliveries) {
			r.answers.breach("batch acknowledgement of %d answered %d with %.200q", len(deliveries), x.status, x.body)
			outcome = history.Unknown
		}
	}
	for i, d := range deliveries {
		a := history.Acknowledge{MessageID: d.MessageID, ReceiptHandle: d.ReceiptHandle, Start: x.start, End: x.end, Outcome: outcome}
		if outcome == history.OK {
			if answered.Results[i].ID != d.MessageID {
				r.answers.breach("batch acknowledgement answered %s for entry %d, %s", answered.Results[i].ID, i, d.MessageID)
			}
			a.Removed = answered.Results[i].Acknowledged
			if !a.Removed {
				a.Outcome = history.Failed
			}
		}
		r.h.AddAcknowledge(a)
	}
	return outcome
}

// extend records an attempt to make a delivery's lease end timeout from now; 409 lease_lost
// is Failed.
func (r *recorder) extend(queueID string, d history.Delivery, timeout time.Duration) history.Outcome {
	x := r.do(apiRequest{method: http.MethodPost, path: "/v1/queues/" + queueID + "/messages/" + d.MessageID + "/extend",
		body:    map[string]any{"receipt_handle": d.ReceiptHandle, "visibility_timeout_seconds": int(timeout / time.Second)},
		answers: []string{"lease_lost"}})
	r.h.AddExtend(history.Extend{MessageID: d.MessageID, ReceiptHandle: d.ReceiptHandle, Timeout: timeout, Start: x.start, End: x.end, Outcome: x.outcome})
	return x.outcome
}

// release records an attempt to end a delivery's lease now, the message to be deliverable
// after delay; 409 lease_lost is Failed.
func (r *recorder) release(queueID string, d history.Delivery, delay time.Duration) history.Outcome {
	x := r.do(apiRequest{method: http.MethodPost, path: "/v1/queues/" + queueID + "/messages/" + d.MessageID + "/release",
		body:    map[string]any{"receipt_handle": d.ReceiptHandle, "delay_seconds": int(delay / time.Second)},
		answers: []string{"lease_lost"}})
	r.h.AddRelease(history.Release{MessageID: d.MessageID, ReceiptHandle: d.ReceiptHandle, Delay: delay, Start: x.start, End: x.end, Outcome: x.outcome})
	return x.outcome
}

// redrive records an attempt to redrive the limit oldest dead letters, and returns the IDs
// it moved.
func (r *recorder) redrive(queueID string, limit int) ([]string, history.Outcome) {
	x := r.send(http.MethodPost, "/v1/queues/"+queueID+"/dead-letters/redrive", map[string]int{"limit": limit})
	rd := history.Redrive{Start: x.start, End: x.end, Outcome: x.outcome}
	if x.outcome == history.OK {
		var moved struct{ Redriven []string }
		if err := json.Unmarshal(x.body, &moved); err != nil || moved.Redriven == nil || len(moved.Redriven) > limit {
			r.answers.breach("redrive answered %d with %.200q", x.status, x.body)
			rd.Outcome = history.Unknown
		}
		rd.Redriven = moved.Redriven
	}
	r.h.AddRedrive(rd)
	return rd.Redriven, rd.Outcome
}

// createQueue creates the scenario's queue, trying again until it gets 201.
func (r *recorder) createQueue(t *testing.T, settings map[string]any) string {
	t.Helper()
	body := map[string]any{"name": uniqueName("chaos")}
	maps.Copy(body, settings)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if x := r.send(http.MethodPost, "/v1/queues", body); x.status == http.StatusCreated {
			var q queue
			if err := json.Unmarshal(x.body, &q); err != nil {
				t.Fatal(err)
			}
			return q.ID
		}
	}
	t.Fatal("could not create the queue within 30 s")
	return ""
}

// answerTally counts what the clients of a scenario got back.
type answerTally struct {
	mu       sync.Mutex
	statuses map[int]int
	// refused counts requests that could not be sent: no connection.
	refused int
	// broken counts requests sent on a connection that broke, or timed out, before an
	// answer began.
	broken int
	// truncated counts answers cut off after their status line.
	truncated int
	// breaches describes the answers that break the HTTP contract.
	breaches []string
}

func (a *answerTally) transportError(err error) history.Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		a.refused++
		return history.Failed
	}
	a.broken++
	return history.Unknown
}

func (a *answerTally) truncatedAnswer() history.Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.truncated++
	return history.Unknown
}

func (a *answerTally) breach(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.breaches = append(a.breaches, fmt.Sprintf(format, args...))
}

// answer counts an answer, notes it if it breaks the contract, and returns its outcome;
// expected are the problem codes that the contract allows for this request.
func (a *answerTally) answer(request string, res *http.Response, body []byte, expected []string) history.Outcome {
	a.mu.Lock()
	a.statuses[res.StatusCode]++
	a.mu.Unlock()
	status := res.StatusCode
	if status < 300 {
		return history.OK
	}
	code := problemCode(res, body)
	switch {
	case code != "" && slices.Contains(expected, code):
	case code == "":
		a.breach("%s: %d answered without problem+json: %.200q", request, status, body)
	case status == http.StatusServiceUnavailable && (code != "service_unavailable" || res.Header.Get("Retry-After") == ""):
		a.breach("%s: 503 with code %s and Retry-After %q", request, code, res.Header.Get("Retry-After"))
	case status != http.StatusServiceUnavailable:
		a.breach("%s: %d %s", request, status, code)
	}
	if status >= 500 {
		return history.Unknown
	}
	return history.Failed
}

// problemCode returns the code of a problem+json answer, or "" when it is not one.
func problemCode(res *http.Response, body []byte) string {
	mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	var p struct{ Code string }
	if mediaType != "application/problem+json" || json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Code
}

func (a *answerTally) count(status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.statuses[status]
}

// String lists the answers by status, then the requests that got none.
func (a *answerTally) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(a.statuses)) {
		parts = append(parts, fmt.Sprintf("%d=%d", status, a.statuses[status]))
	}
	parts = append(parts, fmt.Sprintf("refused=%d broken=%d truncated=%d", a.refused, a.broken, a.truncated))
	return strings.Join(parts, " ")
}
