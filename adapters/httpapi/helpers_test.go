package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// unknownID is a canonical UUID that names no queue or message.
const unknownID = "019c9a65-7d3a-7c6b-8a9d-123456789abc"

// jsonType is the content type every request body of these tests declares unless a test
// is about the content type.
const jsonType = "application/json"

// client sends requests to one API handler over the memory adapters.
type client struct {
	t       *testing.T
	handler http.Handler
	// clock is the memory stores' time, which tests move past visibility timeouts.
	clock *memory.ManualClock
	// svc is the service behind the handler, which tests close to end the waits.
	svc *app.Service
	// timers counts the timers of the service, the waits' among them.
	timers *timerLog
}

// setup returns a client of a fresh API over empty memory adapters.
func setup(t *testing.T) *client {
	t.Helper()
	return setupWith(t, httpapi.Options{})
}

// setupWith is setup with the handler options o.
func setupWith(t *testing.T, o httpapi.Options) *client {
	t.Helper()
	clock := memory.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	timers := &timerLog{ManualClock: clock, set: map[time.Duration]int{}}
	svc := newService(clock, timers)
	t.Cleanup(svc.Close)
	return &client{t: t, handler: httpapi.NewHandler(svc, o), clock: clock, svc: svc, timers: timers}
}

// timerLog is the service's clock: the stores' manual clock, counting the timers the
// service sets by their duration, so that a test knows when a waiting dequeue has set the
// timer of its wait and moving the clock past it ends the wait.
type timerLog struct {
	*memory.ManualClock
	mu  sync.Mutex
	set map[time.Duration]int
}

func (c *timerLog) AfterFunc(d time.Duration, f func()) func() bool {
	stop := c.ManualClock.AfterFunc(d, f)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set[d]++
	return stop
}

// count returns how many timers of d were set.
func (c *timerLog) count(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set[d]
}

// newService returns a service over fresh memory stores on clock, whose message store
// honours the queue store's deletions. The service times its waits on serviceClock, which
// moves with clock: a test that dequeues with wait_seconds advances it.
func newService(clock *memory.ManualClock, serviceClock ports.Clock) *app.Service {
	queues := memory.NewQueueStore(memory.QueueStoreOptions{Clock: clock})
	return app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Clock: clock, Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{Clock: clock}),
		Clock:    serviceClock,
	}, app.Options{})
}

// newRequest returns a request whose body keeps its length (Content-Length is set); an
// empty contentType sends no Content-Type header.
func newRequest(method, target, contentType, body string) *http.Request {
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, reader)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// hiddenLength is a reader whose length httptest cannot see, so a request built on it has
// ContentLength -1, as a chunked request does.
type hiddenLength struct{ io.Reader }

// newChunkedRequest returns a request whose body announces no length.
func newChunkedRequest(method, target, contentType, body string) *http.Request {
	req := httptest.NewRequest(method, target, hiddenLength{strings.NewReader(body)})
	req.ContentLength = -1
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// send serves req and returns the answer.
func (c *client) send(req *http.Request) *http.Response {
	c.t.Helper()
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, req)
	return rec.Result()
}

// do sends body, if any, as application/json.
func (c *client) do(method, target, body string) *http.Response {
	c.t.Helper()
	contentType := ""
	if body != "" {
		contentType = jsonType
	}
	return c.send(newRequest(method, target, contentType, body))
}

// queueJSON is a queue as the API answers it.
type queueJSON struct {
	ID                       string `json:"id"`
	Name                     string `json:"name"`
	VisibilityTimeoutSeconds int64  `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int64  `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64  `json:"default_message_ttl_seconds"`
}

// messageJSON is a dequeued message as the API answers it.
type messageJSON struct {
	ID               string `json:"id"`
	Payload          string `json:"payload"`
	Priority         string `json:"priority"`
	ReceiptHandle    string `json:"receipt_handle"`
	DeliveryAttempts int    `json:"delivery_attempts"`
}

