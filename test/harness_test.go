// Package test holds Retsu's end-to-end tests: the real binary, started by the tests, over
// real HTTP, against the PostgreSQL and Redis that scripts/services.sh starts.
package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/adapters/postgres"
)

// The environment of every test, read by TestMain.
var (
	databaseURL string
	redisURL    string
	binary      string // the retsu binary built for this run
	db          *pgxpool.Pool
	// shared serves the tests that need nothing special of a server.
	shared *retsuProcess
)

// TestMain builds the binary, migrates the test database and fails when the services are
// not configured: these tests never skip.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	databaseURL, redisURL = os.Getenv("RETSU_TEST_DATABASE_URL"), os.Getenv("RETSU_TEST_REDIS_URL")
	if databaseURL == "" || redisURL == "" {
		fmt.Fprintln(os.Stderr, "RETSU_TEST_DATABASE_URL and RETSU_TEST_REDIS_URL must be set: run `make test`")
		return 1
	}
	dir, err := os.MkdirTemp("", "retsu-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "retsu")
	build := exec.Command("go", "build", "-race", "-o", binary, "../cmd/retsu")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build retsu:", err)
		return 1
	}
	migrate := exec.Command(binary, "migrate", "up", "--database-url", databaseURL)
	if out, err := migrate.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "migrate: %v\n%s", err, out)
		return 1
	}
	db, err = pgxpool.New(context.Background(), databaseURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	if shared, err = launchRetsu(binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if _, err := shared.terminate(); err != nil {
		fmt.Fprintf(os.Stderr, "shared server: %v\n%s", err, shared.logs.String())
		return 1
	}
	return code
}

var schemas atomic.Int64

// newSchema creates a schema of its own in the test database, migrated, which the test drops
// when it ends, and returns the URL that selects it and a pool on it: for tests that lock
// tables or fill them with backlogs that no other test may see.
func newSchema(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	schema := fmt.Sprintf("schema_%d_%d", os.Getpid(), schemas.Add(1))
	if _, err := db.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	url := databaseURL + "&search_path=" + schema
	if out, err := exec.Command(binary, "migrate", "up", "--database-url", url).CombinedOutput(); err != nil {
		t.Fatalf("migrate %s: %v\n%s", schema, err, out)
	}
	pool, err := postgres.OpenPool(t.Context(), url, postgres.PoolOptions{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return url, pool
}

// closedAddress returns a loopback address where nothing listens, for a service that is
// down (see freePort for why its port is below the ephemeral range).
func closedAddress(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", freePort(t))
}

// syncBuffer collects a process's output for the test's log.
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

// client sends API requests to one server and fails the test on transport errors.
type client struct {
	t    *testing.T
	base string
}

func (p *retsuProcess) client(t *testing.T) *client { return &client{t: t, base: p.URL()} }

// response is an answer read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request with a JSON body (none when body is nil) and reads the answer.
func (c *client) do(method, path string, body any) response {
	c.t.Helper()
	var reader io.Reader
	if body != nil {
		reader = jsonBody(c.t, body)
	}
	req, err := http.NewRequest(method, c.base+path, reader)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.send(req)
}

// jsonBody returns body encoded as JSON.
func jsonBody(t *testing.T, body any) io.Reader {
	t.Helper()
	encoded, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(encoded)
}

// send sends req and reads the answer.
func (c *client) send(req *http.Request) response {
	c.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read answer: %v", req.Method, req.URL.Path, err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: data}
}

// decode reads the answer's JSON body into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
}

// code returns the problem code of an error answer.
func (r response) code(t *testing.T) string {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("error answer with content type %q: %s", ct, r.Body)
	}
	var p struct{ Code string }
	r.decode(t, &p)
	return p.Code
}

// queue is a queue as the API shows it.
type queue struct {
	ID                       string `json:"id"`
	Name                     string `json:"name"`
	VisibilityTimeoutSeconds int    `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int    `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int    `json:"default_message_ttl_seconds"`
}

// message is a dequeued message as the API shows it.
type message struct {
	ID               string `json:"id"`
	Payload          string `json:"payload"`
	Priority         string `json:"priority"`
	ReceiptHandle    string `json:"receipt_handle"`
	DeliveryAttempts int    `json:"delivery_attempts"`
}

// createQueue creates a queue with a unique name built from prefix and the given
// settings, expecting 201.
func (c *client) createQueue(prefix string, settings map[string]any) queue {
	c.t.Helper()
	body := map[string]any{"name": uniqueName(prefix)}
	for k, v := range settings {
		body[k] = v
	}
	res := c.do(http.MethodPost, "/v1/queues", body)
	if res.Status != http.StatusCreated {
		c.t.Fatalf("create queue: %d %s", res.Status, res.Body)
	}
	var q queue
	res.decode(c.t, &q)
	return q
}

// enqueue adds a message, expecting 201, and returns its ID.
func (c *client) enqueue(queueID, payload, priority string, extra ...map[string]any) string {
	c.t.Helper()
	body := map[string]any{"payload": payload, "priority": priority}
	for _, e := range extra {
		for k, v := range e {
			body[k] = v
		}
	}
	res := c.do(http.MethodPost, "/v1/queues/"+queueID+"/messages", body)
	if res.Status != http.StatusCreated {
		c.t.Fatalf("enqueue: %d %s", res.Status, res.Body)
	}
	var created struct{ ID string }
	res.decode(c.t, &created)
	return created.ID
}

// dequeue takes the next message; ok is false on 204.
func (c *client) dequeue(queueID string) (m message, ok bool) {
	c.t.Helper()
	res := c.do(http.MethodPost, "/v1/queues/"+queueID+"/messages/dequeue", nil)
	switch res.Status {
	case http.StatusNoContent:
		if len(res.Body) != 0 {
			c.t.Fatalf("204 with a body: %q", res.Body)
		}
		return message{}, false
	case http.StatusOK:
		res.decode(c.t, &m)
		return m, true
	}
	c.t.Fatalf("dequeue: %d %s", res.Status, res.Body)
	return message{}, false
}

// acknowledge completes a delivery and returns the status.
func (c *client) acknowledge(queueID string, m message) int {
	c.t.Helper()
	res := c.do(http.MethodPost, "/v1/queues/"+queueID+"/messages/"+m.ID+"/acknowledge",
		map[string]string{"receipt_handle": m.ReceiptHandle})
	return res.Status
}

var nameCounter struct {
	sync.Mutex
	n int
}

// uniqueName returns a queue name no other test of any run uses.
func uniqueName(prefix string) string {
	nameCounter.Lock()
	defer nameCounter.Unlock()
	nameCounter.n++
	return fmt.Sprintf("%s-%d-%d-%d", strings.ToLower(prefix), os.Getpid(), time.Now().UnixNano(), nameCounter.n)
}
