package prometheus

import (
	"net/http"
	"strconv"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/retsu/retsu/ports"
)

var _ ports.Metrics = (*Metrics)(nil)

// namespace starts the name of every metric of Retsu's own.
const namespace = "retsu"

// Metrics holds Retsu's metrics in a registry of its own, with the Go runtime's and the
// process's. It is safe for concurrent use.
type Metrics struct {
	registry *prom.Registry

	enqueued, delivered, redelivered, deadLettered prom.Counter
	acknowledged, acknowledgementsIgnored          prom.Counter
	enqueueReplays, undelivered, redriven          prom.Counter
	leaseExtensions, leaseReleases                 *prom.CounterVec // by result
	waitingDequeues                                prom.Gauge
	expiredRemoved, deadLettersRemoved             prom.Counter
	rowsRemoved                                    *prom.CounterVec // by cleaner
	cacheHits, cacheMisses, cacheFailures          prom.Counter
	cleanerPasses                                  *prom.CounterVec   // by cleaner and result
	cleanerPassDuration                            *prom.HistogramVec // by cleaner

	httpRequests        *prom.CounterVec   // by route, method and status
	httpRequestDuration *prom.HistogramVec // by route and method
	httpInFlight        prom.Gauge
}

// The buckets of the histograms, in seconds. Requests mostly take a millisecond or a few;
// the upper buckets catch a database that is slow or a client that sends slowly. A cleaner
// pass takes milliseconds on a clean database and minutes on a large backlog.
var (
	requestBuckets     = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	cleanerPassBuckets = []float64{0.01, 0.05, 0.25, 1, 5, 30, 120, 600}
)

