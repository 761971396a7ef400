package test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
	"github.com/retsu/retsu/domain"
)

// scrapeMetrics reads the server's /metrics, with a bearer token when one is given.
func (c *client) scrapeMetrics(token string) prometheustest.Families {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+"/metrics", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	return prometheustest.Parse(c.t, res.Body)
}

// queueStats is the answer of GET /v1/queues/{queue_id}/stats.
type queueStats struct {
	QueueID    string `json:"queue_id"`
	Priorities []struct {
		Priority              string `json:"priority"`
		Ready                 int64  `json:"ready"`
		InFlight              int64  `json:"in_flight"`
		DeadLettered          int64  `json:"dead_lettered"`
		OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
	} `json:"priorities"`
}

func (c *client) queueStats(queueID string) queueStats {
	c.t.Helper()
	res := c.do(http.MethodGet, "/v1/queues/"+queueID+"/stats", nil)
	if res.Status != http.StatusOK {
		c.t.Fatalf("stats: %d %s", res.Status, res.Body)
	}
	var s queueStats
	res.decode(c.t, &s)
	return s
}

func TestOperations_LifecycleShowsInStatsAndMetrics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := startServer(t).client(t) // a server of its own: its counters count this test alone
	q := c.createQueue("observed", map[string]any{"visibility_timeout_seconds": 1, "max_delivery_attempts": 2})
	c.enqueue(q.ID, "h", "HIGH") // times out fast
	patched := c.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{"visibility_timeout_seconds": 60})
	is.Equal(patched.Status, http.StatusOK) // the others leave time to acknowledge, however slow the machine
	c.enqueue(q.ID, "m", "MEDIUM")
	c.enqueue(q.ID, "l", "LOW")

	first, _ := c.dequeue(q.ID) // HIGH, attempt 1
	time.Sleep(1100 * time.Millisecond)
	again, _ := c.dequeue(q.ID) // HIGH again, its last attempt
	time.Sleep(1100 * time.Millisecond)
	medium, ok := c.dequeue(q.ID) // HIGH goes to the dead letters, MEDIUM comes
	is.True(ok)
	is.Equal(c.acknowledge(q.ID, medium), http.StatusNoContent)
	is.Equal(c.acknowledge(q.ID, medium), http.StatusNoContent) // a repeat, which removes nothing
	s := c.queueStats(q.ID)
	f := c.scrapeMetrics("")

	is.Equal(first.ID, again.ID)                     // the same HIGH message twice
	is.Equal(again.DeliveryAttempts, 2)              // the second time a redelivery
	is.Equal(medium.Priority, "MEDIUM")              // then the next in line
	is.Equal(s.QueueID, q.ID)                        // stats of the queue asked
	is.Equal(len(s.Priorities), 3)                   // per priority
	is.Equal(s.Priorities[0].DeadLettered, int64(1)) // HIGH: dead-lettered
	is.Equal(s.Priorities[0].Ready+s.Priorities[0].InFlight, int64(0))
	is.Equal(s.Priorities[1].Ready+s.Priorities[1].InFlight+s.Priorities[1].DeadLettered, int64(0)) // MEDIUM: acknowledged, gone
	is.Equal(s.Priorities[2].Ready, int64(1))                                                       // LOW: waiting
	is.True(s.Priorities[2].OldestReadyAgeSeconds >= 2)                                             // for more than two seconds

	is.Equal(f.Value("retsu_messages_enqueued_total"), 3.0)        // three enqueued
	is.Equal(f.Value("retsu_messages_delivered_total"), 3.0)       // HIGH twice, MEDIUM
	is.Equal(f.Value("retsu_messages_redelivered_total"), 1.0)     // HIGH's second delivery
	is.Equal(f.Value("retsu_messages_dead_lettered_total"), 1.0)   // HIGH, exhausted
	is.Equal(f.Value("retsu_messages_acknowledged_total"), 1.0)    // MEDIUM, removed
	is.Equal(f.Value("retsu_acknowledgements_ignored_total"), 1.0) // the repeat
	lookups := f.Value("retsu_queue_cache_hits_total") + f.Value("retsu_queue_cache_misses_total")
	is.Equal(lookups, 9.0) // queue details for 3 enqueues, 3 dequeues, 2 acknowledgements and the stats (the PATCH writes them)

	enqueueRoute := []string{"route", "/v1/queues/{queue_id}/messages", "method", "POST"}
	is.Equal(f.Value("retsu_http_requests_total", append(enqueueRoute, "status", "201")...), 3.0)                                 // requests by route template and status
	is.Equal(f.Value("retsu_http_request_duration_seconds", enqueueRoute...), 3.0)                                                // each timed
	is.Equal(f.Value("retsu_http_requests_total", "route", "/v1/queues/{queue_id}/messages/dequeue", "status", "200"), 3.0)       // the deliveries
	is.Equal(f.Value("retsu_http_requests_total", "route", "/v1/queues/{queue_id}/stats", "method", "GET", "status", "200"), 1.0) // the stats
	is.Equal(f.Value("retsu_http_requests_in_flight"), 1.0)                                                                       // this scrape

	is.Equal(f.Value("retsu_postgres_pool_max_connections"), 16.0)       // the pool's size, RETSU_DB_MAX_CONNS
	is.True(f.Value("retsu_postgres_pool_acquires_total") >= 9)          // every statement took a connection
	is.True(f.Value("retsu_postgres_pool_total_connections") >= 1)       // and some stay open
	is.True(f.Has("retsu_postgres_pool_acquire_duration_seconds_total")) // with the time it took
}

