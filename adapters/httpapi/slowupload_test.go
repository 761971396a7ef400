package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/adapters/httpapi"
)

// startedCounter counts the requests that reached the handler.
type startedCounter struct {
	mu      sync.Mutex
	started int
}

func (o *startedCounter) RequestStarted() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
}

func (o *startedCounter) RequestFinished(string, string, int, time.Duration) {}

func (o *startedCounter) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.started
}

func TestSlowUploads_DoNotShutTheInstanceOut(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const uploads = 1000
	observer := &startedCounter{}
	c := setupWith(t, httpapi.Options{MaxConcurrentRequests: 16, Observer: observer, Metrics: http.NotFoundHandler()})
	queueID := c.createQueueNamed("emails")
	server := httptest.NewUnstartedServer(c.handler)
	server.Config.ReadTimeout = 10 * time.Second // ends the uploads once the test is done
	server.Start()
	t.Cleanup(server.Close)

	// 1,000 clients send the headers of an enqueue that announces 1,000 bytes, then dribble.
	conns := make([]net.Conn, uploads)
	for i := range conns {
		conn, err := net.Dial("tcp", server.Listener.Addr().String())
		is.NoErr(err) // the server accepts the connection
		t.Cleanup(func() { _ = conn.Close() })
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", messagesPath(queueID))
		is.NoErr(err)
		conns[i] = conn
	}
	before := observer.count() - uploads
	for deadline := time.Now().Add(10 * time.Second); observer.count()-before < uploads; time.Sleep(10 * time.Millisecond) {
		is.True(time.Now().Before(deadline)) // every upload reaches the handler
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, conn := range conns {
				_, _ = conn.Write([]byte(" "))
			}
		}
	}()

	client := server.Client()
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		res, err := client.Get(server.URL + path)
		is.NoErr(err)
		_ = res.Body.Close()
		is.True(res.StatusCode != http.StatusServiceUnavailable) // the probes and the metrics answer while the uploads dribble
	}
	for range 20 {
		res, err := client.Post(server.URL+messagesPath(queueID), jsonType, strings.NewReader(`{"payload":"a","priority":"LOW"}`))
		is.NoErr(err)
		_ = res.Body.Close()
		is.Equal(res.StatusCode, http.StatusCreated) // and so do normal requests, more of them than the cap
		res, err = client.Post(server.URL+dequeuePath(queueID), "", nil)
		is.NoErr(err)
		_ = res.Body.Close()
		is.Equal(res.StatusCode, http.StatusOK)
	}
}

func TestSharedCapacity_TakenByAnotherListener_IsServiceUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	shared := capacity.New(capacity.Options{MaxRequests: 1, MaxWaiting: 1, MaxBodyBytes: 4096})
	c := setupWith(t, httpapi.Options{Capacity: shared})
	queueID := c.createQueueNamed("emails")

	release, ok := shared.Requests.TryTake()
	is.True(ok) // the SQS endpoint holds the only place
	assertProblem(t, c.do(http.MethodGet, queuePath(queueID), ""), http.StatusServiceUnavailable, "service_unavailable")
	release()
	is.Equal(c.do(http.MethodGet, queuePath(queueID), "").StatusCode, http.StatusOK) // given back, the API serves

	release, ok = shared.Waiting.TryTake()
	is.True(ok) // a waiting receive holds the only place of long polls
	assertProblem(t, c.do(http.MethodPost, dequeuePath(queueID), waitBody("1")), http.StatusServiceUnavailable, "service_unavailable")
	release()

	release, ok = shared.BodyBytes.TryReserve(4000)
	is.True(ok) // bodies elsewhere hold most of the budget
	body := `{"payload":"` + strings.Repeat("m", 200) + `","priority":"LOW"}`
	res := c.do(http.MethodPost, messagesPath(queueID), body)
	is.Equal(res.Header.Get("Connection"), "close") // the body is not read
	assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable")
	is.Equal(c.do(http.MethodPost, messagesPath(queueID), `{"payload":"m","priority":"LOW"}`).StatusCode, http.StatusCreated) // a body within what is left is served
	release()
	is.Equal(c.do(http.MethodPost, messagesPath(queueID), body).StatusCode, http.StatusCreated) // and, given back, the larger one too
}
