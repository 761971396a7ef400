package prometheus_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
)

func TestMetrics_CountWhatTheCoreReports(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()

	for range 3 {
		m.MessagesEnqueued(1)
	}
	m.MessageDelivered(false)
	m.MessageDelivered(true)
	m.MessagesDeadLettered(2)
	m.Acknowledged(true)
	m.Acknowledged(false)
	m.Acknowledged(false)
	m.QueueCacheLookup(true)
	m.QueueCacheLookup(true)
	m.QueueCacheLookup(false)
	m.QueueCacheFailed()
	m.ExpiredMessagesRemoved(40)
	m.ExpiredMessagesRemoved(2)
	m.DeadLettersRemoved(7)

	f := prometheustest.Scrape(t, m.Handler())
	is.Equal(f.Value("retsu_messages_enqueued_total"), 3.0)         // every enqueue
	is.Equal(f.Value("retsu_messages_delivered_total"), 2.0)        // every delivery, redeliveries included
	is.Equal(f.Value("retsu_messages_redelivered_total"), 1.0)      // redeliveries alone
	is.Equal(f.Value("retsu_messages_dead_lettered_total"), 2.0)    // messages moved, not dequeues that moved them
	is.Equal(f.Value("retsu_messages_acknowledged_total"), 1.0)     // acknowledgements that removed a message
	is.Equal(f.Value("retsu_acknowledgements_ignored_total"), 2.0)  // and those that removed nothing
	is.Equal(f.Value("retsu_queue_cache_hits_total"), 2.0)          // cache hits
	is.Equal(f.Value("retsu_queue_cache_misses_total"), 1.0)        // cache misses
	is.Equal(f.Value("retsu_queue_cache_failures_total"), 1.0)      // failed cache calls
	is.Equal(f.Value("retsu_expired_messages_removed_total"), 42.0) // rows, summed over statements
	is.Equal(f.Value("retsu_dead_letters_removed_total"), 7.0)      // dead letters deleted
	is.True(f.Has("go_goroutines"))                                 // the Go runtime's metrics come along
	is.True(f.Has("process_cpu_seconds_total"))                     // and the process's
}

func TestMetrics_CleanerPassesByCleanerAndResult(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()

	m.CleanerPassed("expired-messages", 30*time.Millisecond, false)
	m.CleanerPassed("expired-messages", 2*time.Second, true)
	m.CleanerPassed("dead-letters", 10*time.Millisecond, false)

	f := prometheustest.Scrape(t, m.Handler())
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", "expired-messages", "result", "ok"), 1.0)    // a pass that finished
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", "expired-messages", "result", "error"), 1.0) // one that ended early
	is.Equal(f.Value("retsu_cleaner_passes_total", "cleaner", "dead-letters", "result", "ok"), 1.0)        // each cleaner apart
	is.Equal(f.Value("retsu_cleaner_pass_duration_seconds", "cleaner", "expired-messages"), 2.0)           // both passes timed
	is.Equal(f.Sum("retsu_cleaner_pass_duration_seconds", "cleaner", "expired-messages"), 2.03)            // in seconds
}

func TestMetrics_RequestsByRouteMethodAndStatus(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()

	for range 3 {
		m.RequestStarted()
	}
	m.RequestFinished("/v1/queues/{queue_id}", http.MethodGet, http.StatusOK, 2*time.Millisecond)
	m.RequestFinished("/v1/queues/{queue_id}", http.MethodGet, http.StatusNotFound, time.Millisecond)

	f := prometheustest.Scrape(t, m.Handler())
	route := []string{"route", "/v1/queues/{queue_id}", "method", "GET"}
	is.Equal(f.Value("retsu_http_requests_total", append(route, "status", "200")...), 1.0) // by status
	is.Equal(f.Value("retsu_http_requests_total", append(route, "status", "404")...), 1.0)
	is.Equal(f.Value("retsu_http_request_duration_seconds", route...), 2.0) // both timed
	is.Equal(f.Sum("retsu_http_request_duration_seconds", route...), 0.003) // in seconds
	is.Equal(f.Value("retsu_http_requests_in_flight"), 1.0)                 // three started, two finished
}

func TestMetrics_UnknownMethods_ShareOneLabel(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()

	for _, method := range []string{"BREW", "WHEN", "PROPFIND"} {
		m.RequestStarted()
		m.RequestFinished("unmatched", method, http.StatusNotFound, time.Millisecond)
	}

	f := prometheustest.Scrape(t, m.Handler())
	is.Equal(f.Value("retsu_http_requests_total", "route", "unmatched", "method", "other"), 3.0) // made-up methods add no label values
	is.Equal(len(f["retsu_http_requests_total"].GetMetric()), 1)                                 // one series for all of them
}

func TestNew_EachHasItsOwnRegistry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	first, second := prometheus.New(), prometheus.New()

	first.MessagesEnqueued(1)

	is.Equal(prometheustest.Scrape(t, first.Handler()).Value("retsu_messages_enqueued_total"), 1.0)  // counted where reported
	is.Equal(prometheustest.Scrape(t, second.Handler()).Value("retsu_messages_enqueued_total"), 0.0) // and nowhere else
}
