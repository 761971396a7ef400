package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
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
}

// setup returns a client of a fresh API over empty memory adapters.
func setup(t *testing.T) *client {
	t.Helper()
	clock := memory.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	svc := app.NewService(app.Ports{
		Queues:   memory.NewQueueStore(memory.QueueStoreOptions{}),
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Clock: clock}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{Clock: clock}),
	}, app.Options{})
	return &client{t: t, handler: httpapi.NewHandler(svc, httpapi.Options{}), clock: clock}
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

func queuePath(queueID string) string    { return "/v1/queues/" + queueID }
func messagesPath(queueID string) string { return queuePath(queueID) + "/messages" }
func dequeuePath(queueID string) string  { return messagesPath(queueID) + "/dequeue" }
func statsPath(queueID string) string    { return queuePath(queueID) + "/stats" }
func acknowledgePath(queueID, messageID string) string {
	return messagesPath(queueID) + "/" + messageID + "/acknowledge"
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

// jsonUnmarshalStrict decodes body into v, refusing members v does not have.
func jsonUnmarshalStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// readCloser returns body as a response body again, once a test has read it.
func readCloser(body string) io.ReadCloser { return io.NopCloser(strings.NewReader(body)) }
