package httpapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// NewHandler returns the API handler that a fuzz target sends its inputs to. It may build
// one per call or return the same handler every time: the targets create a queue of their
// own, with a unique name, for every input.
type NewHandler func(t *testing.T) http.Handler

// Request is a request of a fuzz target's seed corpus. In Target, {queue} names the input's
// queue, {message} its message in flight and {receipt} that delivery's receipt handle.
type Request struct {
	Method, Target, ContentType, IdempotencyKey string
	Body                                        string
	Chunked                                     bool
}

// answerWithin bounds the time a request may take: a dequeue that waits for a message
// (there may be none) is cancelled then, as by a client that gave up.
const answerWithin = 100 * time.Millisecond

// FuzzHandler sends any request to the handler of newHandler, with a queue that holds a
// ready message and a message in flight. No request may get a 5xx; every error is
// problem+json with exactly its five members (six with a batch entry's pointer); every
// success has the shape of the contract. The seeds reach every route of the API.
func FuzzHandler(f *testing.F, newHandler NewHandler) {
	for _, seed := range Seeds {
		f.Add(seed.Method, seed.Target, seed.ContentType, seed.IdempotencyKey, []byte(seed.Body), seed.Chunked)
	}
	f.Fuzz(func(t *testing.T, method, target, contentType, idempotencyKey string, body []byte, chunked bool) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(idempotencyKey, "\r\n\x00") {
			t.Skip("not a request a server could receive")
		}
		h := newHandler(t)
		q := newFixture(t, h)
		req, err := http.NewRequest(method, "http://retsu.test"+q.expand(target), bytes.NewReader(body))
		if err != nil {
			t.Skip("not a request a server could receive")
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if idempotencyKey != "" {
			req.Header.Set("Idempotency-Key", idempotencyKey)
		}
		if chunked {
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), -1
		}

		res, answered := send(h, req)

		if answered {
			AssertContractAnswer(t, res)
		}
	})
}

// FuzzQuery sends any query to the two listings, GET /v1/queues and
// GET /v1/queues/{queue}/dead-letters: the answer is the listing, or 400 invalid_query.
func FuzzQuery(f *testing.F, newHandler NewHandler) {
	for _, seed := range querySeeds {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, rawQuery string, deadLetters bool) {
		h := newHandler(t)
		q := newFixture(t, h)
		path, member := "/v1/queues", "queues"
		if deadLetters {
			path, member = "/v1/queues/"+q.queue+"/dead-letters", "dead_letters"
		}
		req, err := http.NewRequest(http.MethodGet, "http://retsu.test"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = rawQuery

		res, _ := send(h, req)

		AssertContractAnswer(t, res)
		body, _ := io.ReadAll(res.Body)
		switch res.StatusCode {
		case http.StatusOK:
			if names := memberNames(t, body); !slices.Equal(names, []string{member}) {
				t.Fatalf("GET %s?%s answered %s", path, rawQuery, body)
			}
		case http.StatusBadRequest:
			var p struct{ Code string }
			if err := json.Unmarshal(body, &p); err != nil || p.Code != "invalid_query" {
				t.Fatalf("GET %s?%s answered %s, want invalid_query", path, rawQuery, body)
			}
		default:
			t.Fatalf("GET %s?%s answered %d %s", path, rawQuery, res.StatusCode, body)
		}
	})
}

// send serves req within answerWithin; answered is false when that time ran out, whose
// answer nobody would read.
func send(h http.Handler, req *http.Request) (res *http.Response, answered bool) {
	ctx, cancel := context.WithTimeout(req.Context(), answerWithin)
	defer cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	return rec.Result(), ctx.Err() == nil
}

// fixture is the state each input starts from: a queue with a ready message and a message
// in flight.
type fixture struct {
	queue, message, receipt string
}

func newFixture(t *testing.T, h http.Handler) fixture {
	t.Helper()
	var created struct{ ID string }
	do(t, h, http.MethodPost, "/v1/queues", `{"name":"fuzz-`+uuid.NewString()+`"}`, http.StatusCreated, &created)
	q := fixture{queue: created.ID}
	messages := "/v1/queues/" + q.queue + "/messages"
	do(t, h, http.MethodPost, messages, `{"payload":"in flight","priority":"HIGH"}`, http.StatusCreated, nil)
	do(t, h, http.MethodPost, messages, `{"payload":"ready","priority":"LOW"}`, http.StatusCreated, nil)
	var delivered struct {
		ID            string `json:"id"`
		ReceiptHandle string `json:"receipt_handle"`
	}
	do(t, h, http.MethodPost, messages+"/dequeue", "", http.StatusOK, &delivered)
	q.message, q.receipt = delivered.ID, delivered.ReceiptHandle
	return q
}

