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
