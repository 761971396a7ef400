package httpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var ctx = context.Background()

// fastRetries keep the tests of retries short.
var fastRetries = httpclient.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}

// recorded is a request that a scripted server received.
type recorded struct {
	method, path string
	header       http.Header
	body         string
}

// scripted is a server that answers each request with the next of its answers (the last one
// over and over) and records the requests.
type scripted struct {
	mu       sync.Mutex
	answers  []func(w http.ResponseWriter)
	requests []recorded
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, recorded{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body)})
	answer := s.answers[min(len(s.requests), len(s.answers))-1]
	s.mu.Unlock()
	answer(w)
}

func (s *scripted) received() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

// serve starts a scripted server with answers, and a client of it with o.
func serve(t *testing.T, o httpclient.Options, answers ...func(w http.ResponseWriter)) (*httpclient.Client, *scripted) {
	t.Helper()
	s := &scripted{answers: answers}
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	client, err := httpclient.New(server.URL, o)
	if err != nil {
		t.Fatal(err)
	}
	return client, s
}

// problem answers a problem document.
func problem(status int, code, pointer string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(status),
			"status": status, "detail": "what went wrong", "code": code, "pointer": pointer})
	}
}

// answerJSON answers v as JSON with status.
func answerJSON(status int, v any, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
}

// hangUp closes the connection without an answer: a lost answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

var (
	queueID = domain.ID{0x01, 0x9c, 0x9a, 0x65, 0x7d, 0x3a, 0x7c, 0x6b, 0x8a, 0x9d, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc}
	receipt = domain.Receipt{MessageID: domain.ID{1}, ReceiptHandle: domain.ID{2}}
	oneNew  = []domain.NewMessage{{Payload: "x", Priority: domain.PriorityHigh}}
)

func TestClient_ProblemDocument_ErrorWithCodeStatusDetail(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, _ := serve(t, httpclient.Options{}, problem(http.StatusConflict, "lease_lost", ""))
	err := client.Extend(ctx, queueID, receipt, time.Minute)
	is.True(errors.Is(err, domain.ErrLeaseLost)) // the domain's sentinel matches the API's code
	var coded *domain.Error
	is.True(errors.As(err, &coded))            // the error is a *domain.Error too
	is.Equal(coded.Code, domain.CodeLeaseLost) // with the code
	var apiErr *httpclient.Error
	is.True(errors.As(err, &apiErr))                                                             // and an *Error of the API
	is.Equal([]any{apiErr.Status, apiErr.Detail}, []any{http.StatusConflict, "what went wrong"}) // with the status and detail
	var transportErr *httpclient.TransportError
	is.True(!errors.As(err, &transportErr)) // not a transport error
}

func TestClient_NotAProblemDocument_CodeFromTheStatus(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	html := func(status int) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "<h1>Bad Gateway</h1>")
		}
	}
	client, _ := serve(t, httpclient.Options{Retry: httpclient.RetryPolicy{MaxAttempts: 1}}, html(http.StatusBadGateway))
	_, err := client.Queue(ctx, queueID)
	is.Equal(domain.ErrorCode(err), domain.CodeUnavailable) // a proxy's 502 is an unavailable service
	client, _ = serve(t, httpclient.Options{}, html(http.StatusTeapot))
	_, err = client.Queue(ctx, queueID)
	is.Equal(domain.ErrorCode(err), domain.CodeInternal) // anything else unexpected is internal
}

func TestClient_BatchEntryError_EntryErrorAtThePointersIndex(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, _ := serve(t, httpclient.Options{}, problem(http.StatusBadRequest, "invalid_priority", "/messages/3/priority"))
	_, err := client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: oneNew, Batch: true})
	var entry *domain.EntryError
	is.True(errors.As(err, &entry))                             // the error of one entry
	is.Equal(entry.Index, 3)                                    // whose index the pointer gives
	is.Equal(domain.ErrorCode(err), domain.CodeInvalidPriority) // with the entry's code
	var apiErr *httpclient.Error
	is.True(errors.As(err, &apiErr))
	is.Equal(apiErr.Pointer, "/messages/3/priority") // and the pointer kept
}

