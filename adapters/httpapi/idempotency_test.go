package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// withKey returns req with the Idempotency-Key key.
func withKey(req *http.Request, key string) *http.Request {
	req.Header.Set("Idempotency-Key", key)
	return req
}

// enqueueRoutes are the two routes that take an Idempotency-Key, each with a valid body.
var enqueueRoutes = []struct {
	name string
	path func(queueID string) string
	body string
}{
	{"single", messagesPath, `{"payload":"a","priority":"LOW"}`},
	{"batch", batchPath, `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b","priority":"HIGH"}]}`},
}

func TestIdempotencyKey_Replay_AnswersTheFirst201WithTheSameIDs(t *testing.T) {
	t.Parallel()
	for _, route := range enqueueRoutes {
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			first := c.send(withKey(newRequest(http.MethodPost, route.path(queueID), jsonType, route.body), "order-42"))
			is.Equal(first.StatusCode, http.StatusCreated)        // the first request stores
			is.Equal(first.Header.Get("Idempotent-Replayed"), "") // and is no replay
			firstBody := readAll(t, first)
			reordered := strings.Replace(route.body, `"payload":"a","priority":"LOW"`, ` "priority" : "LOW", "payload":"a" `, 1)

			again := c.send(withKey(newRequest(http.MethodPost, route.path(queueID), jsonType, reordered), "order-42"))

			is.Equal(again.StatusCode, http.StatusCreated)            // the replay answers 201
			is.Equal(again.Header.Get("Idempotent-Replayed"), "true") // marked as a replay
			is.Equal(string(readAll(t, again)), string(firstBody))    // with the same IDs, whatever the member order
			is.Equal(c.stats(queueID).Priorities[2].Ready, int64(1))  // and stores nothing
		})
	}
}

func TestIdempotencyKey_ReplayAfterTheMessageWasAcknowledged(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	body := `{"payload":"a","priority":"LOW"}`
	c.send(withKey(newRequest(http.MethodPost, messagesPath(queueID), jsonType, body), "k"))
	m, _ := c.dequeue(queueID)
	c.acknowledge(queueID, m.ID, m.ReceiptHandle)

	res := c.send(withKey(newRequest(http.MethodPost, messagesPath(queueID), jsonType, body), "k"))

	is.Equal(res.StatusCode, http.StatusCreated)            // the replay still answers 201
	is.Equal(res.Header.Get("Idempotent-Replayed"), "true") // as a replay
	_, ok := c.dequeue(queueID)
	is.True(!ok) // and does not bring the message back
}