// The members of the objects the API answers with, sorted.
var (
	queueMembers   = []string{"default_message_ttl_seconds", "id", "max_delivery_attempts", "name", "visibility_timeout_seconds"}
	messageMembers = []string{"delivery_attempts", "id", "payload", "priority", "receipt_handle"}
	problemMembers = []string{"code", "detail", "status", "title", "type"}
)

// createQueue creates a queue from a create body and returns it.
func (c *client) createQueue(body string) queueJSON {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodPost, "/v1/queues", body)
	is.Equal(res.StatusCode, http.StatusCreated) // the queue is created
	return decodeQueue(c.t, res)
}

// createQueueNamed creates a queue with default settings and returns its ID.
func (c *client) createQueueNamed(name string) string {
	c.t.Helper()
	return c.createQueue(`{"name":` + quote(name) + `}`).ID
}

// enqueue adds a message and returns its ID.
func (c *client) enqueue(queueID, payload, priority string) string {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":`+quote(payload)+`,"priority":`+quote(priority)+`}`)
	is.Equal(res.StatusCode, http.StatusCreated) // the message is enqueued
	var created struct {
		ID string `json:"id"`
	}
	is.NoErr(json.Unmarshal(readAll(c.t, res), &created)) // the answer is JSON
	return created.ID
}

// dequeue asks for the next message; ok is false when the answer is 204.
func (c *client) dequeue(queueID string) (m messageJSON, ok bool) {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodPost, dequeuePath(queueID), "")
	if res.StatusCode == http.StatusNoContent {
		return messageJSON{}, false
	}
	is.Equal(res.StatusCode, http.StatusOK)         // a message is delivered
	is.NoErr(json.Unmarshal(readAll(c.t, res), &m)) // the message is JSON
	return m, true
}

// acknowledge completes a delivery and checks the 204.
func (c *client) acknowledge(queueID, messageID, receiptHandle string) {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodPost, acknowledgePath(queueID, messageID), `{"receipt_handle":`+quote(receiptHandle)+`}`)
	is.Equal(res.StatusCode, http.StatusNoContent) // acknowledge answers 204
}

// enqueueBody enqueues a message from a whole request body and returns its ID.
func (c *client) enqueueBody(queueID, body string) string {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodPost, messagesPath(queueID), body)
	is.Equal(res.StatusCode, http.StatusCreated) // the message is enqueued
	var created struct {
		ID string `json:"id"`
	}
	is.NoErr(json.Unmarshal(readAll(c.t, res), &created)) // the answer is JSON
	return created.ID
}

// deadLetter enqueues a message on a queue whose messages have one attempt, lets its only
// delivery end, and dequeues again, which moves it to the dead letters; it returns the ID.
func (c *client) deadLetter(queueID, payload string) string {
	c.t.Helper()
	is := is.New(c.t)
	id := c.enqueue(queueID, payload, "MEDIUM")
	m, ok := c.dequeue(queueID)
	is.True(ok && m.ID == id) // the message is delivered once
	c.clock.Advance(time.Hour)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // the next dequeue moves it to the dead letters and finds nothing else
	return id
}

func queuePath(queueID string) string            { return "/v1/queues/" + queueID }
func messagesPath(queueID string) string         { return queuePath(queueID) + "/messages" }
func batchPath(queueID string) string            { return messagesPath(queueID) + "/batch" }
func dequeuePath(queueID string) string          { return messagesPath(queueID) + "/dequeue" }
func dequeueBatchPath(queueID string) string     { return dequeuePath(queueID) + "/batch" }
func acknowledgeBatchPath(queueID string) string { return messagesPath(queueID) + "/acknowledge/batch" }
func statsPath(queueID string) string            { return queuePath(queueID) + "/stats" }
func deadLettersPath(queueID string) string      { return queuePath(queueID) + "/dead-letters" }
func redrivePath(queueID string) string          { return deadLettersPath(queueID) + "/redrive" }
func deadLetterPath(queueID, messageID string) string {
	return deadLettersPath(queueID) + "/" + messageID
}
func acknowledgePath(queueID, messageID string) string {
	return messagesPath(queueID) + "/" + messageID + "/acknowledge"
}
func extendPath(queueID, messageID string) string {
	return messagesPath(queueID) + "/" + messageID + "/extend"
}
func releasePath(queueID, messageID string) string {
	return messagesPath(queueID) + "/" + messageID + "/release"
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	is := is.New(t)
	body, err := io.ReadAll(res.Body)
	is.NoErr(err) // the answer's body can be read
	return body
}