func TestClient_TransportError_DistinctFromAPIErrors(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	address := listener.Addr().String()
	listener.Close() // nothing listens there any more
	client, err := httpclient.New("http://"+address, httpclient.Options{Retry: fastRetries})
	is.NoErr(err)
	_, err = client.Queue(ctx, queueID)
	var transportErr *httpclient.TransportError
	is.True(errors.As(err, &transportErr)) // no answer is a transport error
	var apiErr *httpclient.Error
	is.True(!errors.As(err, &apiErr))                    // not an API error
	is.Equal(domain.ErrorCode(err), domain.CodeInternal) // and carries no code of the API
}

func TestClient_Token_SentAsBearer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Token: "a-token-of-sixteen-chars"}, answerJSON(http.StatusOK, map[string]any{"queues": []any{}}))
	_, err := client.ListQueues(ctx, portsListAll)
	is.NoErr(err)
	is.Equal(s.received()[0].header.Get("Authorization"), "Bearer a-token-of-sixteen-chars") // every request carries the token
}

func TestClient_Idempotent_RetriedAfter503AndALostAnswer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	queue := map[string]any{"id": queueID.String(), "name": "q", "visibility_timeout_seconds": 30, "max_delivery_attempts": 5, "default_message_ttl_seconds": 60}
	client, s := serve(t, httpclient.Options{Retry: fastRetries},
		problem(http.StatusServiceUnavailable, "service_unavailable", "", "Retry-After", "0"), hangUp, answerJSON(http.StatusOK, queue))
	q, err := client.Queue(ctx, queueID)
	is.NoErr(err)
	is.Equal(q.Name, "q")          // the third attempt answered
	is.Equal(len(s.received()), 3) // after a 503 and a lost answer
}

func TestClient_RetryAfter_Honoured(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries},
		problem(http.StatusServiceUnavailable, "service_unavailable", "", "Retry-After", "1"), answerJSON(http.StatusNoContent, nil))
	started := time.Now()
	is.NoErr(client.Extend(ctx, queueID, receipt, time.Minute))
	is.Equal(len(s.received()), 2)                       // retried
	is.True(time.Since(started) >= 900*time.Millisecond) // after the pause the server asked for, longer than the backoff
}

func TestClient_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries}, problem(http.StatusServiceUnavailable, "service_unavailable", ""))
	err := client.Extend(ctx, queueID, receipt, time.Minute)
	is.True(errors.Is(err, domain.ErrUnavailable)) // the last attempt's error
	is.Equal(len(s.received()), 3)                 // after MaxAttempts
}

func TestClient_NotRetried_DequeueReleaseAndOtherCodes(t *testing.T) {
	t.Parallel()
	calls := map[string]func(c *httpclient.Client) error{
		"dequeue": func(c *httpclient.Client) error {
			_, err := c.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: 10})
			return err
		},
		"release":      func(c *httpclient.Client) error { return c.Release(ctx, queueID, receipt, 0) },
		"create queue": func(c *httpclient.Client) error { _, err := c.CreateQueue(ctx, domain.NewQueue{Name: "q"}); return err },
		"purge":        func(c *httpclient.Client) error { _, err := c.PurgeQueue(ctx, queueID); return err },
		"redrive": func(c *httpclient.Client) error {
			_, err := c.Redrive(ctx, queueID, domain.Redrive{Limit: 5})
			return err
		},
	}
	for name, call := range calls {
		for answerName, answer := range map[string]func(http.ResponseWriter){
			"lost answer": hangUp, "503": problem(http.StatusServiceUnavailable, "service_unavailable", "", "Retry-After", "0"),
		} {
			t.Run(name+" "+answerName, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				client, s := serve(t, httpclient.Options{Retry: fastRetries}, answer)
				is.True(call(client) != nil)   // the failure is reported
				is.Equal(len(s.received()), 1) // after a single attempt: sending it again could do it twice
			})
		}
	}
	t.Run("idempotent call, 4xx", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		client, s := serve(t, httpclient.Options{Retry: fastRetries}, problem(http.StatusNotFound, "queue_not_found", ""))
		_, err := client.Queue(ctx, queueID)
		is.True(errors.Is(err, domain.ErrQueueNotFound))
		is.Equal(len(s.received()), 1) // an answer about the request is final
	})
}

