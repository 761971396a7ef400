package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

func TestUnknownRoute_IsNotFound(t *testing.T) {
	t.Parallel()
	for _, target := range []string{
		"/",
		"/v1",
		"/v1/nope",
		"/v2/queues",
		"/V1/queues",
		"/v1/queues/",
		"/v1//queues",
		"/v1/./queues",
		"/v1/queues/" + unknownID + "/",
		"/v1/queues/" + unknownID + "/messages/",
		"/v1/queues/" + unknownID + "/messages/" + unknownID,
		"/v1/queues/" + unknownID + "/messages/" + unknownID + "/acknowledge/more",
		"/v1/queues/" + unknownID + "/../" + unknownID,
		"/healthz/",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			t.Run(method+" "+target, func(t *testing.T) {
				t.Parallel()
				c := setup(t)

				res := c.do(method, target, "")

				assertProblem(t, res, http.StatusNotFound, "not_found")
			})
		}
	}
}

func TestWrongMethod_IsMethodNotAllowedWithAllow(t *testing.T) {
	t.Parallel()
	queue := "/v1/queues/" + unknownID
	tests := []struct {
		method, target, allow string
	}{
		{http.MethodDelete, "/v1/queues", "GET, POST"},
		{http.MethodPut, "/v1/queues", "GET, POST"},
		{http.MethodPatch, "/v1/queues", "GET, POST"},
		{http.MethodPost, queue, "DELETE, GET, PATCH"},
		{http.MethodPut, queue, "DELETE, GET, PATCH"},
		{http.MethodGet, queue + "/messages", "DELETE, POST"},
		{http.MethodPut, queue + "/messages", "DELETE, POST"},
		{http.MethodGet, queue + "/messages/dequeue", "POST"},
		{http.MethodPut, queue + "/messages/dequeue", "POST"},
		{http.MethodGet, queue + "/messages/" + unknownID + "/acknowledge", "POST"},
		{http.MethodDelete, queue + "/messages/" + unknownID + "/acknowledge", "POST"},
		{http.MethodPost, "/healthz", "GET"},
		{http.MethodPost, "/readyz", "GET"},
		{http.MethodPost, queue + "/stats", "GET"},
		{http.MethodDelete, queue + "/stats", "GET"},
		{http.MethodGet, queue + "/messages/batch", "POST"},
		{http.MethodGet, queue + "/messages/dequeue/batch", "POST"},
		{http.MethodDelete, queue + "/messages/acknowledge/batch", "POST"},
		{http.MethodGet, queue + "/messages/" + unknownID + "/extend", "POST"},
		{http.MethodPut, queue + "/messages/" + unknownID + "/release", "POST"},
		{http.MethodPost, queue + "/dead-letters", "DELETE, GET"},
		{http.MethodPut, queue + "/dead-letters/redrive", "DELETE, GET, POST"},
		{http.MethodPatch, queue + "/dead-letters/redrive", "DELETE, GET, POST"},
		{http.MethodPost, queue + "/dead-letters/" + unknownID, "DELETE, GET"},
		{http.MethodOptions, "/v1/queues", "GET, POST"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)

			res := c.do(tc.method, tc.target, "")

			is.Equal(res.Header.Get("Allow"), tc.allow) // Allow lists the route's methods
			assertProblem(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
		})
	}
}

func TestRedriveSegment_IsAMalformedMessageIDForTheDeadLetterMethods(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(method, redrivePath(queueID), "")

			// The dead-letter route takes the method, and redrive fills its {message_id}:
			// the route and method pass, then the ID does not.
			assertProblem(t, res, http.StatusBadRequest, "invalid_path")
		})
	}
}

// stubService answers every call with err, as a failing store would.
type stubService struct{ err error }

var _ app.Retsu = stubService{}

func (s stubService) CreateQueue(context.Context, domain.NewQueue) (domain.Queue, error) {
	return domain.Queue{}, s.err
}

func (s stubService) Queue(context.Context, domain.ID) (domain.Queue, error) {
	return domain.Queue{}, s.err
}

func (s stubService) ListQueues(context.Context, ports.ListQueuesParams) ([]domain.Queue, error) {
	return nil, s.err
}

func (s stubService) UpdateQueue(context.Context, domain.ID, domain.SettingsUpdate) (domain.Queue, error) {
	return domain.Queue{}, s.err
}

func (s stubService) DeleteQueue(context.Context, domain.ID) error { return s.err }

func (s stubService) PurgeQueue(context.Context, domain.ID) (int, error) { return 0, s.err }

func (s stubService) Stats(context.Context, domain.ID) (domain.QueueStats, error) {
	return domain.QueueStats{}, s.err
}

