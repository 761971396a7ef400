package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

const token = "correct-horse-battery-staple"

func withTokens(t *testing.T) http.Handler {
	t.Helper()
	return httpapi.NewHandler(stubService{}, httpapi.Options{APITokens: []string{"another-token-0123456789", token}})
}

func serve(h http.Handler, req *http.Request) *http.Response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestAuthentication_MissingOrWrongToken_IsUnauthorized(t *testing.T) {
	t.Parallel()
	h := withTokens(t)
	for name, header := range map[string]string{
		"no header":        "",
		"wrong token":      "Bearer not-the-right-token-at-all",
		"token as prefix":  "Bearer " + token + "x",
		"truncated token":  "Bearer " + token[:len(token)-1],
		"other scheme":     "Basic " + token,
		"scheme only":      "Bearer ",
		"token without it": token,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			req := newRequest(http.MethodGet, "/v1/queues", "", "")
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			res := serve(h, req)
			is.Equal(res.Header.Get("WWW-Authenticate"), `Bearer realm="retsu"`) // the challenge names the scheme
			assertProblem(t, res, http.StatusUnauthorized, "unauthorized")
		})
	}
}

func TestAuthentication_ValidToken_IsServed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := withTokens(t)
	for _, header := range []string{"Bearer " + token, "bearer " + token, "Bearer another-token-0123456789"} {
		req := newRequest(http.MethodGet, "/v1/queues", "", "")
		req.Header.Set("Authorization", header)
		is.Equal(serve(h, req).StatusCode, http.StatusOK) // any configured token, scheme in any case
	}
}

func TestAuthentication_ProbesStayOpen(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := withTokens(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		is.Equal(serve(h, newRequest(http.MethodGet, path, "", "")).StatusCode, http.StatusOK) // probes need no token
	}
}

// blockingService holds every dequeue until it is released.
type blockingService struct {
	stubService
	entered chan struct{}
	release chan struct{}
}

func (s blockingService) DequeueMessages(context.Context, app.DequeueParams) ([]domain.Delivery, error) {
	s.entered <- struct{}{}
	<-s.release
	return nil, nil
}

func TestConcurrencyLimit_PastTheCap_IsServiceUnavailableWithRetryAfter(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc := blockingService{entered: make(chan struct{}, 2), release: make(chan struct{})}
	h := httpapi.NewHandler(svc, httpapi.Options{MaxConcurrentRequests: 2})
	path := dequeuePath("019c9a65-7d3a-7c6b-8a9d-123456789abc")
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() { statuses[i] = serve(h, newRequest(http.MethodPost, path, "", "")).StatusCode })
	}
	<-svc.entered
	<-svc.entered // both slots are taken

	res := serve(h, newRequest(http.MethodPost, path, "", ""))
	is.Equal(res.Header.Get("Retry-After"), "1") // the client is told when to come back
	assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable")

	close(svc.release)
	wg.Wait()
	is.Equal(statuses, []int{http.StatusNoContent, http.StatusNoContent})                          // the requests within the cap are served
	is.Equal(serve(h, newRequest(http.MethodPost, path, "", "")).StatusCode, http.StatusNoContent) // and the slots are free again
}

// panickingService panics on every dequeue.
type panickingService struct{ stubService }

func (panickingService) DequeueMessages(context.Context, app.DequeueParams) ([]domain.Delivery, error) {
	panic("nil map write in the service")
}

func TestPanic_IsInternalErrorWithoutItsText(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := httpapi.NewHandler(panickingService{}, httpapi.Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodPost, dequeuePath("019c9a65-7d3a-7c6b-8a9d-123456789abc"), "", ""))
	is.True(!strings.Contains(rec.Body.String(), "nil map")) // the panic's text stays inside
	assertProblem(t, rec.Result(), http.StatusInternalServerError, "internal_error")
}

func TestPanic_AfterTheAnswerStarted_CutsTheConnection(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs syncBuffer
	halfAnswered := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("part of a page"))
		_ = http.NewResponseController(w).Flush()
		panic("the page broke halfway")
	})
	h := httpapi.NewHandler(stubService{}, httpapi.Options{Dashboard: halfAnswered, Logger: newTextLogger(&logs)})
	addr := realServer(t, h, httpapi.ServerOptions{})

	res, err := http.Get("http://" + addr + "/ui/")
	is.NoErr(err) // the status went out before the panic
	body, err := io.ReadAll(res.Body)

	is.True(err != nil)                                        // the client sees the answer cut short
	is.True(!strings.Contains(string(body), "internal_error")) // not a problem glued to its first bytes
	is.True(strings.Contains(logs.String(), "the page broke")) // the panic is logged
}