func TestClient_NeverSent_RetriedWhateverTheRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	address := listener.Addr().String()
	listener.Close()
	attempts := 0
	dialer := &net.Dialer{}
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		attempts++
		return dialer.DialContext(ctx, network, address)
	}}
	client, err := httpclient.New("http://"+address, httpclient.Options{Retry: fastRetries, HTTPClient: &http.Client{Transport: transport}})
	is.NoErr(err)
	_, err = client.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: 10})
	is.True(err != nil)
	is.Equal(attempts, 3) // a request that could not connect never reached the server: sending it again is safe
}

func TestClient_Enqueue_KeyOnEveryRequest_SameKeyOnRetry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries},
		hangUp, answerJSON(http.StatusCreated, map[string]any{"ids": []string{queueID.String()}}, "Idempotent-Replayed", "true"))
	enqueued, err := client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: oneNew, Batch: true})
	is.NoErr(err)
	requests := s.received()
	is.Equal(len(requests), 2) // the enqueue was retried after its answer was lost
	key := requests[0].header.Get("Idempotency-Key")
	is.True(key != "")                                       // with a key the client made up
	is.Equal(requests[1].header.Get("Idempotency-Key"), key) // the same on the retry, so that the server stores once
	is.True(!enqueued.Replayed)                              // a replay of the client's own key is no replay to the caller
	is.Equal(enqueued.IDs, []domain.ID{queueID})             // whose IDs it gets
	_, err = client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: oneNew, Batch: true})
	is.NoErr(err)
	is.True(s.received()[2].header.Get("Idempotency-Key") != key) // another request gets another key
}

func TestClient_Enqueue_CallersKey_ReplayReportedAndKeyInUseRetried(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries},
		problem(http.StatusConflict, "idempotency_key_in_use", "", "Retry-After", "0"),
		answerJSON(http.StatusCreated, map[string]any{"id": queueID.String()}, "Idempotent-Replayed", "true"))
	enqueued, err := client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: oneNew, IdempotencyKey: "mine"})
	is.NoErr(err)
	is.Equal(s.received()[0].header.Get("Idempotency-Key"), "mine") // the caller's key
	is.Equal(len(s.received()), 2)                                  // retried while the first request with it was in progress
	is.True(enqueued.Replayed)                                      // and the replay of the caller's key reported
}

func TestClient_Enqueue_AttributesRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{}, answerJSON(http.StatusCreated, map[string]any{"id": queueID.String()}))
	withAttributes := []domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow, Attributes: domain.Attributes{"a": {DataType: "String", StringValue: "v"}}}}
	_, err := client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: withAttributes})
	is.True(errors.Is(err, httpclient.ErrAttributesNotSupported)) // not dropped silently
	is.Equal(len(s.received()), 0)                                // and nothing sent
}

