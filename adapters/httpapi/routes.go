package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// Options configure the API handler.
type Options struct {
	// Logger receives the errors behind 5xx answers, warnings about requests that ran out of
	// their time, and a line per request at debug level; nil discards them.
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
	// with Retry-After. A request counts from the moment its body has been read to its
	// answer; the probes and /metrics never count, nor do dequeues that may wait. Zero
	// means no cap.
	MaxConcurrentRequests int
	// MaxWaitingRequests caps the dequeues with wait_seconds above 0 (long polls) served at
	// once, which the cap above leaves out; past it, they get 503 with Retry-After. Zero
	// means no cap.
	MaxWaitingRequests int
	// RequestTimeout bounds the work of one request: its context ends then, so that a
	// hung database answers 503 instead of holding the request. A long poll has its wait
	// on top. Zero means no bound.
	RequestTimeout time.Duration
	// Dashboard, when set, serves /ui and every path under /ui/ (the dashboard's pages)
	// without a token: the pages are public, and the calls they make to the API carry the
	// token like any client's. Their requests pass the checks of framing and header size
	// that every request passes, and are logged and counted under the route /ui/.
	Dashboard http.Handler
	// MaxHeaderBytes, when above zero, bounds the size of a request's line and headers:
	// past it, 431 headers_too_large. NewServer gives net/http a larger bound (see
	// ServerOptions.MaxHeaderBytes), so that this answer, not net/http's plain text, is the
	// one clients get.
	MaxHeaderBytes int
}

// api holds what the handlers share.
type api struct {
	svc        app.Retsu
	log        *slog.Logger
	problems   *problemWriter
	ready      func(ctx context.Context) error
	cacheReady func(ctx context.Context) error
	metrics    http.Handler
	// serving and waiting cap the requests served at once (see admit); nil has no cap.
	serving, waiting *limiter
	requestTimeout   time.Duration
}

// NewHandler returns the HTTP handler of the whole API, over svc (*app.Service in process).
func NewHandler(svc app.Retsu, o Options) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &api{
		svc: svc, log: log, problems: newProblemWriter(log),
		ready: o.Ready, cacheReady: o.CacheReady, metrics: o.Metrics,
		serving: newLimiter(o.MaxConcurrentRequests, requestError(domain.CodeUnavailable,
			"the server is at its limit of concurrent requests; try again shortly")),
		waiting: newLimiter(o.MaxWaitingRequests, requestError(domain.CodeUnavailable,
			"the server is at its limit of waiting dequeues; try again shortly")),
		requestTimeout: o.RequestTimeout,
	}
	r := a.routes()

	// From the inside out: the routes admit their requests (see admission), requests come
	// with a valid token but the dashboard's, panics become 500 answers, oversized headers
	// a 431, requests smuggled with two framings a 400, every request is logged and
	// measured, and every answer carries a request ID.
	var h http.Handler = r
	h = authenticate(o.APITokens, h, a.fail)
	h = withDashboard(o.Dashboard, h)
	h = recoverPanics(log, h, a.fail)
	h = limitHeaders(o.MaxHeaderBytes, h, a.fail)
	h = refuseAmbiguousFraming(h, a.fail)
	h = observe(log, o.Observer, r, h)
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

	// mux tries the routes in this order, a regular expression each: the routes of every
	// message's life come first, and a literal segment (batch, redrive) before the
	// variable that would match it too.
	const queue, messages = "/v1/queues/{queue_id}", "/v1/queues/{queue_id}/messages"
	a.route(r, messages, served, map[string]handlerFunc{http.MethodPost: a.enqueue, http.MethodDelete: a.purgeQueue})
	a.route(r, messages+"/dequeue", selfAdmitted, map[string]handlerFunc{http.MethodPost: a.dequeue})
	a.route(r, messages+"/{message_id}/acknowledge", served, map[string]handlerFunc{http.MethodPost: a.acknowledge})
	a.route(r, messages+"/batch", served, map[string]handlerFunc{http.MethodPost: a.enqueueBatch})
	a.route(r, messages+"/dequeue/batch", selfAdmitted, map[string]handlerFunc{http.MethodPost: a.dequeueBatch})
	a.route(r, messages+"/acknowledge/batch", served, map[string]handlerFunc{http.MethodPost: a.acknowledgeBatch})
	a.route(r, messages+"/{message_id}/extend", served, map[string]handlerFunc{http.MethodPost: a.extend})
	a.route(r, messages+"/{message_id}/release", served, map[string]handlerFunc{http.MethodPost: a.release})
	a.route(r, "/v1/queues", served, map[string]handlerFunc{http.MethodPost: a.createQueue, http.MethodGet: a.listQueues})
	a.route(r, queue, served, map[string]handlerFunc{
		http.MethodGet: a.getQueue, http.MethodPatch: a.updateQueue, http.MethodDelete: a.deleteQueue,
	})
	a.route(r, queue+"/stats", served, map[string]handlerFunc{http.MethodGet: a.queueStats})
	a.route(r, queue+"/dead-letters", served, map[string]handlerFunc{http.MethodGet: a.listDeadLetters, http.MethodDelete: a.deleteDeadLetters})
	a.route(r, queue+"/dead-letters/redrive", served, map[string]handlerFunc{http.MethodPost: a.redrive})
	a.route(r, queue+"/dead-letters/{message_id}", served, map[string]handlerFunc{http.MethodGet: a.getDeadLetter, http.MethodDelete: a.deleteDeadLetter})
	a.route(r, "/healthz", uncapped, map[string]handlerFunc{http.MethodGet: a.healthz})
	a.route(r, "/readyz", uncapped, map[string]handlerFunc{http.MethodGet: a.readyz})
	if a.metrics != nil {
		a.route(r, "/metrics", uncapped, map[string]handlerFunc{http.MethodGet: a.serveMetrics})
	}
	r.Use(noteRoute)
	return r
}

// route registers the handlers by method of one path, admitted as admission says.
func (a *api) route(r *mux.Router, path string, admission admission, byMethod map[string]handlerFunc) {
	r.Handle(path, a.methods(admission, byMethod))
}

// fail answers err as problem+json.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	a.problems.write(w, r, err)
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

// methods returns the methodSet of the handlers by method, each admitted as admission says.
func (a *api) methods(admission admission, byMethod map[string]handlerFunc) *methodSet {
	m := &methodSet{handlers: make(map[string]http.Handler, len(byMethod))}
	for method, h := range byMethod {
		m.allowed = append(m.allowed, method)
		m.handlers[method] = a.handle(a.admitted(admission, h))
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