func TestIdempotencyKey_DifferentRequest_IsKeyReused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		path        func(string) string
		first, next string
	}{
		{"other payload", messagesPath, `{"payload":"a","priority":"LOW"}`, `{"payload":"b","priority":"LOW"}`},
		{"other priority", messagesPath, `{"payload":"a","priority":"LOW"}`, `{"payload":"a","priority":"HIGH"}`},
		{"a default given", messagesPath, `{"payload":"a","priority":"LOW"}`, `{"payload":"a","priority":"LOW","delay_seconds":0}`},
		{"other entries", batchPath, `{"messages":[{"payload":"a","priority":"LOW"}]}`, `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"a","priority":"LOW"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			c.send(withKey(newRequest(http.MethodPost, tc.path(queueID), jsonType, tc.first), "k"))

			res := c.send(withKey(newRequest(http.MethodPost, tc.path(queueID), jsonType, tc.next), "k"))

			assertProblem(t, res, http.StatusUnprocessableEntity, "idempotency_key_reused")
		})
	}
}

func TestIdempotencyKey_SingleAndBatchAreDifferentRequests(t *testing.T) {
	t.Parallel()
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.send(withKey(newRequest(http.MethodPost, messagesPath(queueID), jsonType, `{"payload":"a","priority":"LOW"}`), "k"))

	res := c.send(withKey(newRequest(http.MethodPost, batchPath(queueID), jsonType, `{"messages":[{"payload":"a","priority":"LOW"}]}`), "k"))

	assertProblem(t, res, http.StatusUnprocessableEntity, "idempotency_key_reused")
}

func TestIdempotencyKey_KeysArePerQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	emails, orders := c.createQueueNamed("emails"), c.createQueueNamed("orders")
	c.send(withKey(newRequest(http.MethodPost, messagesPath(emails), jsonType, `{"payload":"a","priority":"LOW"}`), "k"))

	res := c.send(withKey(newRequest(http.MethodPost, messagesPath(orders), jsonType, `{"payload":"b","priority":"LOW"}`), "k"))

	is.Equal(res.StatusCode, http.StatusCreated)        // the same key on another queue is a new request
	is.Equal(res.Header.Get("Idempotent-Replayed"), "") // not a replay
}

func TestIdempotencyKey_RefusedRequestStoresNoKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	res := c.send(withKey(newRequest(http.MethodPost, messagesPath(queueID), jsonType, `{"payload":"a","priority":"NOPE"}`), "k"))
	assertProblem(t, res, http.StatusBadRequest, "invalid_priority")

	res = c.send(withKey(newRequest(http.MethodPost, messagesPath(queueID), jsonType, `{"payload":"b","priority":"LOW"}`), "k"))

	is.Equal(res.StatusCode, http.StatusCreated)        // the key is free for a different request
	is.Equal(res.Header.Get("Idempotent-Replayed"), "") // which stores
}

func TestIdempotencyKey_Values(t *testing.T) {
	t.Parallel()
	const malformed, repeated = "1 to 255 visible ASCII characters", "more than once"
	tests := []struct {
		name   string
		keys   []string
		detail string // a part of the problem's detail; empty when the key is accepted
	}{
		{"one character", []string{"k"}, ""},
		{"255 characters", []string{strings.Repeat("k", 255)}, ""},
		{"every visible ASCII character", []string{"!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"}, ""},
		{"empty", []string{""}, malformed},
		{"256 characters", []string{strings.Repeat("k", 256)}, malformed},
		{"a space inside", []string{"order 42"}, malformed},
		{"a tab inside", []string{"order\t42"}, malformed},
		{"non-ASCII", []string{"commande-é"}, malformed},
		{"two keys", []string{"a", "b"}, repeated},
		{"the same key twice", []string{"a", "a"}, repeated},
		{"two empty keys", []string{"", ""}, repeated},
	}
	for _, route := range enqueueRoutes {
		for _, tc := range tests {
			t.Run(route.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)
				queueID := c.createQueueNamed("emails")
				req := newRequest(http.MethodPost, route.path(queueID), jsonType, route.body)
				req.Header["Idempotency-Key"] = tc.keys

				res := c.send(req)

				if tc.detail == "" {
					is.Equal(res.StatusCode, http.StatusCreated) // a valid key is accepted
					return
				}
				body := string(readAll(t, res))
				is.True(strings.Contains(body, tc.detail)) // the detail says what is wrong with the key
				res.Body = readCloser(body)
				assertProblem(t, res, http.StatusBadRequest, "invalid_idempotency_key")
			})
		}
	}
}

func TestIdempotencyKey_CheckedRightAfterThePathIDs(t *testing.T) {
	t.Parallel()
	for _, route := range enqueueRoutes {
		for name, tc := range map[string]struct {
			queue, contentType, body string
			status                   int
			code                     string
		}{
			"path first":              {"not-a-uuid", jsonType, route.body, http.StatusBadRequest, "invalid_path"},
			"before the content type": {"known", "text/plain", route.body, http.StatusBadRequest, "invalid_idempotency_key"},
			"before the size":         {"known", jsonType, strings.Repeat(" ", 1<<20+1), http.StatusBadRequest, "invalid_idempotency_key"},
			"before the JSON":         {"known", jsonType, `{`, http.StatusBadRequest, "invalid_idempotency_key"},
			"before existence":        {unknownID, jsonType, route.body, http.StatusBadRequest, "invalid_idempotency_key"},
		} {
			t.Run(route.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				c := setup(t)
				queueID := tc.queue
				if queueID == "known" {
					queueID = c.createQueueNamed("emails")
				}

				res := c.send(withKey(newRequest(http.MethodPost, route.path(queueID), tc.contentType, tc.body), "has space"))

				assertProblem(t, res, tc.status, tc.code)
			})
		}
	}
}

// keyInUseService answers every enqueue as a store does while another request with the
// same key has not committed yet.
type keyInUseService struct{ stubService }

func (keyInUseService) EnqueueMessages(context.Context, app.EnqueueParams) (app.Enqueued, error) {
	return app.Enqueued{}, domain.ErrIdempotencyKeyInUse
}

func TestIdempotencyKey_InUse_IsConflictWithRetryAfter(t *testing.T) {
	t.Parallel()
	for _, route := range enqueueRoutes {
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			h := httpapi.NewHandler(keyInUseService{}, httpapi.Options{})

			res := serve(h, withKey(newRequest(http.MethodPost, route.path(unknownID), jsonType, route.body), "k"))

			is.Equal(res.Header.Get("Retry-After"), "1") // the client is told when to come back for the first request's answer
			assertProblem(t, res, http.StatusConflict, "idempotency_key_in_use")
		})
	}
}

func TestEnqueue_WithoutKey_StoresEveryTime(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	var ids []string
	for range 2 {
		res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":"a","priority":"LOW"}`)
		var created struct{ ID string }
		is.NoErr(json.Unmarshal(readAll(t, res), &created))
		ids = append(ids, created.ID)
	}

	is.True(ids[0] != ids[1]) // without a key, the same request stores twice
}
