package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"
)

// bodyRoute is a route that reads a JSON body, with a body it accepts.
type bodyRoute struct {
	name   string
	method string
	path   func(queueID string) string
	body   string
	status int // the answer to body, on a queue named "emails" with no messages
}

var bodyRoutes = []bodyRoute{
	{"create queue", http.MethodPost, func(string) string { return "/v1/queues" }, `{"name":"other"}`, http.StatusCreated},
	{"update queue", http.MethodPatch, queuePath, `{"max_delivery_attempts":3}`, http.StatusOK},
	{"enqueue", http.MethodPost, messagesPath, `{"payload":"a","priority":"LOW"}`, http.StatusCreated},
	{"dequeue", http.MethodPost, dequeuePath, `{}`, http.StatusNoContent},
	{"acknowledge", http.MethodPost, func(queueID string) string { return acknowledgePath(queueID, unknownID) }, `{"receipt_handle":"` + unknownID + `"}`, http.StatusNoContent},
	{"enqueue batch", http.MethodPost, batchPath, `{"messages":[{"payload":"a","priority":"LOW"}]}`, http.StatusCreated},
	{"dequeue batch", http.MethodPost, dequeueBatchPath, `{"max_messages":5}`, http.StatusOK},
	{"acknowledge batch", http.MethodPost, acknowledgeBatchPath, `{"messages":[{"id":"` + unknownID + `","receipt_handle":"` + unknownID + `"}]}`, http.StatusOK},
	{"extend", http.MethodPost, func(queueID string) string { return extendPath(queueID, unknownID) }, `{"receipt_handle":"` + unknownID + `","visibility_timeout_seconds":60}`, http.StatusConflict},
	{"release", http.MethodPost, func(queueID string) string { return releasePath(queueID, unknownID) }, `{"receipt_handle":"` + unknownID + `"}`, http.StatusConflict},
	{"redrive", http.MethodPost, redrivePath, `{"limit":1}`, http.StatusOK},
}

func TestContentType_NotJSON_IsUnsupportedMediaType(t *testing.T) {
	t.Parallel()
	for _, route := range bodyRoutes {
		for _, contentType := range []string{
			"",
			"text/plain",
			"application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x",
			"application/jsonx",
			"application/problem+json",
			"json",
		} {
			t.Run(route.name+"/"+contentType, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)
				queueID := c.createQueueNamed("emails")

				res := c.send(newRequest(route.method, route.path(queueID), contentType, route.body))

				assertProblem(t, res, http.StatusUnsupportedMediaType, "unsupported_media_type")
				res = c.do(http.MethodGet, "/v1/queues?name=other", "")
				is.Equal(names(t, res), []string{}) // a refused create creates nothing
			})
		}
	}
}

func TestContentType_JSONWithParametersOrAnyCase_IsAccepted(t *testing.T) {
	t.Parallel()
	for _, route := range bodyRoutes {
		for _, contentType := range []string{
			"application/json",
			"application/json; charset=utf-8",
			"application/json;charset=UTF-8",
			"Application/JSON",
			"APPLICATION/JSON; CHARSET=UTF-8",
		} {
			t.Run(route.name+"/"+contentType, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)
				queueID := c.createQueueNamed("emails")

				res := c.send(newRequest(route.method, route.path(queueID), contentType, route.body))

				is.Equal(res.StatusCode, route.status) // a JSON content type in any spelling is accepted
			})
		}
	}
}

// padTo returns body followed by spaces up to size bytes, still the same JSON.
func padTo(body string, size int) string {
	return body + strings.Repeat(" ", size-len(body))
}

// enqueueBodyOfSize returns a valid enqueue body of exactly size bytes, padding the payload.
func enqueueBodyOfSize(size int) string {
	const prefix, suffix = `{"payload":"`, `","priority":"LOW"}`
	return prefix + strings.Repeat("a", size-len(prefix)-len(suffix)) + suffix
}

func TestBodySize_OneMebibyteIsAccepted_OneByteMoreIsPayloadTooLarge(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, route := range bodyRoutes {
		for _, chunked := range []bool{false, true} {
			for _, size := range []int{limit, limit + 1} {
				name := route.name + "/" + map[bool]string{false: "with Content-Length", true: "chunked"}[chunked]
				name += "/" + map[bool]string{true: "1 MiB", false: "1 MiB + 1"}[size == limit]
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					is := is.New(t)
					c := setup(t)
					queueID := c.createQueueNamed("emails")
					body := padTo(route.body, size)
					req := newRequest(route.method, route.path(queueID), jsonType, body)
					if chunked {
						req = newChunkedRequest(route.method, route.path(queueID), jsonType, body)
					}

					res := c.send(req)

					if size > limit {
						assertProblem(t, res, http.StatusRequestEntityTooLarge, "payload_too_large")
						return
					}
					is.Equal(res.StatusCode, route.status) // exactly 1 MiB is accepted
				})
			}
		}
	}
}