func TestOperations_CleanersShowInMetrics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t) // a schema of its own: these cleaners see only this test's queues
	q := r.queue(t, domain.SettingsUpdate{})
	r.insertExpired(t, q, 50)
	_, err := r.db.Exec(t.Context(), `
		INSERT INTO dead_letters (queue_id, id, priority, payload, delivery_attempts, enqueued_at, dead_lettered_at)
		VALUES ($1, gen_random_uuid(), 1, 'old', 5, now() - interval '2 hours', now() - interval '1 hour')`, q.ID)
	is.NoErr(err)

	c := startServer(t, "RETSU_DATABASE_URL="+r.url, "RETSU_WORKERS=true",
		"RETSU_CLEANUP_INTERVAL=1s", "RETSU_DEAD_LETTER_RETENTION=1m").client(t)

	var f prometheustest.Families
	deadline := time.Now().Add(10 * time.Second)
	for {
		f = c.scrapeMetrics("")
		if f.Value("retsu_cleaner_passes_total", "cleaner", "dead-letters", "result", "ok") >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	is.Equal(f.Value("retsu_expired_messages_removed_total"), 50.0)                                        // every expired message, counted once
	is.Equal(f.Value("retsu_dead_letters_removed_total"), 1.0)                                             // the dead letter past the retention
	is.True(f.Value("retsu_cleaner_passes_total", "cleaner", "expired-messages", "result", "ok") >= 1)     // passes, by cleaner and result
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", "expired-messages", "result", "error"), 0.0) // none failed
	is.True(f.Value("retsu_cleaner_pass_duration_seconds", "cleaner", "expired-messages") >= 1)            // each timed
}

func TestOperations_MetricsNeedATokenButProbesDoNot(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const token = "operations-token-0123456789"
	s := startServer(t, "RETSU_API_TOKENS="+token)
	c := s.client(t)

	is.Equal(c.do(http.MethodGet, "/metrics", nil).Status, http.StatusUnauthorized) // metrics show traffic: they need a token
	is.True(c.scrapeMetrics(token).Has("retsu_http_requests_total"))                // with one, they are served
	is.Equal(c.do(http.MethodGet, "/healthz", nil).Status, http.StatusOK)           // probes need none
	is.Equal(c.do(http.MethodGet, "/readyz", nil).Status, http.StatusOK)
}

func TestOperations_Readyz_ReportsRedisButDoesNotDependOnIt(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env   []string
		redis string
	}{
		"redis up":   {nil, "up"},
		"redis down": {[]string{"RETSU_REDIS_URL=redis://" + closedAddress(t) + "/0"}, "down"},
		"no redis":   {[]string{"RETSU_REDIS_URL="}, "not_configured"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := startServer(t, tc.env...).client(t)

			res := c.do(http.MethodGet, "/readyz", nil)

			is.Equal(res.Status, http.StatusOK) // ready whatever Redis does
			var body map[string]string
			res.decode(t, &body)
			is.Equal(body, map[string]string{"status": "ready", "postgres": "up", "redis": tc.redis}) // and says how Redis is
		})
	}
}

func TestOperations_Logs_RequestLinesAndConfigurationWithoutSecrets(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const token, password = "logged-token-0123456789", "never-logged-password"
	withPassword, err := url.Parse(databaseURL)
	is.NoErr(err)
	withPassword.User = url.UserPassword(withPassword.User.Username(), password) // the test database trusts local connections
	s := startServer(t, "RETSU_DATABASE_URL="+withPassword.String(), "RETSU_API_TOKENS="+token, "RETSU_LOG_FORMAT=json")

	req, err := http.NewRequest(http.MethodGet, s.URL()+"/v1/queues/019c9a65-7d3a-7c6b-8a9d-123456789abc", nil)
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Request-ID", "ops-test-1")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusNotFound) // no such queue

	var configuration, request map[string]any
	waitForLog(t, s, func(line map[string]any) bool {
		switch {
		case line["msg"] == "configuration":
			configuration = line
		case line["msg"] == "request" && line["request_id"] == "ops-test-1":
			request = line
		}
		return configuration != nil && request != nil
	})
	logs := s.logs.String()
	is.True(!strings.Contains(logs, password)) // the database password never reaches the logs
	is.True(!strings.Contains(logs, token))    // nor the API token
	config := configuration["config"].(map[string]any)
	is.True(strings.Contains(config["database_url"].(string), ":xxxxx@")) // the URL shows where the password was
	is.Equal(config["api_tokens"], 1.0)                                   // tokens are counted
	is.Equal(request["level"], "DEBUG")                                   // one line per request, at debug level
	is.Equal(request["method"], "GET")                                    // with the method
	is.Equal(request["route"], "/v1/queues/{queue_id}")                   // the route template
	is.Equal(request["status"], 404.0)                                    // the status
	is.True(request["duration"].(float64) > 0)                            // and how long it took
}

// waitForLog calls match with every JSON line the server logged until it returns true, for
// up to five seconds.
func waitForLog(t *testing.T, s *retsuProcess, match func(line map[string]any) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		for _, text := range bytes.Split([]byte(s.logs.String()), []byte("\n")) {
			var line map[string]any
			if json.Unmarshal(text, &line) == nil && match(line) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the expected lines were not logged:\n%s", s.logs.String())
}
