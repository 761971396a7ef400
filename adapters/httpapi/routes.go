package httpapi

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/adapters/dashboard"
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
	// Metrics serves GET /metrics, behind the API tokens like every route but the probes
	// and the dashboard's pages; nil leaves the route out.
	Metrics http.Handler
	// Observer is told about every request, for metrics; nil tells no one.
	Observer Observer
	// APITokens, when not empty, are the bearer tokens that requests must present; /healthz,
	// /readyz and the dashboard's pages stay open.
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
	// Capacity, when set, is the capacity that this API shares with the process's other
	// listeners (the SQS endpoint): its Requests and Waiting replace MaxConcurrentRequests
	// and MaxWaitingRequests, and its BodyBytes bounds the bytes of the bodies of
	// authenticated requests held at once (past it, 503 with Retry-After, before the body
	// is read).
	Capacity *capacity.Shared
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
	svc       app.Retsu
	log       *slog.Logger
	problems  *problemWriter
	readiness *readiness
	metrics   http.Handler
	// serving and waiting cap the requests served at once (see admit); nil has no cap.
	serving, waiting *limiter
	// bodyBytes bounds the bytes of request bodies held at once; nil has no bound.
	bodyBytes      *capacity.Bytes
	requestTimeout time.Duration
}

// NewHandler returns the HTTP handler of the whole API, over svc (*app.Service in process).
func NewHandler(svc app.Retsu, o Options) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &api{
		svc: svc, log: log, problems: newProblemWriter(log),
		readiness:      &readiness{postgres: o.Ready, redis: o.CacheReady, timeout: readinessTimeout(o.RequestTimeout)},
		metrics:        o.Metrics,
		requestTimeout: o.RequestTimeout,
	}
	shared := o.Capacity
	if shared == nil {
		shared = &capacity.Shared{Requests: capacity.NewSlots(o.MaxConcurrentRequests), Waiting: capacity.NewSlots(o.MaxWaitingRequests)}
	}
	a.serving = &limiter{slots: shared.Requests, full: requestError(domain.CodeUnavailable,
		"the server is at its limit of concurrent requests; try again shortly")}
	a.waiting = &limiter{slots: shared.Waiting, full: requestError(domain.CodeUnavailable,
		"the server is at its limit of waiting dequeues; try again shortly")}
	a.bodyBytes = shared.BodyBytes
	rt := &router{routes: a.routes(), dashboard: o.Dashboard}

	// From the inside out: the routes admit their requests (see admission), bodies fit the
	// budget of body bytes, requests come with a valid token but the dashboard's, state-changing requests from a browser come
	// from the API's own origin, the Host is a host, panics become 500 answers, oversized headers
	// a 431, requests smuggled with two framings a 400, every request is logged and
	// measured, each under the route decided for it as it arrived, and every answer
	// carries a request ID.
	var h http.Handler = http.HandlerFunc(serveRouted)
	h = a.reserveBodyBytes(h)
	h = authenticate(o.APITokens, h, a.fail)
	h = withDashboard(h)
	h = refuseCrossOrigin(h, a.fail)
	h = refuseInvalidHost(h, a.fail)
	h = recoverPanics(log, h, a.fail)
	h = limitHeaders(o.MaxHeaderBytes, h, a.fail)
	h = refuseAmbiguousFraming(h, a.fail)
	h = observe(log, o.Observer, h)
	h = withRouting(rt, h)
	return withRequestID(h)
}

// routing is what the API decides about a request once, as it arrives: the route it is
// logged and counted under, and what serves it once past the checks of every request.
type routing struct {
	// template is the path template of its route, dashboard.Prefix for the dashboard's
	// pages, or unmatchedRoute.
	template string
	// handler serves it: the methodSet of its route, the dashboard, or the API's 404.
	handler http.Handler
	// dashboard is true for the dashboard's pages, which need no token.
	dashboard bool
	// vars are the variables of its path by name, such as queue_id.
	vars map[string]string
}

// router decides the routing of requests.
type router struct {
	routes *mux.Router
	// dashboard serves the dashboard's pages; nil when there is none.
	dashboard http.Handler
}