func (s stubService) EnqueueMessages(_ context.Context, p app.EnqueueParams) (app.Enqueued, error) {
	if s.err != nil {
		return app.Enqueued{}, s.err
	}
	return app.Enqueued{IDs: make([]domain.ID, len(p.Messages))}, nil
}

func (s stubService) DequeueMessages(context.Context, app.DequeueParams) ([]domain.Delivery, error) {
	return nil, s.err
}

func (s stubService) AcknowledgeMessages(_ context.Context, _ domain.ID, receipts []domain.Receipt) ([]bool, error) {
	return make([]bool, len(receipts)), s.err
}

func (s stubService) Extend(context.Context, domain.ID, domain.Receipt, time.Duration) error {
	return s.err
}

func (s stubService) Release(context.Context, domain.ID, domain.Receipt, time.Duration) error {
	return s.err
}

func (s stubService) DeadLetters(context.Context, domain.ID, ports.DeadLetterPage) ([]domain.DeadLetter, error) {
	return nil, s.err
}

func (s stubService) DeadLetter(context.Context, domain.ID, domain.ID) (domain.DeadLetter, error) {
	return domain.DeadLetter{}, s.err
}

func (s stubService) DeleteDeadLetter(context.Context, domain.ID, domain.ID) error { return s.err }

func (s stubService) DeleteDeadLetters(context.Context, domain.ID) (int, error) { return 0, s.err }

func (s stubService) Redrive(context.Context, domain.ID, domain.Redrive) ([]domain.ID, error) {
	return nil, s.err
}

// serviceRequests are valid requests that reach every Service method.
func serviceRequests() map[string]*http.Request {
	return map[string]*http.Request{
		"create queue":  newRequest(http.MethodPost, "/v1/queues", jsonType, `{"name":"emails"}`),
		"list queues":   newRequest(http.MethodGet, "/v1/queues", "", ""),
		"get queue":     newRequest(http.MethodGet, queuePath(unknownID), "", ""),
		"update queue":  newRequest(http.MethodPatch, queuePath(unknownID), jsonType, `{"max_delivery_attempts":3}`),
		"enqueue":       newRequest(http.MethodPost, messagesPath(unknownID), jsonType, `{"payload":"a","priority":"LOW"}`),
		"dequeue":       newRequest(http.MethodPost, dequeuePath(unknownID), "", ""),
		"acknowledge":   newRequest(http.MethodPost, acknowledgePath(unknownID, unknownID), jsonType, `{"receipt_handle":"`+unknownID+`"}`),
		"stats":         newRequest(http.MethodGet, statsPath(unknownID), "", ""),
		"delete queue":  newRequest(http.MethodDelete, queuePath(unknownID), "", ""),
		"purge":         newRequest(http.MethodDelete, messagesPath(unknownID), "", ""),
		"enqueue batch": newRequest(http.MethodPost, batchPath(unknownID), jsonType, `{"messages":[{"payload":"a","priority":"LOW"}]}`),
		"dequeue batch": newRequest(http.MethodPost, dequeueBatchPath(unknownID), "", ""),
		"long poll":     newRequest(http.MethodPost, dequeuePath(unknownID), jsonType, `{"wait_seconds":5}`),
		"acknowledge batch": newRequest(http.MethodPost, acknowledgeBatchPath(unknownID), jsonType,
			`{"messages":[{"id":"`+unknownID+`","receipt_handle":"`+unknownID+`"}]}`),
		"extend":              newRequest(http.MethodPost, extendPath(unknownID, unknownID), jsonType, `{"receipt_handle":"`+unknownID+`","visibility_timeout_seconds":5}`),
		"release":             newRequest(http.MethodPost, releasePath(unknownID, unknownID), jsonType, `{"receipt_handle":"`+unknownID+`"}`),
		"list dead letters":   newRequest(http.MethodGet, deadLettersPath(unknownID), "", ""),
		"get dead letter":     newRequest(http.MethodGet, deadLetterPath(unknownID, unknownID), "", ""),
		"delete dead letter":  newRequest(http.MethodDelete, deadLetterPath(unknownID, unknownID), "", ""),
		"delete dead letters": newRequest(http.MethodDelete, deadLettersPath(unknownID), "", ""),
		"redrive":             newRequest(http.MethodPost, redrivePath(unknownID), jsonType, `{"limit":1}`),
	}
}

// secret is the text of a database error that must never reach a client.
const secret = "pq: password authentication failed for user retsu"