func TestClient_Bodies_AsTheContractSpellsThem(t *testing.T) {
	t.Parallel()
	noContent := answerJSON(http.StatusNoContent, nil)
	tests := []struct {
		name       string
		call       func(c *httpclient.Client) error
		answer     func(http.ResponseWriter)
		method     string
		path, body string
	}{
		{"extend", func(c *httpclient.Client) error { return c.Extend(ctx, queueID, receipt, 90*time.Second) }, noContent,
			"POST", "/v1/queues/" + queueID.String() + "/messages/" + receipt.MessageID.String() + "/extend",
			`{"receipt_handle":"` + receipt.ReceiptHandle.String() + `","visibility_timeout_seconds":90}`},
		{"release", func(c *httpclient.Client) error { return c.Release(ctx, queueID, receipt, 1500*time.Millisecond) }, noContent,
			"POST", "/v1/queues/" + queueID.String() + "/messages/" + receipt.MessageID.String() + "/release",
			`{"receipt_handle":"` + receipt.ReceiptHandle.String() + `","delay_seconds":1.5}`},
		{"dequeue batch", func(c *httpclient.Client) error {
			_, err := c.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: 7, Wait: 3 * time.Second})
			return err
		}, answerJSON(http.StatusOK, map[string]any{"messages": []any{}}),
			"POST", "/v1/queues/" + queueID.String() + "/messages/dequeue/batch", `{"max_messages":7,"wait_seconds":3}`},
		{"redrive by limit", func(c *httpclient.Client) error {
			_, err := c.Redrive(ctx, queueID, domain.Redrive{Limit: 0})
			return err
		},
			answerJSON(http.StatusOK, map[string]any{"redriven": []any{}}),
			"POST", "/v1/queues/" + queueID.String() + "/dead-letters/redrive", `{"limit":0}`},
		{"redrive by IDs", func(c *httpclient.Client) error {
			_, err := c.Redrive(ctx, queueID, domain.Redrive{IDs: []domain.ID{}})
			return err
		}, answerJSON(http.StatusOK, map[string]any{"redriven": []any{}}),
			"POST", "/v1/queues/" + queueID.String() + "/dead-letters/redrive", `{"ids":[]}`},
		{"list", func(c *httpclient.Client) error {
			_, err := c.ListQueues(ctx, portsListPage)
			return err
		}, answerJSON(http.StatusOK, map[string]any{"queues": []any{}}), "GET", "/v1/queues?after=a+b&limit=5&name=x", ""},
		{"list by the empty name", func(c *httpclient.Client) error {
			_, err := c.ListQueues(ctx, ports.ListQueuesParams{Name: new("")})
			return err
		}, answerJSON(http.StatusOK, map[string]any{"queues": []any{}}), "GET", "/v1/queues?name=", ""},
		{"list all", func(c *httpclient.Client) error {
			_, err := c.ListQueues(ctx, portsListAll)
			return err
		}, answerJSON(http.StatusOK, map[string]any{"queues": []any{}}), "GET", "/v1/queues", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			client, s := serve(t, httpclient.Options{}, tc.answer)
			is.NoErr(tc.call(client))
			got := s.received()[0]
			is.Equal(got.method+" "+got.path, tc.method+" "+tc.path) // the route
			is.Equal(trimNewline(got.body), tc.body)                 // and the body, seconds as numbers
			if tc.body != "" {
				is.Equal(got.header.Get("Content-Type"), "application/json") // declared as JSON
			}
		})
	}
}

func trimNewline(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\n' {
		return s[:len(s)-1]
	}
	return s
}

func TestNew_BaseURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "127.0.0.1:2424", "ftp://host", "http://", "http://host/?q=1"} {
		if _, err := httpclient.New(bad, httpclient.Options{}); err == nil {
			t.Errorf("New(%q) accepted the URL", bad)
		}
	}
	if _, err := httpclient.New("https://retsu.example/api/", httpclient.Options{}); err != nil {
		t.Errorf("a URL with a path prefix: %v", err)
	}
}

// Listings of the tests.
var (
	portsListAll  = ports.ListQueuesParams{}
	portsListPage = ports.ListQueuesParams{Name: new("x"), After: "a b", Limit: 5}
)

