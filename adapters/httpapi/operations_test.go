package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
)

func TestReadyz_ReportsPostgresAndRedis_RedisDownIsStillReady(t *testing.T) {
	t.Parallel()
	up := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("connection refused") }
	for _, tc := range []struct {
		name            string
		ready, cache    func(context.Context) error
		postgres, redis string
	}{
		{"both up", up, up, "up", "up"},
		{"redis down", up, down, "up", "down"},
		{"no redis", up, nil, "up", "not_configured"},
		{"memory store", nil, nil, "not_configured", "not_configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			h := httpapi.NewHandler(stubService{}, httpapi.Options{Ready: tc.ready, CacheReady: tc.cache})

			res := serve(h, newRequest(http.MethodGet, "/readyz", "", ""))

			is.Equal(res.StatusCode, http.StatusOK) // PostgreSQL alone decides readiness
			var body map[string]string
			is.NoErr(json.Unmarshal(readAll(t, res), &body))
			is.Equal(body, map[string]string{"status": "ready", "postgres": tc.postgres, "redis": tc.redis}) // each dependency's state
		})
	}
}

func TestMetrics_ServedWhenConfigured_BehindTheTokens(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintln(w, "retsu_messages_enqueued_total 3")
	})
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Metrics: metrics, APITokens: []string{token}})

	assertProblem(t, serve(h, newRequest(http.MethodGet, "/metrics", "", "")), http.StatusUnauthorized, "unauthorized") // metrics need a token
	req := newRequest(http.MethodGet, "/metrics", "", "")
	req.Header.Set("Authorization", "Bearer "+token)
	res := serve(h, req)
	is.Equal(res.StatusCode, http.StatusOK)                                // with one, they are served
	is.Equal(string(readAll(t, res)), "retsu_messages_enqueued_total 3\n") // by the metrics handler
	res = serve(h, withToken(newRequest(http.MethodPost, "/metrics", "", "")))
	is.Equal(res.Header.Get("Allow"), "GET") // only GET
	assertProblem(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
}

func withToken(req *http.Request) *http.Request {
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func TestMetrics_NotConfigured_IsNotFound(t *testing.T) {
	t.Parallel()
	c := setup(t)

	assertProblem(t, c.do(http.MethodGet, "/metrics", ""), http.StatusNotFound, "not_found")
}

// observed is one request an observer was told about.
type observed struct {
	route, method string
	status        int
}

// recordingObserver remembers what it is told.
type recordingObserver struct {
	mu       sync.Mutex
	started  int
	finished []observed
}

func (o *recordingObserver) RequestStarted() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
}

func (o *recordingObserver) RequestFinished(route, method string, status int, duration time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if duration <= 0 {
		status = -1 // a request takes some time; fail the comparison below
	}
	o.finished = append(o.finished, observed{route, method, status})
}

func TestObserver_ToldRouteTemplateMethodAndStatusOfEveryRequest(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	observer := &recordingObserver{}
	h := httpapi.NewHandler(panickingService{}, httpapi.Options{Observer: observer, APITokens: []string{token}})
	queue := queuePath(unknownID)

	serve(h, withToken(newRequest(http.MethodGet, queue, "", "")))                           // the stub answers
	serve(h, withToken(newRequest(http.MethodPost, dequeuePath(unknownID), "", "")))         // the service panics
	serve(h, withToken(newRequest(http.MethodDelete, statsPath(unknownID), "", "")))         // a wrong method
	serve(h, withToken(newRequest(http.MethodGet, "/v1/queues/"+unknownID+"/nope", "", ""))) // no such route
	serve(h, newRequest(http.MethodGet, acknowledgePath(unknownID, unknownID), "", ""))      // no token
	serve(h, newRequest(http.MethodGet, "/healthz", "", ""))                                 // a probe

	is.Equal(observer.started, 6) // every request started
	is.Equal(observer.finished, []observed{
		{"/v1/queues/{queue_id}", "GET", http.StatusOK},
		{"/v1/queues/{queue_id}/messages/dequeue", "POST", http.StatusInternalServerError},
		{"/v1/queues/{queue_id}/stats", "DELETE", http.StatusMethodNotAllowed},
		{"unmatched", "GET", http.StatusNotFound},
		{"/v1/queues/{queue_id}/messages/{message_id}/acknowledge", "GET", http.StatusUnauthorized},
		{"/healthz", "GET", http.StatusOK},
	}) // each under its route template, never its path, with its status
}

