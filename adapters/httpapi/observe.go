package httpapi

import (
	"log/slog"
	"net/http"
	"time"
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

// recorder notes the status of an answer.
type recorder struct {
	http.ResponseWriter
	status int
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

// answerStarted reports whether the status of w's answer has been written, as the recorder
// that observe puts around every answer knows; false for a writer without one.
func answerStarted(w http.ResponseWriter) bool {
	for {
		if rec, ok := w.(*recorder); ok {
			return rec.status != 0
		}
		wrapper, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = wrapper.Unwrap()
	}
}

// observe logs a line per request at debug level and tells observer, when there is one,
// about each request, under the route that withRouting decided for it: requests refused
// before they reach their route, such as those without a token, count under it too.
func observe(log *slog.Logger, observer Observer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if observer != nil {
			observer.RequestStarted()
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			duration := time.Since(start)
			if rec.status == 0 {
				rec.status = http.StatusOK // net/http's answer to a handler that wrote nothing
			}
			route := routingOf(r.Context()).template
			if observer != nil {
				observer.RequestFinished(route, r.Method, rec.status, duration)
			}
			if log.Enabled(r.Context(), slog.LevelDebug) { // spares building the line on the hot path
				log.LogAttrs(r.Context(), slog.LevelDebug, "request",
					slog.String("method", r.Method), slog.String("route", route), slog.String("path", r.URL.Path),
					slog.Int("status", rec.status), slog.Duration("duration", duration),
					slog.String("request_id", RequestID(r.Context())))
			}
		}()
		next.ServeHTTP(rec, r)
	})
}