// expand replaces the placeholders of target.
func (q fixture) expand(target string) string {
	return strings.NewReplacer("{queue}", q.queue, "{message}", q.message, "{receipt}", q.receipt).Replace(target)
}

// do sends a request of the fixture and decodes its answer into v.
func do(t *testing.T, h http.Handler, method, target, body string, status int, v any) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != status {
		t.Fatalf("%s %s: %d %s, want %d", method, target, rec.Code, rec.Body, status)
	}
	if v != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
	}
}

// problemMembers are the members of every problem document; a batch entry's adds pointer.
var problemMembers = []string{"code", "detail", "status", "title", "type"}

// AssertContractAnswer checks any answer of the API: no 5xx, errors as problem+json with
// their members, 204 without a body, and successes with a body as JSON. It leaves res.Body
// readable again.
func AssertContractAnswer(t *testing.T, res *http.Response) {
	t.Helper()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	switch {
	case res.StatusCode >= 500:
		t.Fatalf("the server failed: %d %s", res.StatusCode, body)
	case res.StatusCode >= 400:
		assertProblem(t, res, body)
	case res.StatusCode == http.StatusNoContent:
		if len(body) != 0 {
			t.Fatalf("204 with a body: %q", body)
		}
	case strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain"):
		// GET /metrics: Prometheus' text format.
	case res.Header.Get("Content-Type") != "application/json" || !json.Valid(body):
		t.Fatalf("a success that is not JSON: %s %q", res.Header.Get("Content-Type"), body)
	}
}

// assertProblem checks an error answer: application/problem+json with exactly its members,
// each of its type, the status repeated, and a pointer only into a batch's body.
func assertProblem(t *testing.T, res *http.Response, body []byte) {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("an error as %s: %q", ct, body)
	}
	var p struct {
		Type, Title, Detail, Code string
		Status                    int
		Pointer                   *string
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("a problem that does not decode: %v: %q", err, body)
	}
	want := problemMembers
	if p.Pointer != nil {
		want = append(slices.Clone(problemMembers), "pointer")
		slices.Sort(want)
		if !strings.HasPrefix(*p.Pointer, "/messages/") && !strings.HasPrefix(*p.Pointer, "/ids/") {
			t.Fatalf("a pointer outside a batch: %q", body)
		}
	}
	switch names := memberNames(t, body); {
	case !slices.Equal(names, want):
		t.Fatalf("a problem with members %v: %q", names, body)
	case p.Type != "about:blank" || p.Title != http.StatusText(res.StatusCode) || p.Status != res.StatusCode:
		t.Fatalf("a problem whose type, title or status is wrong: %d %q", res.StatusCode, body)
	case p.Code == "" || strings.TrimSpace(p.Detail) == "":
		t.Fatalf("a problem without code or detail: %q", body)
	}
}

