package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
)

// answer is an answer that a request in the background will give.
type answer chan *http.Response

// start sends req in the background.
func (c *client) start(req *http.Request) answer {
	done := make(answer, 1)
	go func() {
		rec := httptest.NewRecorder()
		c.handler.ServeHTTP(rec, req)
		done <- rec.Result()
	}()
	return done
}

// startWaiting sends a dequeue that waits up to seconds in the background, to path, and
// returns once it has set the timer of its wait.
func (c *client) startWaiting(path string, seconds int) answer {
	c.t.Helper()
	return c.startWaitingRequest(newRequest(http.MethodPost, path, jsonType, waitBody(strconv.Itoa(seconds))), seconds)
}

// startWaitingRequest is startWaiting for a request of the test's own.
func (c *client) startWaitingRequest(req *http.Request, seconds int) answer {
	c.t.Helper()
	wait := time.Duration(seconds) * time.Second
	before := c.timers.count(wait)
	done := c.start(req)
	for deadline := time.Now().Add(5 * time.Second); c.timers.count(wait) == before; time.Sleep(time.Millisecond) {
		select {
		case res := <-done:
			c.t.Fatalf("the dequeue answered %d instead of waiting", res.StatusCode)
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatal("the dequeue did not start to wait")
		}
	}
	return done
}

// within returns the answer, failing the test when it takes more than a few seconds.
func (a answer) within(t *testing.T) *http.Response {
	t.Helper()
	select {
	case res := <-a:
		return res
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

// pending checks that there is no answer yet.
func (a answer) pending(t *testing.T) {
	t.Helper()
	select {
	case res := <-a:
		t.Fatalf("answered %d, want it still waiting", res.StatusCode)
	case <-time.After(50 * time.Millisecond):
	}
}

func waitBody(seconds string) string { return `{"wait_seconds":` + seconds + `}` }

func TestDequeueWait_AnswersTheMessageEnqueuedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, route := range []string{"single", "batch"} {
		t.Run(route, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			path := dequeuePath(queueID)
			if route == "batch" {
				path = dequeueBatchPath(queueID)
			}
			waiting := c.startWaiting(path, 20)

			id := c.enqueue(queueID, "a", "LOW")

			res := waiting.within(t)
			var got messageJSON
			if route == "batch" {
				list := messages(t, res)
				is.Equal(len(list), 1) // the batch answers as soon as one message is deliverable
				got = list[0]
			} else {
				is.Equal(res.StatusCode, http.StatusOK) // the waiting dequeue is answered
				is.NoErr(jsonUnmarshalStrict(readAll(t, res), &got))
			}
			is.Equal(got.ID, id) // with the message that came
		})
	}
}

func TestDequeueWait_NothingByTheEndOfTheWait_Is204OrEmpty(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	single := c.startWaiting(dequeuePath(queueID), 5)
	batch := c.startWaiting(dequeueBatchPath(queueID), 5)

	c.clock.Advance(4 * time.Second)
	single.pending(t)
	c.clock.Advance(time.Second)

	is.Equal(single.within(t).StatusCode, http.StatusNoContent) // the single dequeue answers 204 when its wait ends
	is.Equal(len(messages(t, batch.within(t))), 0)              // the batch an empty array
}

func TestDequeueWait_WokenWhenADelayOrALeaseEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","visibility_timeout_seconds":10}`).ID
	c.enqueueBody(queueID, `{"payload":"delayed","priority":"LOW","delay_seconds":3}`)
	waiting := c.startWaiting(dequeuePath(queueID), 20)

	c.clock.Advance(3 * time.Second)
	res := waiting.within(t)
	is.Equal(res.StatusCode, http.StatusOK) // the end of the delay wakes the dequeue
	var m messageJSON
	is.NoErr(jsonUnmarshalStrict(readAll(t, res), &m))
	waiting = c.startWaiting(dequeuePath(queueID), 20)
	c.clock.Advance(10 * time.Second)
	res = waiting.within(t)
	is.Equal(res.StatusCode, http.StatusOK) // and so does the end of a lease
	var again messageJSON
	is.NoErr(jsonUnmarshalStrict(readAll(t, res), &again))
	is.Equal(again.ID, m.ID)            // the same message
	is.Equal(again.DeliveryAttempts, 2) // delivered again
}

func TestDequeueWait_OneMessageForTwoWaiters_ExactlyOneGetsIt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	first := c.startWaiting(dequeuePath(queueID), 20)
	second := c.startWaiting(dequeuePath(queueID), 20)

	c.enqueue(queueID, "a", "LOW")

	var winner, other answer
	select {
	case res := <-first:
		winner, other = answer(make(chan *http.Response, 1)), second
		winner <- res
	case res := <-second:
		winner, other = answer(make(chan *http.Response, 1)), first
		winner <- res
	case <-time.After(5 * time.Second):
		t.Fatal("no waiter got the message")
	}
	is.Equal(winner.within(t).StatusCode, http.StatusOK) // one waiter gets the message
	other.pending(t)                                     // the other keeps waiting
	c.clock.Advance(20 * time.Second)
	is.Equal(other.within(t).StatusCode, http.StatusNoContent) // until its wait ends
}

func TestDequeueWait_ClosingTheServiceAnswersTheWaits(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	single := c.startWaiting(dequeuePath(queueID), 20)
	batch := c.startWaiting(dequeueBatchPath(queueID), 20)

	c.svc.Close() // as the server does on SIGTERM

	is.Equal(single.within(t).StatusCode, http.StatusNoContent) // the waiting dequeue answers 204 at once
	is.Equal(len(messages(t, batch.within(t))), 0)              // the waiting batch []
}