// route returns the routing of r. /ui and the paths under dashboard.Prefix (/ui/) go to
// the dashboard, matched by prefix, not with a mux route, so that it answers every page
// address under /ui/ itself; every other request goes to the route of routes it matches,
// or to the API's 404.
func (rt *router) route(r *http.Request) routing {
	if rt.dashboard != nil && (r.URL.Path == strings.TrimSuffix(dashboard.Prefix, "/") || strings.HasPrefix(r.URL.Path, dashboard.Prefix)) {
		return routing{template: dashboard.Prefix, handler: rt.dashboard, dashboard: true}
	}
	var match mux.RouteMatch
	if !rt.routes.Match(r, &match) || match.Handler == nil {
		match.Handler = rt.routes.NotFoundHandler
	}
	template := unmatchedRoute
	if match.Route != nil {
		if t, err := match.Route.GetPathTemplate(); err == nil {
			template = t
		}
	}
	return routing{template: template, handler: match.Handler, vars: match.Vars}
}

type routingKey struct{}

// withRouting decides the routing of each request, once, and puts it in the request's
// context for the handlers inside, down to serveRouted.
func withRouting(rt *router, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		routing := rt.route(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routingKey{}, &routing)))
	})
}

// routingOf returns the routing of the request of ctx; a request without one, which only
// tests build, is unmatched.
func routingOf(ctx context.Context) *routing {
	if routing, ok := ctx.Value(routingKey{}).(*routing); ok {
		return routing
	}
	return &routing{template: unmatchedRoute, handler: http.NotFoundHandler()}
}

// serveRouted serves r with the handler of its routing, once r passed the checks of every
// request.
func serveRouted(w http.ResponseWriter, r *http.Request) {
	routingOf(r.Context()).handler.ServeHTTP(w, r)
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
	deadLetter := a.methods(served, map[string]handlerFunc{http.MethodGet: a.getDeadLetter, http.MethodDelete: a.deleteDeadLetter})
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
	// redrive fills the {message_id} of the dead-letter route too, whose methods it answers
	// as that route does, 400 invalid_path, since the method is checked before the IDs.
	r.Handle(queue+"/dead-letters/redrive", a.over(deadLetter, a.methods(served, map[string]handlerFunc{http.MethodPost: a.redrive})))
	r.Handle(queue+"/dead-letters/{message_id}", deadLetter)
	a.route(r, "/healthz", uncapped, map[string]handlerFunc{http.MethodGet: a.healthz})
	a.route(r, "/readyz", uncapped, map[string]handlerFunc{http.MethodGet: a.readyz})
	if a.metrics != nil {
		a.route(r, "/metrics", uncapped, map[string]handlerFunc{http.MethodGet: a.serveMetrics})
	}
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

// handle returns h as a handler whose error is answered as problem+json. Every answer of a
// route, 204s and /metrics included, tells browsers not to second-guess its content type.
func (a *api) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// methodSet is the handler of one route: it dispatches on the request method, answering
// 405 with an Allow header for the others.
type methodSet struct {
	// handlers are the route's own; shadowed are those of the route that a literal segment
	// of this one hides (see over).
	handlers, shadowed map[string]http.Handler
	notAllowed         http.Handler
}

// methods returns the methodSet of the handlers by method, each admitted as admission says.
func (a *api) methods(admission admission, byMethod map[string]handlerFunc) *methodSet {
	m := &methodSet{handlers: make(map[string]http.Handler, len(byMethod))}
	for method, h := range byMethod {
		m.handlers[method] = a.handle(a.admitted(admission, h))
	}
	m.notAllowed = a.methodNotAllowed(slices.Collect(maps.Keys(byMethod)))
	return m
}

// over returns m serving the methods it lacks with the handlers of hidden, the route whose
// variable segment m's literal one fills too, and listing them in its Allow: a literal
// segment then takes nothing away from the variable's route.
func (a *api) over(hidden, m *methodSet) *methodSet {
	m.shadowed = hidden.handlers
	m.notAllowed = a.methodNotAllowed(slices.Concat(slices.Collect(maps.Keys(m.handlers)), slices.Collect(maps.Keys(hidden.handlers))))
	return m
}

// methodNotAllowed returns the 405 answer of a route that takes methods.
func (a *api) methodNotAllowed(methods []string) http.Handler {
	slices.Sort(methods)
	allow := strings.Join(slices.Compact(methods), ", ")
	return a.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		return requestError(codeMethodNotAllowed, "this address accepts only "+allow)
	})
}

// ServeHTTP serves r with the handler of its method.
func (m *methodSet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := m.handlers[r.Method]; ok {
		h.ServeHTTP(w, r)
		return
	}
	if h, ok := m.shadowed[r.Method]; ok {
		h.ServeHTTP(w, r)
		return
	}
	m.notAllowed.ServeHTTP(w, r)
}