func TestRequestLog_OneDebugLinePerRequest_WithTheRequestID(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Logger: log})
	req := newRequest(http.MethodGet, statsPath(unknownID), "", "")
	req.Header.Set("X-Request-ID", "trace-7")

	serve(h, req)

	var line struct {
		Level, Msg, Method, Route, Path string
		Status                          int
		Duration                        int64
		RequestID                       string `json:"request_id"`
	}
	is.NoErr(json.Unmarshal(logs.Bytes(), &line)) // exactly one line, as JSON
	is.Equal(line.Level, "DEBUG")                 // at debug level
	is.Equal(line.Msg, "request")
	is.Equal(line.Method, "GET")
	is.Equal(line.Route, "/v1/queues/{queue_id}/stats") // the route template
	is.Equal(line.Path, statsPath(unknownID))           // and the path asked
	is.Equal(line.Status, http.StatusOK)
	is.True(line.Duration > 0)          // how long it took
	is.Equal(line.RequestID, "trace-7") // the ID the client and the server share
}

func TestRequestLog_SilentAtInfoLevel(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs bytes.Buffer
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	serve(h, newRequest(http.MethodGet, "/healthz", "", ""))

	is.Equal(logs.String(), "") // requests are logged at debug level only
}

func TestErrorLog_CarriesTheRequestID(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs bytes.Buffer
	h := httpapi.NewHandler(stubService{err: errors.New(secret)}, httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req := newRequest(http.MethodGet, queuePath(unknownID), "", "")
	req.Header.Set("X-Request-ID", "trace-8")

	serve(h, req)

	is.True(strings.Contains(logs.String(), "level=ERROR"))        // the internal error is logged
	is.True(strings.Contains(logs.String(), "request_id=trace-8")) // with the ID the client saw
}

func TestReadyz_AFloodOfProbes_ChecksPostgresAndRedisOnceASecond(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var mu sync.Mutex
	calls := map[string]int{}
	counted := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			calls[name]++
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a ping takes a while, so that probes overlap it
			return nil
		}
	}
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Ready: counted("postgres"), CacheReady: counted("redis")})
	probeAll := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				res := serve(h, newRequest(http.MethodGet, "/readyz", "", ""))
				is.Equal(res.StatusCode, http.StatusOK) // every probe is answered
			})
		}
		wg.Wait()
	}

	probeAll(100)
	probeAll(100)
	mu.Lock()
	is.Equal(calls, map[string]int{"postgres": 1, "redis": 1}) // 200 probes within a second cost one ping of each
	mu.Unlock()
	time.Sleep(1100 * time.Millisecond)
	probeAll(50)

	mu.Lock()
	defer mu.Unlock()
	is.Equal(calls, map[string]int{"postgres": 2, "redis": 2}) // a second later, one more
}

func TestReadyz_PostgresDown_IsCachedToo_AndOneProbeLeavingDoesNotFailTheOthers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var mu sync.Mutex
	calls := 0
	down := func(ctx context.Context) error {
		mu.Lock()
		calls++
		mu.Unlock()
		select {
		case <-time.After(50 * time.Millisecond):
			return errors.New("connection refused")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Ready: down})
	leaving, cancel := context.WithCancel(context.Background())
	req := newRequest(http.MethodGet, "/readyz", "", "").WithContext(leaving)
	go func() { _ = serve(h, req) }()
	time.Sleep(10 * time.Millisecond)
	cancel() // the first prober hangs up while the check runs

	for range 20 {
		assertProblem(t, serve(h, newRequest(http.MethodGet, "/readyz", "", "")), http.StatusServiceUnavailable, "service_unavailable")
	}
	mu.Lock()
	defer mu.Unlock()
	is.Equal(calls, 1) // one check served every probe, and the one that left did not cut it short
}