func TestDequeueWait_HoldsNoSlotOfTheConcurrencyCap(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupWith(t, httpapi.Options{MaxConcurrentRequests: 1})
	queueID := c.createQueueNamed("emails")
	waiting := c.startWaiting(dequeuePath(queueID), 20)

	res := c.do(http.MethodGet, queuePath(queueID), "")

	is.Equal(res.StatusCode, http.StatusOK)                                                    // the one slot is free while the dequeue waits
	is.Equal(c.do(http.MethodPost, dequeuePath(queueID), "").StatusCode, http.StatusNoContent) // a dequeue that does not wait takes it
	waiting.pending(t)
}

func TestDequeueWait_PastItsOwnCap_IsServiceUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupWith(t, httpapi.Options{MaxWaitingRequests: 1, MaxConcurrentRequests: 1})
	queueID := c.createQueueNamed("emails")
	waiting := c.startWaiting(dequeuePath(queueID), 20)

	for _, req := range []*http.Request{
		newRequest(http.MethodPost, dequeuePath(queueID), jsonType, waitBody("1")),
		newRequest(http.MethodPost, dequeueBatchPath(queueID), jsonType, waitBody("20")),
	} {
		res := c.send(req)
		is.Equal(res.Header.Get("Retry-After"), "1") // a second long poll is told when to come back
		assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable")
	}
	is.Equal(c.do(http.MethodPost, dequeuePath(queueID), waitBody("0")).StatusCode, http.StatusNoContent) // a dequeue that does not wait is not behind that cap
	c.clock.Advance(20 * time.Second)
	is.Equal(waiting.within(t).StatusCode, http.StatusNoContent)
	again := c.startWaiting(dequeuePath(queueID), 1)
	c.clock.Advance(time.Second)
	is.Equal(again.within(t).StatusCode, http.StatusNoContent) // the place is free again once the wait ended
}

func TestDequeueWait_NotCutShortByTheRequestTimeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setupWith(t, httpapi.Options{RequestTimeout: 20 * time.Millisecond})
	queueID := c.createQueueNamed("emails")
	waiting := c.startWaiting(dequeuePath(queueID), 20)

	time.Sleep(100 * time.Millisecond) // five request timeouts
	waiting.pending(t)
	c.enqueue(queueID, "a", "LOW")

	is.Equal(waiting.within(t).StatusCode, http.StatusOK) // the long poll waited past the request timeout, and got the message
}

func TestDequeueWait_ClientGone_EndsTheWaitWithoutAnError(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs syncBuffer
	c := setupWith(t, httpapi.Options{Logger: newTextLogger(&logs)})
	queueID := c.createQueueNamed("emails")
	ctx, cancel := context.WithCancel(context.Background())
	req := newRequest(http.MethodPost, dequeuePath(queueID), jsonType, waitBody("20")).WithContext(ctx)
	waiting := c.startWaitingRequest(req, 20)

	cancel()

	waiting.within(t)           // the wait ends with the client's request
	is.Equal(logs.String(), "") // a client that went away is no error of the server
	c.enqueue(queueID, "a", "LOW")
	_, ok := c.dequeue(queueID)
	is.True(ok) // and no message went to it
}

func TestDequeueWait_ClientGone_CountsAs499NotAs503(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs syncBuffer
	observer := &recordingObserver{}
	c := setupWith(t, httpapi.Options{Observer: observer, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	queueID := c.createQueueNamed("emails")
	ctx, cancel := context.WithCancel(context.Background())
	waiting := c.startWaitingRequest(newRequest(http.MethodPost, dequeuePath(queueID), jsonType, waitBody("20")).WithContext(ctx), 20)

	cancel()
	waiting.within(t)

	is.Equal(observer.finished[1], observed{"/v1/queues/{queue_id}/messages/dequeue", "POST", 499}) // client closed request, as nginx counts it: no failure of the server
	is.True(strings.Contains(logs.String(), "status=499"))                                          // the request's line says so too
	is.True(!strings.Contains(logs.String(), "status=503"))                                         // nowhere a 503
}

func TestDequeueWait_Values(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		code string
	}{
		{waitBody("21"), "invalid_wait"},
		{waitBody("-1"), "invalid_wait"},
		{waitBody("0.5"), "invalid_wait"},
		{waitBody("1e400"), "invalid_wait"},
		{waitBody(`"5"`), "invalid_json"},
		{waitBody("null"), "invalid_json"},
		{`{"wait_seconds":1,"max_messages":2}`, "invalid_json"},
		{`{"Wait_Seconds":1}`, "invalid_json"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, dequeuePath(queueID), tc.body)

			assertProblem(t, res, http.StatusBadRequest, tc.code)
		})
	}
}

func TestDequeueWait_BoundsAreAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	is.Equal(c.do(http.MethodPost, dequeuePath(queueID), waitBody("0")).StatusCode, http.StatusNoContent)     // 0 does not wait
	is.Equal(c.do(http.MethodPost, dequeuePath(queueID), waitBody("0e100")).StatusCode, http.StatusNoContent) // nor does 0 with any exponent
	waiting := c.startWaitingRequest(newRequest(http.MethodPost, dequeuePath(queueID), jsonType, waitBody("2e1")), 20)

	c.clock.Advance(20 * time.Second)

	is.Equal(waiting.within(t).StatusCode, http.StatusNoContent) // 20 waits 20 s
}

func TestDequeueWait_ValuesBeforeExistence(t *testing.T) {
	t.Parallel()
	c := setup(t)

	assertProblem(t, c.do(http.MethodPost, dequeuePath(unknownID), waitBody("21")), http.StatusBadRequest, "invalid_wait")
	assertProblem(t, c.do(http.MethodPost, dequeuePath(unknownID), waitBody("5")), http.StatusNotFound, "queue_not_found")
}