func TestRequestID_EchoedOrMade(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := httpapi.NewHandler(stubService{}, httpapi.Options{})

	req := newRequest(http.MethodGet, "/healthz", "", "")
	req.Header.Set("X-Request-ID", "client-42.retry:1")
	is.Equal(serve(h, req).Header.Get("X-Request-ID"), "client-42.retry:1") // a sensible ID is echoed

	for _, given := range []string{"", strings.Repeat("a", 129), "has space", "new\nline"} {
		req := newRequest(http.MethodGet, "/healthz", "", "")
		if given != "" {
			req.Header["X-Request-Id"] = []string{given}
		}
		id := serve(h, req).Header.Get("X-Request-ID")
		is.True(id != "" && id != given) // a missing or odd ID is replaced by a new one
	}
	first := serve(h, newRequest(http.MethodGet, "/healthz", "", "")).Header.Get("X-Request-ID")
	second := serve(h, newRequest(http.MethodGet, "/healthz", "", "")).Header.Get("X-Request-ID")
	is.True(first != second) // each request gets its own
}

// hangingService holds every dequeue until its context ends.
type hangingService struct{ stubService }

func (hangingService) DequeueMessages(ctx context.Context, _ app.DequeueParams) ([]domain.Delivery, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("waiting for the database: %w", ctx.Err())
}

func TestRequestTimeout_EndsTheWorkWithServiceUnavailable(t *testing.T) {
	t.Parallel()
	h := httpapi.NewHandler(hangingService{}, httpapi.Options{RequestTimeout: 50 * time.Millisecond})
	res := serve(h, newRequest(http.MethodPost, dequeuePath("019c9a65-7d3a-7c6b-8a9d-123456789abc"), "", ""))
	assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable") // the request ends, and may be retried
}

func TestCrossOrigin_StateChangingRequestsFromAnotherOrigin_AreRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		headers map[string]string
	}{
		{"another origin", map[string]string{"Origin": "https://evil.example"}},
		{"same host name, other port", map[string]string{"Origin": "http://example.com:8080"}},
		{"an opaque origin", map[string]string{"Origin": "null"}},
		{"a cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"a same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://example.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t) // no tokens: a browser's page must still not drive the API
			queueID := c.createQueueNamed("emails")
			c.enqueue(queueID, "secret", "LOW")
			req := newRequest(http.MethodPost, dequeuePath(queueID), "", "")
			for name, value := range tc.headers {
				req.Header.Set(name, value)
			}

			assertProblem(t, c.send(req), http.StatusForbidden, "cross_origin_request")
			_, ok := c.dequeue(queueID)
			is.True(ok) // the message is still there: the refused dequeue took nothing
		})
	}
}

func TestCrossOrigin_SameOriginAndNonBrowserRequests_AreServed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		method  string
		headers map[string]string
	}{
		{"no Origin (curl, SDKs)", http.MethodPost, nil},
		{"the same origin", http.MethodPost, map[string]string{"Origin": "http://example.com"}},
		{"a same-origin fetch", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}},
		{"typed in the address bar", http.MethodPost, map[string]string{"Sec-Fetch-Site": "none"}},
		{"a read from another origin", http.MethodGet, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			target := dequeuePath(queueID)
			if tc.method == http.MethodGet {
				target = queuePath(queueID)
			}
			req := newRequest(tc.method, target, "", "")
			for name, value := range tc.headers {
				req.Header.Set(name, value)
			}

			res := c.send(req)

			is.True(res.StatusCode == http.StatusOK || res.StatusCode == http.StatusNoContent) // served
		})
	}
}

func TestHost_Invalid_IsRefused(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"exa mple.com", "example.com:port", "example.com:99999", "user@example.com", "example..com", "-example.com",
		"[::1", "[::1]x", "[127.0.0.1]", "::1", "%65xample.com", "example.com:+80", "a,b", "example.com/path",
	} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			req := newRequest(http.MethodGet, "/healthz", "", "")
			req.Host = host

			assertProblem(t, c.send(req), http.StatusBadRequest, "invalid_host")
		})
	}
}

func TestHost_Valid_IsServed(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"example.com", "localhost:2424", "127.0.0.1", "127.0.0.1:2424", "[::1]:2424", "[::1]", "retsu", "Retsu-1.internal.", "api_1.svc", "example.com:",
	} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			req := newRequest(http.MethodGet, "/healthz", "", "")
			req.Host = host

			is.Equal(c.send(req).StatusCode, http.StatusOK) // a host name or address, with a port or not
		})
	}
}
