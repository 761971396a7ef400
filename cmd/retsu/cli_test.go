package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
)

// api is a Retsu API over memory stores, for the client commands to talk to.
type api struct {
	t   *testing.T
	url string
}

func newAPI(t *testing.T) *api {
	t.Helper()
	return newAPIWith(t, func(h http.Handler) http.Handler { return h })
}

// newAPIWith returns an api whose handler wrap wraps, to change what reaches it.
func newAPIWith(t *testing.T, wrap func(http.Handler) http.Handler) *api {
	t.Helper()
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	server := httptest.NewServer(wrap(httpapi.NewHandler(svc, httpapi.Options{})))
	t.Cleanup(server.Close)
	t.Cleanup(svc.Close)
	return &api{t: t, url: server.URL}
}

// result is what a command printed and its exit status.
type result struct {
	status         int
	stdout, stderr string
}

// lines returns the lines of stdout.
func (r result) lines() []string { return strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") }

// run runs the command line args of retsu against the API with stdin, as main does.
func (a *api) run(stdin string, args ...string) result {
	a.t.Helper()
	lookupEnv := func(name string) (string, bool) {
		if name == "RETSU_URL" {
			return a.url, true
		}
		return "", false
	}
	var stdout, stderr strings.Builder
	var err error
	if len(args) > 0 && args[0] != "help" {
		err = runClientWith(context.Background(), args[0], args[1:], lookupEnv, strings.NewReader(stdin), &stdout, &stderr)
	} else {
		err = run(context.Background(), args, lookupEnv, &stdout, &stderr)
	}
	status := exitStatus(err, &stderr)
	return result{status, stdout.String(), stderr.String()}
}

// ok runs args and fails the test unless they succeed.
func (a *api) ok(stdin string, args ...string) result {
	a.t.Helper()
	r := a.run(stdin, args...)
	if r.status != 0 {
		a.t.Fatalf("retsu %s: status %d\n%s", strings.Join(args, " "), r.status, r.stderr)
	}
	return r
}

// createQueue creates a queue with a fresh name and the flags, and returns its name.
func (a *api) createQueue(flags ...string) string {
	a.t.Helper()
	name := fmt.Sprintf("q%d", queueNumbers.Add(1))
	a.ok("", append([]string{"queues", "create", name}, flags...)...)
	return name
}

// queueNumbers numbers the queues of the tests.
var queueNumbers atomic.Int64

// jsonLines decodes each line of stdout.
func jsonLines(t *testing.T, r result) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range r.lines() {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

// ready returns the ready, in-flight and dead-lettered messages that queues stats --json
// reports.
func (a *api) ready(queue string) (ready, inFlight, dead float64) {
	a.t.Helper()
	stats := jsonLines(a.t, a.ok("", "queues", "stats", queue, "--json"))[0]
	for _, p := range stats["priorities"].([]any) {
		counts := p.(map[string]any)
		ready, inFlight, dead = ready+counts["ready"].(float64), inFlight+counts["in_flight"].(float64), dead+counts["dead_lettered"].(float64)
	}
	return ready, inFlight, dead
}

func TestCLI_Queues_Lifecycle(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	created := jsonLines(t, a.ok("", "queues", "create", "emails", "--visibility-timeout", "45s", "--max-delivery-attempts", "3", "--json"))[0]
	is.Equal(created["visibility_timeout_seconds"], 45.0) // the settings given
	is.Equal(created["max_delivery_attempts"], 3.0)
	is.Equal(created["default_message_ttl_seconds"], 604800.0) // and the defaults of the others
	got := a.ok("", "queues", "get", "emails")
	is.True(strings.Contains(got.lines()[1], "45s")) // a table for a terminal, found by name
	updated := jsonLines(t, a.ok("", "queues", "update", created["id"].(string), "--default-ttl", "2d", "--json"))[0]
	is.Equal(updated["default_message_ttl_seconds"], 172800.0) // found by ID, and changed
	is.Equal(updated["visibility_timeout_seconds"], 45.0)      // only what was given
	is.Equal(len(a.ok("", "queues", "list").lines()), 2)       // a header and the queue
	a.ok("", "send", "emails", "hello")
	is.Equal(a.ok("", "queues", "purge", "emails").stdout, "deleted 1 messages\n")
	is.True(strings.HasPrefix(a.ok("", "queues", "delete", "emails").stdout, "deleted queue "))
	gone := a.run("", "queues", "get", "emails")
	is.Equal(gone.status, 1)                                  // a failed call
	is.True(strings.Contains(gone.stderr, "queue_not_found")) // names the API's code
}

func TestCLI_EmptyQueueName_FindsNoQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	a.createQueue()

	got := a.run("", "queues", "get", "")

	is.Equal(got.status, 1)                                  // no queue is named "", not even the first one
	is.True(strings.Contains(got.stderr, "queue_not_found")) // names the API's code
}

func TestCLI_SendLines_ThenReceiveAndAcknowledge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue()
	var input strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&input, "line %d\n", i)
	}
	sent := a.ok(input.String(), "send", q, "--lines")
	is.Equal(len(sent.lines()), 2500) // one ID per line sent
	ready, _, _ := a.ready(q)
	is.Equal(ready, 2500.0) // every line is a message
	received := jsonLines(t, a.ok("", "receive", q, "--max", "250", "--ack", "--json"))
	is.Equal(len(received), 250)                  // --max across dequeues of 100
	is.Equal(received[0]["payload"], "line 0")    // in enqueue order
	is.Equal(received[249]["acknowledged"], true) // each acknowledged
	ready, inFlight, _ := a.ready(q)
	is.Equal([]float64{ready, inFlight}, []float64{2250, 0}) // and removed
}