func TestEnqueue_PayloadFillingOneMebibyte(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, chunked := range []bool{false, true} {
		t.Run(map[bool]string{false: "with Content-Length", true: "chunked"}[chunked], func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			newReq := newRequest
			if chunked {
				newReq = newChunkedRequest
			}
			body := enqueueBodyOfSize(limit)
			is.Equal(len(body), limit) // the body is exactly 1 MiB

			res := c.send(newReq(http.MethodPost, messagesPath(queueID), jsonType, body))
			is.Equal(res.StatusCode, http.StatusCreated) // 1 MiB is within the limit
			res = c.send(newReq(http.MethodPost, messagesPath(queueID), jsonType, enqueueBodyOfSize(limit+1)))
			assertProblem(t, res, http.StatusRequestEntityTooLarge, "payload_too_large")

			m, ok := c.dequeue(queueID)
			is.True(ok)                                                            // the large message is stored
			is.Equal(len(m.Payload), limit-len(`{"payload":"","priority":"LOW"}`)) // whole
			_, ok = c.dequeue(queueID)
			is.True(!ok) // the refused message is not stored
		})
	}
}

func TestBodySize_OverARealConnection(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	tests := []struct {
		name    string
		size    int
		chunked bool
		status  int
	}{
		{"1 MiB with Content-Length", limit, false, http.StatusCreated},
		{"1 MiB + 1 with Content-Length", limit + 1, false, http.StatusRequestEntityTooLarge},
		{"1 MiB chunked", limit, true, http.StatusCreated},
		{"1 MiB + 1 chunked", limit + 1, true, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			var sawChunked atomic.Bool
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sawChunked.Store(r.ContentLength == -1 && len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked")
				c.handler.ServeHTTP(w, r)
			}))
			t.Cleanup(server.Close)
			body := strings.NewReader(enqueueBodyOfSize(tc.size))
			req, err := http.NewRequest(http.MethodPost, server.URL+messagesPath(queueID), body)
			is.NoErr(err) // the request is well formed
			if tc.chunked {
				req, err = http.NewRequest(http.MethodPost, server.URL+messagesPath(queueID), hiddenLength{body})
				is.NoErr(err) // the request is well formed
			}
			req.Header.Set("Content-Type", jsonType)

			res, err := server.Client().Do(req)

			is.NoErr(err) // the server answers
			t.Cleanup(func() { _ = res.Body.Close() })
			is.Equal(sawChunked.Load(), tc.chunked) // the body travelled chunked when it hid its length
			if tc.status == http.StatusRequestEntityTooLarge {
				assertProblem(t, res, tc.status, "payload_too_large")
				return
			}
			is.Equal(res.StatusCode, tc.status) // 1 MiB is within the limit
		})
	}
}

func TestJSONShape_NotASingleObject_IsInvalidJSON(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		"spaces only":            "  \n",
		"malformed":              `{"a" 1}`,
		"truncated":              `{"payload":"a","priority":"LOW"`,
		"unterminated string":    `{"payload":"a`,
		"missing value":          `{"a":}`,
		"trailing comma":         `{"a":1,}`,
		"single quotes":          `{'a':1}`,
		"unquoted member name":   `{a:1}`,
		"null":                   `null`,
		"array":                  `[]`,
		"array of an object":     `[{}]`,
		"string":                 `"str"`,
		"number":                 `42`,
		"boolean":                `true`,
		"two objects":            `{}{}`,
		"trailing word":          `{} x`,
		"trailing comma outside": `{},`,
		"trailing opening brace": `{} {`,
		"invalid UTF-8":          "\xff",
		"invalid UTF-8 in name":  "{\"\xff\":1}",
		"invalid UTF-8 in value": "{\"a\":\"\xfe\"}",
		"byte order mark":        "\xef\xbb\xbf{}",
		"duplicate member":       `{"a":1,"a":1}`,
		"NaN":                    `{"a":NaN}`,
		"comment":                `{} // done`,
	}
	for _, route := range bodyRoutes {
		for name, body := range bodies {
			t.Run(route.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				c := setup(t)
				queueID := c.createQueueNamed("emails")

				res := c.do(route.method, route.path(queueID), body)

				assertProblem(t, res, http.StatusBadRequest, "invalid_json")
			})
		}
	}
}

func TestJSONShape_EmptyBody_IsInvalidJSON(t *testing.T) {
	t.Parallel()
	for _, route := range bodyRoutes {
		if strings.HasPrefix(route.name, "dequeue") {
			continue // dequeues need no body
		}
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.send(newRequest(route.method, route.path(queueID), jsonType, ""))

			assertProblem(t, res, http.StatusBadRequest, "invalid_json")
		})
	}
}

func TestJSONShape_TrailingWhitespace_IsAccepted(t *testing.T) {
	t.Parallel()
	for _, route := range bodyRoutes {
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(route.method, route.path(queueID), " \t\r\n"+route.body+" \t\r\n")

			is.Equal(res.StatusCode, route.status) // whitespace around the object is not data
		})
	}
}
