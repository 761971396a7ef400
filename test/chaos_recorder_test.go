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
	"testing"
	"time"

	"github.com/retsu/retsu/test/history"
)

// recorder sends a scenario's API requests and records each, with its outcome, in a history.
// It also tallies the answers, and notes those that break the HTTP contract whatever else
// goes wrong: a 500, a 4xx to a valid request, a 503 that is not service_unavailable with
// Retry-After, an error that is not problem+json.
type recorder struct {
	base    string
	client  *http.Client
	h       *history.History
	answers *answerTally
}

// newRecorder returns a recorder of the API at base. Without keepAlive every request has a
// connection of its own.
func newRecorder(base string, keepAlive bool) *recorder {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		DisableKeepAlives:   !keepAlive,
	}
	return &recorder{
		base:    base,
		client:  &http.Client{Transport: transport, Timeout: 10 * time.Second},
		h:       &history.History{},
		answers: &answerTally{statuses: map[int]int{}},
	}
}

// exchange is one request and what came of it.
type exchange struct {
	status     int
	body       []byte
	outcome    history.Outcome
	start, end time.Time
}

// send sends a request with body as JSON (none when nil) and classifies the outcome: a
// success is OK; a 4xx, or a connection that could not be made, is Failed; a 5xx, a timeout,
// a connection lost after sending, or an answer cut short is Unknown.
func (r *recorder) send(method, path string, body any) exchange {
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequest(method, r.base+path, reader)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
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
	x.status, x.outcome = res.StatusCode, r.answers.answer(method+" "+path, res, x.body)
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

// answer counts an answer, notes it if it breaks the contract, and returns its outcome.
func (a *answerTally) answer(request string, res *http.Response, body []byte) history.Outcome {
	a.mu.Lock()
	a.statuses[res.StatusCode]++
	a.mu.Unlock()
	status := res.StatusCode
	if status < 300 {
		return history.OK
	}
	code := problemCode(res, body)
	switch {
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