// membersOf returns the sorted member names of the JSON object in body.
func membersOf(t *testing.T, body []byte) []string {
	t.Helper()
	is := is.New(t)
	var obj map[string]json.RawMessage
	is.NoErr(json.Unmarshal(body, &obj)) // the body is one JSON object
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// decodeQueue checks that res carries exactly a queue as application/json and returns it.
func decodeQueue(t *testing.T, res *http.Response) queueJSON {
	t.Helper()
	is := is.New(t)
	body := readAll(t, res)
	is.Equal(res.Header.Get("Content-Type"), "application/json") // a queue is application/json
	is.Equal(membersOf(t, body), queueMembers)                   // a queue has exactly its five members
	var q queueJSON
	is.NoErr(json.Unmarshal(body, &q)) // the queue decodes
	_, err := domain.ParseID(q.ID)
	is.NoErr(err) // the queue ID is a canonical UUID
	return q
}

// assertProblem checks that res is an application/problem+json answer with status and code,
// holding exactly the five members of the contract.
func assertProblem(t *testing.T, res *http.Response, status int, code string) {
	t.Helper()
	is := is.New(t)
	body := readAll(t, res)
	is.Equal(res.StatusCode, status)                                     // the HTTP status
	is.Equal(res.Header.Get("Content-Type"), "application/problem+json") // errors are problem+json
	is.Equal(res.Header.Get("X-Content-Type-Options"), "nosniff")        // and say so for good
	is.Equal(membersOf(t, body), problemMembers)                         // a problem has exactly five members
	var p struct {
		Type   string          `json:"type"`
		Title  string          `json:"title"`
		Status json.RawMessage `json:"status"`
		Detail string          `json:"detail"`
		Code   string          `json:"code"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	is.NoErr(dec.Decode(&p))                         // every member has its JSON type
	is.Equal(p.Code, code)                           // the stable code
	is.Equal(p.Type, "about:blank")                  // type is about:blank
	is.Equal(p.Title, http.StatusText(status))       // title is the status text
	is.Equal(string(p.Status), strconv.Itoa(status)) // status repeats the HTTP status as a number
	is.True(strings.TrimSpace(p.Detail) != "")       // detail is a human sentence
}

// assertPointedProblem is assertProblem for the error of one entry of a batch: the problem
// has the pointer member besides the five, a JSON Pointer into the request body.
func assertPointedProblem(t *testing.T, res *http.Response, status int, code, pointer string) {
	t.Helper()
	is := is.New(t)
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"code", "detail", "pointer", "status", "title", "type"}) // the five members and the pointer
	var p struct{ Pointer string }
	is.NoErr(json.Unmarshal(body, &p))
	is.Equal(p.Pointer, pointer) // the pointer names the entry's member at fault
	var rest map[string]json.RawMessage
	is.NoErr(json.Unmarshal(body, &rest))
	delete(rest, "pointer")
	others, err := json.Marshal(rest)
	is.NoErr(err)
	res.Body = readCloser(string(others))
	assertProblem(t, res, status, code)
}

// jsonUnmarshalStrict decodes body into v, refusing members v does not have.
func jsonUnmarshalStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// readCloser returns body as a response body again, once a test has read it.
func readCloser(body string) io.ReadCloser { return io.NopCloser(strings.NewReader(body)) }

// syncBuffer is a buffer that a logger may write to while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTextLogger returns a logger of info level and above to w.
func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