func TestUnexpectedError_IsInternalErrorWithoutItsText(t *testing.T) {
	t.Parallel()
	causes := map[string]error{
		"plain":           errors.New(secret),
		"wrapped":         fmt.Errorf("create queue %q: %w", "emails", errors.New(secret)),
		"code not mapped": &domain.Error{Code: "surprise", Message: "the store failed", Err: errors.New(secret)},
	}
	for causeName, cause := range causes {
		for route, req := range serviceRequests() {
			t.Run(causeName+"/"+route, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				var logs bytes.Buffer
				handler := httpapi.NewHandler(stubService{err: cause}, httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				c := &client{t: t, handler: handler}

				res := c.send(req)

				body := string(readAll(t, res))
				is.True(!strings.Contains(body, "password")) // the database's text stays out of the answer
				is.True(!strings.Contains(body, "pq:"))      // no driver prefix either
				res.Body = readCloser(body)
				assertProblem(t, res, http.StatusInternalServerError, "internal_error")
				is.True(strings.Contains(logs.String(), secret)) // operators find the cause in the log
			})
		}
	}
}

func TestUnavailable_IsServiceUnavailableWithRetryAfter(t *testing.T) {
	t.Parallel()
	const cause = "dial tcp 10.20.30.40:5432: connect: connection refused"
	for route, req := range serviceRequests() {
		t.Run(route, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			handler := httpapi.NewHandler(stubService{err: fmt.Errorf("queue: %w", domain.Unavailable(errors.New(cause)))}, httpapi.Options{})
			c := &client{t: t, handler: handler}

			res := c.send(req)

			is.True(res.Header.Get("Retry-After") != "") // a 503 says when to retry
			body := string(readAll(t, res))
			is.True(!strings.Contains(body, "10.20.30.40")) // the cause stays out of the answer
			is.True(!strings.Contains(body, "dial tcp"))    // the network error too
			res.Body = readCloser(body)
			assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable")
		})
	}
}

func TestHealthz_IsOK(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	handler := httpapi.NewHandler(stubService{err: errors.New(secret)}, httpapi.Options{
		Ready: func(context.Context) error { return errors.New("down") },
	})
	c := &client{t: t, handler: handler}

	res := c.do(http.MethodGet, "/healthz", "")

	is.Equal(res.StatusCode, http.StatusOK) // liveness needs neither the service nor the database
}

func TestReadyz_ReadyIsOK(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	handler := httpapi.NewHandler(stubService{}, httpapi.Options{Ready: func(context.Context) error { return nil }})
	c := &client{t: t, handler: handler}

	res := c.do(http.MethodGet, "/readyz", "")

	is.Equal(res.StatusCode, http.StatusOK) // a ready instance answers 200
}

func TestReadyz_WithoutReadyCheckIsOK(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)

	res := c.do(http.MethodGet, "/readyz", "")

	is.Equal(res.StatusCode, http.StatusOK) // no check means always ready
}

func TestReadyz_NotReady_IsServiceUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	handler := httpapi.NewHandler(stubService{}, httpapi.Options{Ready: func(context.Context) error { return errors.New(secret) }})
	c := &client{t: t, handler: handler}

	res := c.do(http.MethodGet, "/readyz", "")

	is.True(res.Header.Get("Retry-After") != "") // a 503 says when to retry
	body := string(readAll(t, res))
	is.True(!strings.Contains(body, "password")) // the failed check's text stays out of the answer
	res.Body = readCloser(body)
	assertProblem(t, res, http.StatusServiceUnavailable, "service_unavailable")
}

func TestEveryAnswer_ForbidsContentSniffing(t *testing.T) {
	t.Parallel()
	c := setupWith(t, httpapi.Options{Metrics: pages})
	queueID := c.createQueueNamed("emails")
	messageID := c.enqueue(queueID, "a", "LOW")
	for _, req := range []*http.Request{
		newRequest(http.MethodPost, "/v1/queues", jsonType, `{"name":"orders"}`),
		newRequest(http.MethodGet, "/v1/queues", "", ""),
		newRequest(http.MethodGet, queuePath(queueID), "", ""),
		newRequest(http.MethodPost, messagesPath(queueID), jsonType, `{"payload":"b","priority":"LOW"}`),
		newRequest(http.MethodPost, dequeueBatchPath(queueID), "", ""),
		newRequest(http.MethodPost, dequeuePath(queueID), "", ""),
		newRequest(http.MethodPost, acknowledgePath(queueID, messageID), jsonType, `{"receipt_handle":"`+unknownID+`"}`),
		newRequest(http.MethodGet, deadLettersPath(queueID), "", ""),
		newRequest(http.MethodGet, statsPath(queueID), "", ""),
		newRequest(http.MethodGet, "/healthz", "", ""),
		newRequest(http.MethodGet, "/readyz", "", ""),
		newRequest(http.MethodGet, "/metrics", "", ""),
		newRequest(http.MethodGet, "/nowhere", "", ""),
	} {
		t.Run(req.Method+" "+req.URL.Path, func(t *testing.T) {
			is := is.New(t)

			res := c.send(req)

			is.True(res.StatusCode < 500)                                 // the request was served
			is.Equal(res.Header.Get("X-Content-Type-Options"), "nosniff") // browsers must take the declared type
		})
	}
}
