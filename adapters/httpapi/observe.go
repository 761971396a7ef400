package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"
)

// Observer is told about every request the API answers, for metrics. Its methods must be
// cheap and safe for concurrent use.
type Observer interface {
	// RequestStarted is called when a request arrives.
	RequestStarted()
	// RequestFinished is called once its answer is written, with the template of the
	// route it matched, such as /v1/queues/{queue_id}, or "unmatched", so that the routes
	// form a fixed set; the request's method as the client sent it; the status; and the
	// time it took.
	RequestFinished(route, method string, status int, duration time.Duration)
}

// unmatchedRoute names the route of requests that match none.
const unmatchedRoute = "unmatched"

// recorderKey finds a request's recorder in its context.
type recorderKey struct{}

// recorder notes the status of an answer and the route of its request.
type recorder struct {
	http.ResponseWriter
	status int
	route  string
}

// WriteHeader notes the status and writes it.
func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

// Write notes the implicit 200 of a body written without WriteHeader, and writes b.
func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// observe logs a line per request at debug level and tells observer, when there is one,
// about each request. Requests that never reach router, such as those refused for their
// token, are matched against it afterwards, so that they too are counted under their route.
func observe(log *slog.Logger, observer Observer, router *mux.Router, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if observer != nil {
			observer.RequestStarted()
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			duration := time.Since(start)
			if rec.route == "" {
				rec.route = routeTemplate(router, r)
			}
			if rec.status == 0 {
				rec.status = http.StatusOK // net/http's answer to a handler that wrote nothing
			}
			if observer != nil {
				observer.RequestFinished(rec.route, r.Method, rec.status, duration)
			}
			if log.Enabled(r.Context(), slog.LevelDebug) { // spares building the line on the hot path
				log.LogAttrs(r.Context(), slog.LevelDebug, "request",
					slog.String("method", r.Method), slog.String("route", rec.route), slog.String("path", r.URL.Path),
					slog.Int("status", rec.status), slog.Duration("duration", duration),
					slog.String("request_id", RequestID(r.Context())))
			}
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), recorderKey{}, rec)))
	})
}

// noteRoute records, for observe, the template of the route that matched the request.
func noteRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := r.Context().Value(recorderKey{}).(*recorder); ok {
			if route := mux.CurrentRoute(r); route != nil {
				rec.route, _ = route.GetPathTemplate()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// routeTemplate returns the template of the route of router that r matches, or
// unmatchedRoute.
func routeTemplate(router *mux.Router, r *http.Request) string {
	var match mux.RouteMatch
	if !router.Match(r, &match) || match.Route == nil {
		return unmatchedRoute
	}
	template, err := match.Route.GetPathTemplate()
	if err != nil {
		return unmatchedRoute
	}
	return template
}