// New returns Metrics with every count at zero.
func New() *Metrics {
	m := &Metrics{
		registry: prom.NewRegistry(),

		enqueued:                counter("messages_enqueued_total", "Messages stored by an enqueue."),
		delivered:               counter("messages_delivered_total", "Deliveries started by a dequeue, redeliveries included."),
		redelivered:             counter("messages_redelivered_total", "Deliveries of a message that had been delivered before (delivery_attempts > 1)."),
		deadLettered:            counter("messages_dead_lettered_total", "Exhausted messages moved to dead-letter storage by a dequeue."),
		acknowledged:            counter("messages_acknowledged_total", "Acknowledgements that removed their message."),
		acknowledgementsIgnored: counter("acknowledgements_ignored_total", "Acknowledgements that removed nothing: a stale, late, repeated or unknown receipt handle."),
		enqueueReplays:          counter("enqueue_replays_total", "Enqueues that repeated an earlier request with its idempotency key and stored nothing."),
		undelivered:             counter("messages_undelivered_total", "Deliveries taken back because their requester went away before the answer."),
		redriven:                counter("messages_redriven_total", "Dead letters sent back to their queue."),
		leaseExtensions: prom.NewCounterVec(prom.CounterOpts{
			Namespace: namespace, Name: "lease_extensions_total",
			Help: "Extends, by result: held (the lease was extended) or lost (the receipt no longer held it).",
		}, []string{"result"}),
		leaseReleases: prom.NewCounterVec(prom.CounterOpts{
			Namespace: namespace, Name: "lease_releases_total",
			Help: "Releases, by result: held (the lease ended) or lost (the receipt no longer held it).",
		}, []string{"result"}),
		waitingDequeues: prom.NewGauge(prom.GaugeOpts{
			Namespace: namespace, Name: "waiting_dequeues", Help: "Dequeues waiting for a message (long polls).",
		}),
		rowsRemoved: prom.NewCounterVec(prom.CounterOpts{
			Namespace: namespace, Name: "cleaner_rows_removed_total",
			Help: "Rows deleted by the idempotency-key and deleted-queue cleaners, by cleaner.",
		}, []string{"cleaner"}),
		expiredRemoved:     counter("expired_messages_removed_total", "Expired messages deleted by the expired-message cleaner."),
		deadLettersRemoved: counter("dead_letters_removed_total", "Dead letters older than the retention deleted by the dead-letter cleaner."),
		cacheHits:          counter("queue_cache_hits_total", "Reads of queue details answered by the queue-details cache."),
		cacheMisses:        counter("queue_cache_misses_total", "Reads of queue details that the cache did not answer (missing entry or cache failure)."),
		cacheFailures:      counter("queue_cache_failures_total", "Calls to the queue-details cache (read, fill, store) that failed, such as while Redis is down."),
		cleanerPasses: prom.NewCounterVec(prom.CounterOpts{
			Namespace: namespace, Name: "cleaner_passes_total",
			Help: "Passes of a cleaner over every queue, by cleaner and result (ok, or error when the pass ended early).",
		}, []string{"cleaner", "result"}),
		cleanerPassDuration: prom.NewHistogramVec(prom.HistogramOpts{
			Namespace: namespace, Name: "cleaner_pass_duration_seconds",
			Help: "Time a pass of a cleaner took, by cleaner.", Buckets: cleanerPassBuckets,
		}, []string{"cleaner"}),

		httpRequests: prom.NewCounterVec(prom.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		httpRequestDuration: prom.NewHistogramVec(prom.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help: "Time from a request's headers to the end of its answer, by route template and method.", Buckets: requestBuckets,
		}, []string{"route", "method"}),
		httpInFlight: prom.NewGauge(prom.GaugeOpts{
			Namespace: namespace, Name: "http_requests_in_flight", Help: "HTTP requests being served.",
		}),
	}
	m.registry.MustRegister(
		m.enqueued, m.delivered, m.redelivered, m.deadLettered, m.acknowledged, m.acknowledgementsIgnored,
		m.enqueueReplays, m.undelivered, m.redriven, m.leaseExtensions, m.leaseReleases, m.waitingDequeues, m.rowsRemoved,
		m.expiredRemoved, m.deadLettersRemoved, m.cacheHits, m.cacheMisses, m.cacheFailures,
		m.cleanerPasses, m.cleanerPassDuration, m.httpRequests, m.httpRequestDuration, m.httpInFlight,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func counter(name, help string) prom.Counter {
	return prom.NewCounter(prom.CounterOpts{Namespace: namespace, Name: name, Help: help})
}

// Handler serves the metrics in the Prometheus text format, for GET /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// CollectPool adds the statistics of a PostgreSQL connection pool, read from stat at every
// scrape.
func (m *Metrics) CollectPool(stat func() PoolStat) {
	m.registry.MustRegister(newPoolCollector(stat))
}

// MessagesEnqueued counts messages stored.
func (m *Metrics) MessagesEnqueued(n int) { m.enqueued.Add(float64(n)) }

// EnqueueReplayed counts an enqueue replayed by its idempotency key.
func (m *Metrics) EnqueueReplayed() { m.enqueueReplays.Inc() }

// LeaseExtended counts an extend by whether the receipt held the lease.
func (m *Metrics) LeaseExtended(held bool) {
	m.leaseExtensions.WithLabelValues(leaseResult(held)).Inc()
}

// LeaseReleased counts a release by whether the receipt held the lease.
func (m *Metrics) LeaseReleased(held bool) { m.leaseReleases.WithLabelValues(leaseResult(held)).Inc() }

func leaseResult(held bool) string {
	if held {
		return "held"
	}
	return "lost"
}

// MessagesUndelivered counts deliveries taken back.
func (m *Metrics) MessagesUndelivered(n int) { m.undelivered.Add(float64(n)) }

// MessagesRedriven counts dead letters sent back.
func (m *Metrics) MessagesRedriven(n int) { m.redriven.Add(float64(n)) }

// WaitingDequeues moves the gauge of waiting dequeues.
func (m *Metrics) WaitingDequeues(delta int) { m.waitingDequeues.Add(float64(delta)) }

// RowsRemoved counts rows deleted by the named cleaner.
func (m *Metrics) RowsRemoved(cleaner string, n int) {
	m.rowsRemoved.WithLabelValues(cleaner).Add(float64(n))
}

// MessageDelivered counts a delivery, and a redelivery as such too.
func (m *Metrics) MessageDelivered(redelivery bool) {
	m.delivered.Inc()
	if redelivery {
		m.redelivered.Inc()
	}
}

// MessagesDeadLettered counts messages moved to dead-letter storage.
func (m *Metrics) MessagesDeadLettered(n int) { m.deadLettered.Add(float64(n)) }

// Acknowledged counts an acknowledgement by whether it removed its message.
func (m *Metrics) Acknowledged(removed bool) {
	if removed {
		m.acknowledged.Inc()
		return
	}
	m.acknowledgementsIgnored.Inc()
}

// QueueCacheLookup counts a cache hit or miss.
func (m *Metrics) QueueCacheLookup(hit bool) {
	if hit {
		m.cacheHits.Inc()
		return
	}
	m.cacheMisses.Inc()
}

// QueueCacheFailed counts a failed cache call.
func (m *Metrics) QueueCacheFailed() { m.cacheFailures.Inc() }

// ExpiredMessagesRemoved counts expired messages deleted.
func (m *Metrics) ExpiredMessagesRemoved(n int) { m.expiredRemoved.Add(float64(n)) }

// DeadLettersRemoved counts dead letters deleted.
func (m *Metrics) DeadLettersRemoved(n int) { m.deadLettersRemoved.Add(float64(n)) }

// CleanerPassed counts a cleaner's pass and records how long it took.
func (m *Metrics) CleanerPassed(cleaner string, duration time.Duration, failed bool) {
	result := "ok"
	if failed {
		result = "error"
	}
	m.cleanerPasses.WithLabelValues(cleaner, result).Inc()
	m.cleanerPassDuration.WithLabelValues(cleaner).Observe(duration.Seconds())
}

// RequestStarted counts a request in flight.
func (m *Metrics) RequestStarted() { m.httpInFlight.Inc() }

// RequestFinished counts an answered request under its route template (which the caller
// keeps to a fixed set), method and status, and records how long it took.
func (m *Metrics) RequestFinished(route, method string, status int, duration time.Duration) {
	m.httpInFlight.Dec()
	method = knownMethod(method)
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpRequestDuration.WithLabelValues(route, method).Observe(duration.Seconds())
}

// knownMethod returns method when it is one of HTTP's, and "other" otherwise, so that
// clients that make up methods cannot make up label values.
func knownMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}
