package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Service is what the API needs from Retsu's core; *app.Service implements it. Its errors
// carry the codes of package domain.
type Service interface {
	CreateQueue(ctx context.Context, n domain.NewQueue) (domain.Queue, error)
	Queue(ctx context.Context, id domain.ID) (domain.Queue, error)
	ListQueues(ctx context.Context, p ports.ListQueuesParams) ([]domain.Queue, error)
	UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error)
	Enqueue(ctx context.Context, queueID domain.ID, n domain.NewMessage) (domain.ID, error)
	Dequeue(ctx context.Context, queueID domain.ID) (domain.Delivery, bool, error)
	Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) error
	Stats(ctx context.Context, queueID domain.ID) (domain.QueueStats, error)
}

// Options configure the API handler.
type Options struct {
	// Logger receives the errors behind 5xx answers, and a line per request at debug
	// level; nil discards them.
	Logger *slog.Logger
	// Ready reports whether PostgreSQL answers, for /readyz; nil means that the instance
	// has no database to wait for (the memory store) and is always ready.
	Ready func(ctx context.Context) error
	// CacheReady reports whether the shared queue-details cache (Redis) answers. /readyz
	// shows it, but the instance is ready without it, since requests then read queue
	// details from PostgreSQL. Nil means that no shared cache is configured.
	CacheReady func(ctx context.Context) error
	// Metrics serves GET /metrics, behind the API tokens like every route but the probes;
	// nil leaves the route out.
	Metrics http.Handler
	// Observer is told about every request, for metrics; nil tells no one.
	Observer Observer
	// APITokens, when not empty, are the bearer tokens that requests must present; /healthz
	// and /readyz stay open.
	APITokens []string
	// MaxConcurrentRequests caps the requests served at once; past it, requests get 503
	// with Retry-After. Zero means no cap.
	MaxConcurrentRequests int
	// RequestTimeout bounds the work of one request: its context ends then, so that a
	// hung database answers 503 instead of holding the request. Zero means no bound.
	RequestTimeout time.Duration
}

// api holds what the handlers share.
type api struct {
	svc        Service
	log        *slog.Logger
	ready      func(ctx context.Context) error
	cacheReady func(ctx context.Context) error
	metrics    http.Handler
}

// NewHandler returns the HTTP handler of the whole API.
func NewHandler(svc Service, o Options) http.Handler {
	a := &api{svc: svc, log: o.Logger, ready: o.Ready, cacheReady: o.CacheReady, metrics: o.Metrics}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	r := a.routes()

	// From the inside out: each request's work is bounded in time, the cap on concurrent
	// requests applies to authenticated requests only, panics become 500 answers, every
	// request is logged and measured, and every answer carries a request ID.
	var h http.Handler = r
	h = withTimeout(o.RequestTimeout, h)
	h = limitConcurrency(o.MaxConcurrentRequests, h, a.fail)
	h = authenticate(o.APITokens, h, a.fail)
	h = recoverPanics(a.log, h, a.fail)
	h = observe(a.log, o.Observer, r, h)
	return withRequestID(h)
}

// routes returns the router of every route.
func (a *api) routes() *mux.Router {
	r := mux.NewRouter()
	// Unclean paths (double slashes, dot segments) match no route instead of being
	// redirected, which would turn a POST into a GET in many clients.
	r.SkipClean(true)
	// Routes match the path as sent: an encoded slash (%2F) is part of a segment, not a
	// separator, so /v1/queues/{id}%2Fmessages names no route.
	r.UseEncodedPath()
	r.NotFoundHandler = a.handle(func(http.ResponseWriter, *http.Request) error {
		return requestError(codeNotFound, "no route matches this address")
	})

	// mux tries the routes in this order, a regular expression each: the three routes of
	// every message's life come first.
	r.Handle("/v1/queues/{queue_id}/messages", a.methods(map[string]handlerFunc{
		http.MethodPost: a.enqueue,
	}))
	r.Handle("/v1/queues/{queue_id}/messages/dequeue", a.methods(map[string]handlerFunc{
		http.MethodPost: a.dequeue,
	}))
	r.Handle("/v1/queues/{queue_id}/messages/{message_id}/acknowledge", a.methods(map[string]handlerFunc{
		http.MethodPost: a.acknowledge,
	}))
	r.Handle("/v1/queues", a.methods(map[string]handlerFunc{
		http.MethodPost: a.createQueue,
		http.MethodGet:  a.listQueues,
	}))
	r.Handle("/v1/queues/{queue_id}", a.methods(map[string]handlerFunc{
		http.MethodGet:   a.getQueue,
		http.MethodPatch: a.updateQueue,
	}))
	r.Handle("/healthz", a.methods(map[string]handlerFunc{http.MethodGet: a.healthz}))
	r.Handle("/readyz", a.methods(map[string]handlerFunc{http.MethodGet: a.readyz}))
	r.Handle("/v1/queues/{queue_id}/stats", a.methods(map[string]handlerFunc{http.MethodGet: a.queueStats}))
	if a.metrics != nil {
		r.Handle("/metrics", a.methods(map[string]handlerFunc{http.MethodGet: a.serveMetrics}))
	}
	r.Use(noteRoute)
	return r
}

// fail answers err as problem+json.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, a.log, err)
}

// handlerFunc is a handler that returns its error, to be answered as problem+json.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (a *api) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// methodSet is the handler of one route: it dispatches on the request method, answering
// 405 with an Allow header for the others.
type methodSet struct {
	allowed    []string // sorted
	handlers   map[string]http.Handler
	notAllowed http.Handler
}

// methods returns the methodSet of the handlers by method.
func (a *api) methods(byMethod map[string]handlerFunc) *methodSet {
	m := &methodSet{handlers: make(map[string]http.Handler, len(byMethod))}
	for method, h := range byMethod {
		m.allowed = append(m.allowed, method)
		m.handlers[method] = a.handle(h)
	}
	slices.Sort(m.allowed)
	allow := strings.Join(m.allowed, ", ")
	m.notAllowed = a.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		return requestError(codeMethodNotAllowed, "this address accepts only "+allow)
	})
	return m
}

// ServeHTTP serves r with the handler of its method.
func (m *methodSet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := m.handlers[r.Method]; ok {
		h.ServeHTTP(w, r)
		return
	}
	m.notAllowed.ServeHTTP(w, r)
}