// memberNames returns the sorted member names of the JSON object body.
func memberNames(t *testing.T, body []byte) []string {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("not a JSON object: %v: %q", err, body)
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// unknownID names no queue, message or dead letter.
const unknownID = "019c9a65-7d3a-7c6b-8a9d-123456789abc"

// Seeds reach every route and method of the API, with valid and invalid inputs.
var Seeds = []Request{
	{Method: "POST", Target: "/v1/queues", ContentType: "application/json", Body: `{"name":"orders","visibility_timeout_seconds":60,"max_delivery_attempts":3,"default_message_ttl_seconds":86400}`},
	{Method: "POST", Target: "/v1/queues", ContentType: "application/json; charset=utf-8", Body: `{"name":"orders"}`, Chunked: true},
	{Method: "POST", Target: "/v1/queues", ContentType: "application/json", Body: `{"name":"a","name":"b"}`},
	{Method: "POST", Target: "/v1/queues", ContentType: "application/json", Body: "{\"name\":\"\xff\"}"},
	{Method: "GET", Target: "/v1/queues?name=orders&limit=2&after=a"},
	{Method: "GET", Target: "/v1/queues?after=%FF"},
	{Method: "GET", Target: "/v1/queues/{queue}"},
	{Method: "GET", Target: "/v1/queues/{" + unknownID + "}"},
	{Method: "PATCH", Target: "/v1/queues/{queue}", ContentType: "application/json", Body: `{"max_delivery_attempts":1e999999999}`},
	{Method: "PATCH", Target: "/v1/queues/{queue}", ContentType: "application/json", Body: `{"visibility_timeout_seconds":60}`},
	{Method: "DELETE", Target: "/v1/queues/{queue}"},
	{Method: "POST", Target: "/v1/queues/{queue}/messages", ContentType: "application/json", Body: `{"payload":"send welcome email","priority":"HIGH","ttl_seconds":3600}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages", ContentType: "Application/JSON", Body: `{"payload":"\u0000\ud83d\ude00\\\"","priority":"MEDIUM","delay_seconds":5}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages", ContentType: "application/json", IdempotencyKey: "order-42", Body: `{"payload":"a","priority":"LOW"}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages", ContentType: "application/json", IdempotencyKey: "has space", Body: `{"payload":"a","priority":"LOW"}`},
	{Method: "DELETE", Target: "/v1/queues/{queue}/messages"},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/batch", ContentType: "application/json", IdempotencyKey: "k", Body: `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b","priority":"HIGH","ttl_seconds":60,"delay_seconds":1}]}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/batch", ContentType: "application/json", Body: `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b","priority":"URGENT"}]}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/batch", ContentType: "application/json", Body: `{"messages":[{"payload":1},"x",null]}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/dequeue"},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/dequeue", ContentType: "application/json", Body: `{}`, Chunked: true},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/dequeue", ContentType: "application/json", Body: `{"wait_seconds":1}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/dequeue/batch", ContentType: "application/json", Body: `{"max_messages":100,"wait_seconds":0}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/dequeue/batch", ContentType: "application/json", Body: `{"max_messages":0}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/{message}/acknowledge", ContentType: "application/json", Body: `{"receipt_handle":"{receipt}"}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/" + unknownID + "/acknowledge", ContentType: "application/json", Body: `{"receipt_handle":"` + unknownID + `"}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/acknowledge/batch", ContentType: "application/json", Body: `{"messages":[{"id":"` + unknownID + `","receipt_handle":"` + unknownID + `"},{"id":"x"}]}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/{message}/extend", ContentType: "application/json", Body: `{"visibility_timeout_seconds":60}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/" + unknownID + "/extend", ContentType: "application/json", Body: `{"receipt_handle":"` + unknownID + `","visibility_timeout_seconds":43201}`},
	{Method: "POST", Target: "/v1/queues/{queue}/messages/{message}/release", ContentType: "application/json", Body: `{"delay_seconds":10}`},
	{Method: "GET", Target: "/v1/queues/{queue}/dead-letters?limit=10&after=" + unknownID},
	{Method: "DELETE", Target: "/v1/queues/{queue}/dead-letters"},
	{Method: "GET", Target: "/v1/queues/{queue}/dead-letters/" + unknownID},
	{Method: "DELETE", Target: "/v1/queues/{queue}/dead-letters/" + unknownID},
	{Method: "POST", Target: "/v1/queues/{queue}/dead-letters/redrive", ContentType: "application/json", Body: `{"ids":["` + unknownID + `"]}`},
	{Method: "POST", Target: "/v1/queues/{queue}/dead-letters/redrive", ContentType: "application/json", Body: `{"limit":10,"ids":[]}`},
	{Method: "GET", Target: "/v1/queues/{queue}/stats"},
	{Method: "GET", Target: "/healthz"},
	{Method: "GET", Target: "/readyz"},
	{Method: "GET", Target: "/v1/topics"},
	{Method: "PUT", Target: "/v1/queues"},
	{Method: "OPTIONS", Target: "/v1/queues/{queue}/messages"},
}

// querySeeds are queries of the two listings.
var querySeeds = []string{
	"", "limit=1", "limit=1000", "limit=0", "limit=-1", "limit=1e3", "limit=" + strconv.Itoa(1<<40),
	"name=emails", "name=", "after=emails", "after=%FF", "after=%00", "after=%C3%28", "after=%zz", "after=%",
	"after=" + unknownID, "after=" + strings.ToUpper(unknownID), "after=" + unknownID + "&limit=2",
	"name=a&name=b", "colour=blue", "name=a;limit=1", "limit=1&limit=2", "after=" + strings.Repeat("z", 1025),
	fmt.Sprintf("after=%s", strings.Repeat("%C3%A9", 300)),
}
