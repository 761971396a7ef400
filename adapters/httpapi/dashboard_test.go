package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/dashboard"
	"github.com/retsu/retsu/adapters/httpapi"
)

// pages stands for the dashboard: it answers every request 200.
var pages = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("page")) })

func TestDashboard_IsServedWithoutAToken(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := httpapi.NewHandler(stubService{}, httpapi.Options{APITokens: []string{token}, Dashboard: pages})
	for _, target := range []string{"/ui", "/ui/", "/ui/queues/" + unknownID + "/dead-letters", "/ui/assets/0123/app.js", "/ui/../v1/queues"} {
		res := serve(h, newRequest(http.MethodGet, target, "", ""))
		is.Equal(res.StatusCode, http.StatusOK)       // the dashboard's pages are public
		is.Equal(string(readAll(t, res)), "page")     // and the dashboard answers them, not the API
		is.True(res.Header.Get("X-Request-ID") != "") // with a request ID like every answer
	}
}

func TestDashboard_EveryAPIRouteStillNeedsTheToken(t *testing.T) {
	t.Parallel()
	h := httpapi.NewHandler(stubService{}, httpapi.Options{APITokens: []string{token}, Dashboard: pages, Metrics: pages})
	queue, message := queuePath(unknownID), "/"+unknownID
	for _, route := range []struct{ method, target string }{
		{http.MethodGet, "/v1/queues"},
		{http.MethodPost, "/v1/queues"},
		{http.MethodGet, queue},
		{http.MethodPatch, queue},
		{http.MethodDelete, queue},
		{http.MethodGet, statsPath(unknownID)},
		{http.MethodPost, messagesPath(unknownID)},
		{http.MethodDelete, messagesPath(unknownID)},
		{http.MethodPost, batchPath(unknownID)},
		{http.MethodPost, dequeuePath(unknownID)},
		{http.MethodPost, dequeueBatchPath(unknownID)},
		{http.MethodPost, acknowledgePath(unknownID, unknownID)},
		{http.MethodPost, acknowledgeBatchPath(unknownID)},
		{http.MethodPost, extendPath(unknownID, unknownID)},
		{http.MethodPost, releasePath(unknownID, unknownID)},
		{http.MethodGet, deadLettersPath(unknownID)},
		{http.MethodDelete, deadLettersPath(unknownID)},
		{http.MethodPost, redrivePath(unknownID)},
		{http.MethodGet, deadLettersPath(unknownID) + message},
		{http.MethodDelete, deadLettersPath(unknownID) + message},
		{http.MethodGet, "/metrics"},
		// Near the dashboard's prefix, but not under it: the API's addresses.
		{http.MethodGet, "/uix"},
		{http.MethodGet, "/UI/"},
		{http.MethodGet, "//ui/"},
		{http.MethodGet, "/v1/ui/"},
	} {
		t.Run(route.method+" "+route.target, func(t *testing.T) {
			t.Parallel()
			res := serve(h, newRequest(route.method, route.target, "", ""))
			assertProblem(t, res, http.StatusUnauthorized, "unauthorized") // the API's token check still applies
		})
	}
}

func TestDashboard_RequestsAreCountedUnderOneRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	observer := &recordingObserver{}
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Observer: observer, Dashboard: pages})
	serve(h, newRequest(http.MethodGet, "/ui/queues/"+unknownID, "", ""))
	serve(h, newRequest(http.MethodGet, "/ui/assets/0123/app.js", "", ""))
	is.Equal(observer.finished, []observed{{"/ui/", "GET", 200}, {"/ui/", "GET", 200}}) // a fixed route, whatever the page
}

func TestDashboard_ErrorsHaveTheAPIsProblemFormat(t *testing.T) {
	t.Parallel()
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Dashboard: dashboard.New()})

	assertProblem(t, serve(h, newRequest(http.MethodPost, "/ui/", "", "")), http.StatusMethodNotAllowed, "method_not_allowed")
	assertProblem(t, serve(h, newRequest(http.MethodGet, "/ui/assets/0123456789abcdef/app.js", "", "")), http.StatusNotFound, "not_found")
}

func TestDashboard_RequestsRefusedBeforeItAreCountedUnderItsRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	observer := &recordingObserver{}
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Observer: observer, Dashboard: pages, MaxHeaderBytes: 1024})
	req := newRequest(http.MethodGet, "/ui/queues", "", "")
	req.Header.Set("X-Padding", strings.Repeat("x", 2048))

	assertProblem(t, serve(h, req), http.StatusRequestHeaderFieldsTooLarge, "headers_too_large")

	is.Equal(observer.finished, []observed{{"/ui/", "GET", 431}}) // the dashboard's route, though its pages never saw it
}