func TestCLI_SendLines_BatchesStayUnderTheBodyLimit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue()
	line := strings.Repeat("<", 50_000) // 300 kB once escaped as \u003c
	input := strings.Repeat(line+"\n", 12)
	sent := a.ok(input, "send", q, "--lines")
	is.Equal(len(sent.lines()), 12) // every line sent, in requests under 1 MiB
	received := jsonLines(t, a.ok("", "receive", q, "--json"))
	is.Equal(received[0]["payload"], line) // as it was
}

func TestCLI_Send_ArgumentOrStdin(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue()
	a.ok("", "send", q, "--priority", "LOW", "from the argument")
	a.ok("line one\nline two\n", "send", q, "--priority", "HIGH")
	received := jsonLines(t, a.ok("", "receive", q, "--max", "5", "--json"))
	is.Equal(received[0]["payload"], "line one\nline two\n") // stdin whole as one message, HIGH first
	is.Equal(received[1]["payload"], "from the argument")
}

func TestCLI_Send_IdempotencyKey_RerunStoresNothingTwice(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue()
	input := strings.Repeat("x\n", 1500)
	first := a.ok(input, "send", q, "--lines", "--idempotency-key", "import-42")
	again := a.ok(input, "send", q, "--lines", "--idempotency-key", "import-42")
	is.Equal(again.stdout, first.stdout) // the rerun replays the same IDs
	ready, _, _ := a.ready(q)
	is.Equal(ready, 1500.0) // and stores nothing
}

func TestCLI_AckExtendRelease(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue()
	a.ok("a\nb\n", "send", q, "--lines")
	received := a.ok("", "receive", q, "--max", "2", "--json")
	first := jsonLines(t, received)[0]
	id, handle := first["id"].(string), first["receipt_handle"].(string)
	a.ok("", "extend", q, id, handle, "--timeout", "2m")
	acked := a.ok(received.stdout, "ack", q, "-")
	is.Equal(len(acked.lines()), 3) // a header and both deliveries, read from receive's JSON
	again := a.run("", "ack", q, id, handle)
	is.Equal(again.status, 1)                                   // an acknowledgement that removed nothing fails
	is.True(strings.Contains(again.stderr, "not acknowledged")) // and says why
	lost := a.run("", "release", q, id, handle)
	is.Equal(lost.status, 1)
	is.True(strings.Contains(lost.stderr, "lease_lost")) // naming the code
}

func TestCLI_DeadLetters_ListGetRedriveDelete(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	q := a.createQueue("--max-delivery-attempts", "1")
	a.ok("a\nb\nc\n", "send", q, "--lines")
	for _, m := range jsonLines(t, a.ok("", "receive", q, "--max", "3", "--json")) {
		a.ok("", "release", q, m["id"].(string), m["receipt_handle"].(string))
	}
	is.Equal(a.ok("", "receive", q).stdout, "") // the exhausted messages move to the dead letters
	letters := jsonLines(t, a.ok("", "dead-letters", "list", q, "--json"))
	is.Equal(len(letters), 3) // all of them
	first := letters[0]["id"].(string)
	is.Equal(jsonLines(t, a.ok("", "dead-letters", "get", q, first, "--json"))[0]["payload"], "a")
	redriven := a.ok("", "dead-letters", "redrive", q, "--limit", "2")
	is.Equal(len(redriven.lines()), 2) // the IDs moved
	is.Equal(a.ok("", "dead-letters", "redrive", q, "--all", "--json").lines()[0], `{"id":"`+letters[2]["id"].(string)+`"}`)
	ready, _, dead := a.ready(q)
	is.Equal([]float64{ready, dead}, []float64{3, 0}) // back in the queue
	a.ok("", "receive", q, "--max", "3", "--json")
	a.ok("", "dead-letters", "delete", q, first)
	is.Equal(a.ok("", "dead-letters", "delete", q, "--all").stdout, "deleted 0 dead letters\n")
}