func TestClient_Acknowledge_LostAnswer_RetriedWithTheSameReceiptAndFalseReportedUnknown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries},
		hangUp, answerJSON(http.StatusOK, map[string]any{"results": []any{map[string]any{"id": receipt.MessageID.String(), "acknowledged": false}}}))
	removed, err := client.AcknowledgeMessages(ctx, queueID, []domain.Receipt{receipt})
	requests := s.received()
	is.Equal(len(requests), 2)                            // retried after the lost answer
	is.Equal(requests[1].body, requests[0].body)          // with the same receipt handle
	is.Equal(removed, []bool{false})                      // the retry's answer
	is.True(errors.Is(err, httpclient.ErrOutcomeUnknown)) // whose false may mean that the lost attempt removed it: neither failure nor success
}

func TestClient_Acknowledge_NoAnswerAtAll_OutcomeUnknown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries}, hangUp)
	removed, err := client.AcknowledgeMessages(ctx, queueID, []domain.Receipt{receipt})
	is.Equal(len(s.received()), 3)                        // every attempt sent
	is.Equal(removed, nil)                                // no result known
	is.True(errors.Is(err, httpclient.ErrOutcomeUnknown)) // reported as unknown
	var transportErr *httpclient.TransportError
	is.True(errors.As(err, &transportErr)) // and still a transport error
}

func TestClient_Idempotent_RetriedAfterAProxys502And504(t *testing.T) {
	t.Parallel()
	queue := map[string]any{"id": queueID.String(), "name": "q", "visibility_timeout_seconds": 30, "max_delivery_attempts": 5, "default_message_ttl_seconds": 60}
	for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			page := func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, "<h1>proxy</h1>")
			}
			client, s := serve(t, httpclient.Options{Retry: fastRetries}, page, answerJSON(http.StatusOK, queue))
			q, err := client.Queue(ctx, queueID)
			is.NoErr(err)
			is.Equal(q.Name, "q")          // the retry answered
			is.Equal(len(s.received()), 2) // after the proxy's error
			client, s = serve(t, httpclient.Options{Retry: fastRetries}, page, answerJSON(http.StatusCreated, map[string]any{"id": queueID.String()}))
			_, err = client.Enqueue(ctx, queueID, oneNew[0])
			is.NoErr(err)
			is.Equal(len(s.received()), 2) // a keyed enqueue too
			client, s = serve(t, httpclient.Options{Retry: fastRetries}, page)
			_, err = client.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: 1})
			is.True(err != nil)
			is.Equal(len(s.received()), 1) // but never a dequeue
		})
	}
}

func TestClient_NoEnqueueKeys_EnqueueWithoutAKeySentOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client, s := serve(t, httpclient.Options{Retry: fastRetries, NoEnqueueKeys: true}, hangUp)
	_, err := client.Enqueue(ctx, queueID, oneNew[0])
	is.True(err != nil)
	is.Equal(len(s.received()), 1)                              // not retried: without a key a retry could store the message twice
	is.Equal(s.received()[0].header.Get("Idempotency-Key"), "") // and no key made up
	_, err = client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: oneNew, IdempotencyKey: "mine"})
	is.True(err != nil)
	is.Equal(len(s.received()), 1+fastRetries.MaxAttempts) // the caller's key still makes it safe to retry
}

func TestClient_DefaultTransport_KeepsConnectionsForConcurrentCalls(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var opened atomic.Int64
	queue := map[string]any{"id": queueID.String(), "name": "q", "visibility_timeout_seconds": 30, "max_delivery_attempts": 5, "default_message_ttl_seconds": 60}
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // long enough for the 32 calls to overlap
		answerJSON(http.StatusOK, queue)(w)
	}))
	server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			opened.Add(1)
		}
	}
	server.Start()
	t.Cleanup(server.Close)
	client, err := httpclient.New(server.URL, httpclient.Options{})
	is.NoErr(err)
	for range 3 {
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				if _, err := client.Queue(ctx, queueID); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	is.True(opened.Load() <= 40) // a worker of concurrency 32 reuses its connections rather than opening new ones each round
}