func TestCLI_BadCommandLine_Status2(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	q := a.createQueue()
	tests := [][]string{
		{"queues"},
		{"queues", "rename", q},
		{"queues", "get"},
		{"queues", "get", q, "extra"},
		{"queues", "create", "x", "--visibility-timeout", "soon"},
		{"send", q, "--bogus"},
		{"send", q, "payload", "--lines"},
		{"send", q, "x", "--priority", "URGENT"},
		{"receive", q, "--max", "0"},
		{"ack", q, "not-a-uuid", "also-not"},
		{"ack", q, "-"},
		{"dead-letters", "delete", q},
		{"dead-letters", "redrive", q},
		{"dead-letters", "redrive", q, "--all", "--limit", "3"},
	}
	for _, args := range tests {
		r := a.run("", args...)
		if r.status != 2 || r.stderr == "" {
			t.Errorf("retsu %s: status %d, stderr %q; want 2 and a message", strings.Join(args, " "), r.status, r.stderr)
		}
	}
}

func TestCLI_Help_EveryCommand(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for name := range clientCommands() {
		r := a.run("", append(strings.Fields(name), "--help")...)
		if r.status != 0 || !strings.Contains(r.stdout, "usage: retsu "+name) || r.stderr != "" {
			t.Errorf("retsu %s --help: status %d, stdout %q, stderr %q; want 0 and the usage on stdout", name, r.status, r.stdout, r.stderr)
		}
	}
	for _, group := range []string{"queues", "dead-letters"} {
		r := a.run("", group, "--help")
		if r.status != 0 || !strings.Contains(r.stdout, "usage: retsu "+group) {
			t.Errorf("retsu %s --help: status %d", group, r.status)
		}
	}
	if r := a.run("", "help"); !strings.Contains(r.stdout, "dead-letters") {
		t.Errorf("retsu help does not list the client commands:\n%s", r.stdout)
	}
}

func TestCLI_ServerDown_Status1(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := newAPI(t)
	a.url = "http://127.0.0.1:1" // nothing listens there
	r := a.run("", "queues", "list")
	is.Equal(r.status, 1)                                     // a failed call
	is.True(strings.Contains(r.stderr, "connection refused")) // that says why
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for text, seconds := range map[string]int64{"90": 90, "90s": 90, "1h30m": 5400, "7d": 604800} {
		d, err := parseDuration(text)
		is.NoErr(err)
		is.Equal(int64(d.Seconds()), seconds) // seconds, Go durations and days
	}
	_, err := parseDuration("soon")
	is.True(err != nil)
}

// ackBatches wraps an API so that the acknowledge batch requests go through change, which may
// rewrite the body or answer in place of the API (returning true).
func ackBatches(change func(w http.ResponseWriter, body []byte) ([]byte, bool)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/messages/acknowledge/batch") {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			body, answered := change(w, body)
			if answered {
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
		})
	}
}

func TestCLI_ReceiveAck_PrintsOnlyAcknowledgedMessages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	stale := `"receipt_handle":"00000000-0000-4000-8000-000000000000"`
	a := newAPIWith(t, ackBatches(func(_ http.ResponseWriter, body []byte) ([]byte, bool) {
		// The first entry's receipt no longer holds its lease: the API answers false for it.
		first := strings.Index(string(body), `"receipt_handle":"`)
		return []byte(string(body[:first]) + stale + string(body[first+len(stale):])), false
	}))
	q := a.createQueue()
	a.ok("a\nb\nc\n", "send", q, "--lines")
	r := a.run("", "receive", q, "--max", "3", "--ack", "--json")
	printed := jsonLines(t, r)
	is.Equal(len(printed), 2)                                             // the message whose acknowledgement removed nothing is not printed
	is.Equal(printed[0]["payload"], "b")                                  // only those acknowledged
	is.Equal(r.status, 1)                                                 // and the command fails
	is.True(strings.Contains(r.stderr, "1 message was not acknowledged")) // saying how many were left out
}

func TestCLI_ReceiveAck_FailedAcknowledgement_BatchNotPrinted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var calls atomic.Int64
	a := newAPIWith(t, ackBatches(func(w http.ResponseWriter, body []byte) ([]byte, bool) {
		if calls.Add(1) == 1 {
			return body, false
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"type":"about:blank","title":"Not Found","status":404,"detail":"gone","code":"queue_not_found"}`)
		return nil, true
	}))
	q := a.createQueue()
	a.ok(strings.Repeat("x\n", 150), "send", q, "--lines")
	r := a.run("", "receive", q, "--max", "150", "--ack", "--json")
	is.Equal(len(r.lines()), 100)                          // the first batch, acknowledged, is printed; the second, whose acknowledgement failed, is not
	is.Equal(r.status, 1)                                  // the failed call fails the command
	is.True(strings.Contains(r.stderr, "queue_not_found")) // naming the code
}
