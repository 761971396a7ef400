package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"
)

// uuidVersion returns the version digit of a canonical UUID.
func uuidVersion(id string) byte {
	if len(id) != 36 {
		return 0
	}
	return id[14]
}

func TestEnqueue_AnswersOnlyTheID(t *testing.T) {
	t.Parallel()
	for _, priority := range []string{"HIGH", "MEDIUM", "LOW"} {
		t.Run(priority, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":"send welcome email","priority":"`+priority+`"}`)

			is.Equal(res.StatusCode, http.StatusCreated)                 // an enqueued message answers 201
			is.Equal(res.Header.Get("Content-Type"), "application/json") // the answer is application/json
			body := readAll(t, res)
			is.Equal(membersOf(t, body), []string{"id"}) // the answer holds only the message ID
			m, ok := c.dequeue(queueID)
			is.True(ok)                                                    // the message is stored
			is.Equal(`{"id":"`+m.ID+`"}`, strings.TrimSpace(string(body))) // the answered ID is the message's
			is.Equal(m.Priority, priority)                                 // with its priority
			is.Equal(uuidVersion(m.ID), byte('7'))                         // message IDs are UUID version 7
		})
	}
}

func TestEnqueue_SeedExample(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	res := c.do(http.MethodPost, messagesPath(queueID), `{
    "payload": "send welcome email",
    "priority": "HIGH",
    "ttl_seconds": 3600
  }`)

	is.Equal(res.StatusCode, http.StatusCreated) // the seed's message is enqueued
}

func TestEnqueue_TTLGivenOrQueueDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","default_message_ttl_seconds":120}`).ID
	res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":"short","priority":"HIGH","ttl_seconds":60}`)
	is.Equal(res.StatusCode, http.StatusCreated) // a message with its own lifetime
	res = c.do(http.MethodPost, messagesPath(queueID), `{"payload":"default","priority":"LOW"}`)
	is.Equal(res.StatusCode, http.StatusCreated) // a message with the queue's default lifetime

	c.clock.Advance(90 * time.Second)
	m, ok := c.dequeue(queueID)

	is.True(ok)                    // the message with the default lifetime is still alive
	is.Equal(m.Payload, "default") // the message with ttl_seconds 60 expired, although HIGH
	c.acknowledge(queueID, m.ID, m.ReceiptHandle)
	c.clock.Advance(31 * time.Second)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // nothing outlives its lifetime
}

func TestEnqueue_PriorityValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		member string // the priority member, "" for none
		code   string // empty when accepted
	}{
		{`"priority":"HIGH"`, ""},
		{`"priority":"MEDIUM"`, ""},
		{`"priority":"LOW"`, ""},
		{`"priority":"high"`, "invalid_priority"},
		{`"priority":"Medium"`, "invalid_priority"},
		{`"priority":"HIGH "`, "invalid_priority"},
		{`"priority":"URGENT"`, "invalid_priority"},
		{`"priority":""`, "invalid_priority"},
		{"", "invalid_priority"},
		{`"priority":1`, "invalid_json"},
		{`"priority":null`, "invalid_json"},
		{`"priority":["HIGH"]`, "invalid_json"},
		{`"Priority":"HIGH"`, "invalid_json"},
	}
	for _, tc := range tests {
		t.Run("{"+tc.member+"}", func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			body := `{"payload":"a"`
			if tc.member != "" {
				body += "," + tc.member
			}

			res := c.do(http.MethodPost, messagesPath(queueID), body+"}")

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(res.StatusCode, http.StatusCreated) // a valid priority is accepted
		})
	}
}

func TestEnqueue_TTLValues(t *testing.T) {
	t.Parallel()
	for _, tc := range rangeCases("invalid_ttl", 2592000) {
		t.Run("ttl_seconds="+tc.value, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":"a","priority":"LOW","ttl_seconds":`+tc.value+`}`)

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(res.StatusCode, http.StatusCreated) // an in-range lifetime is accepted
		})
	}
}

func TestEnqueue_PayloadRoundTripsExactly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string // the payload as the request spells it
		want string
	}{
		{"empty string", `""`, ""},
		{"NUL character", `"\u0000"`, "\x00"},
		{"NUL among text", `"a\u0000b"`, "a\x00b"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"raw non-ASCII", `"émails 😀"`, "émails 😀"},
		{"HTML characters", `"<b>&amp;</b>"`, "<b>&amp;</b>"},
		{"escapes", `"line\nbreak\ttab \"quoted\" back\\slash \/"`, "line\nbreak\ttab \"quoted\" back\\slash /"},
		{"line separator", `"\u2028"`, "\u2028"},
		{"JSON text", `"{\"a\":1}"`, `{"a":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":`+tc.json+`,"priority":"MEDIUM"}`)
			is.Equal(res.StatusCode, http.StatusCreated) // any JSON string is a payload
			m, ok := c.dequeue(queueID)

			is.True(ok)                  // the message is delivered
			is.Equal(m.Payload, tc.want) // the same string that went in
		})
	}
}

func TestEnqueue_PayloadRefusals_AreInvalidJSON(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"missing":                  `{"priority":"LOW"}`,
		"null":                     `{"payload":null,"priority":"LOW"}`,
		"number":                   `{"payload":42,"priority":"LOW"}`,
		"object":                   `{"payload":{"a":1},"priority":"LOW"}`,
		"array":                    `{"payload":["a"],"priority":"LOW"}`,
		"boolean":                  `{"payload":true,"priority":"LOW"}`,
		"lone high surrogate":      `{"payload":"\ud800","priority":"LOW"}`,
		"lone low surrogate":       `{"payload":"\udc00","priority":"LOW"}`,
		"lone surrogate in text":   `{"payload":"a\ud800b","priority":"LOW"}`,
		"reversed surrogate pair":  `{"payload":"\ude00\ud83d","priority":"LOW"}`,
		"two high surrogates":      `{"payload":"\ud83d\ud83d","priority":"LOW"}`,
		"invalid UTF-8":            "{\"payload\":\"\xff\",\"priority\":\"LOW\"}",
		"truncated UTF-8":          "{\"payload\":\"\xc3\",\"priority\":\"LOW\"}",
		"duplicate payload":        `{"payload":"a","payload":"b","priority":"LOW"}`,
		"duplicate priority":       `{"payload":"a","priority":"LOW","priority":"HIGH"}`,
		"unknown field":            `{"payload":"a","priority":"LOW","delay":5}`,
		"field name in other case": `{"Payload":"a","priority":"LOW"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, messagesPath(queueID), body)

			assertProblem(t, res, http.StatusBadRequest, "invalid_json")
		})
	}
}

func TestEnqueue_UnknownQueue_IsQueueNotFound(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.do(http.MethodPost, messagesPath(unknownID), `{"payload":"a","priority":"LOW"}`)

	assertProblem(t, res, http.StatusNotFound, "queue_not_found")
}

func TestEnqueue_OrderOfChecks(t *testing.T) {
	t.Parallel()
	oversize := `{"payload":"` + strings.Repeat("a", 1<<20) + `","priority":"LOW"}`
	tests := []struct {
		name        string
		queue       string // "known" for the created queue, else the path ID
		contentType string
		body        string
		status      int
		code        string
	}{
		{"path before content type", "not-a-uuid", "text/plain", `{"payload":"a","priority":"LOW"}`, http.StatusBadRequest, "invalid_path"},
		{"path before size", "not-a-uuid", jsonType, oversize, http.StatusBadRequest, "invalid_path"},
		{"content type before size", "known", "text/plain", oversize, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"size before JSON", "known", jsonType, strings.Repeat("x", 1<<20+1), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"JSON shape before priority", "known", jsonType, `{"payload":"a","priority":"bad","extra":1}`, http.StatusBadRequest, "invalid_json"},
		{"missing payload before priority", "known", jsonType, `{"priority":"bad"}`, http.StatusBadRequest, "invalid_json"},
		{"ttl type before priority", "known", jsonType, `{"payload":"a","priority":"bad","ttl_seconds":"60"}`, http.StatusBadRequest, "invalid_json"},
		{"priority before existence", unknownID, jsonType, `{"payload":"a","priority":"bad"}`, http.StatusBadRequest, "invalid_priority"},
		{"ttl before existence", unknownID, jsonType, `{"payload":"a","priority":"LOW","ttl_seconds":0}`, http.StatusBadRequest, "invalid_ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.send(newRequest(http.MethodPost, messagesPath(queueID), tc.contentType, tc.body))

			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

func TestDequeue_AnswersExactlyTheMessageMembers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	messageID := c.enqueue(queueID, "send welcome email", "HIGH")

	res := c.do(http.MethodPost, dequeuePath(queueID), "")

	is.Equal(res.StatusCode, http.StatusOK)                      // a delivery answers 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // the message is application/json
	body := readAll(t, res)
	is.Equal(membersOf(t, body), messageMembers) // a message has exactly its five members
	var m messageJSON
	is.NoErr(jsonUnmarshalStrict(body, &m))           // the members have their JSON types
	is.Equal(m.ID, messageID)                         // the enqueued message
	is.Equal(m.Payload, "send welcome email")         // its payload
	is.Equal(m.Priority, "HIGH")                      // its priority
	is.Equal(m.DeliveryAttempts, 1)                   // the first delivery
	is.Equal(uuidVersion(m.ReceiptHandle), byte('4')) // receipt handles are UUID version 4
}

func TestDequeue_EmptyQueue_Is204WithEmptyBody(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	res := c.do(http.MethodPost, dequeuePath(queueID), "")

	is.Equal(res.StatusCode, http.StatusNoContent) // nothing waiting answers 204
	is.Equal(len(readAll(t, res)), 0)              // with no body
}

func TestDequeue_HighestPriorityFirstThenEnqueueOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	for _, m := range [][2]string{{"low 1", "LOW"}, {"high 1", "HIGH"}, {"medium 1", "MEDIUM"}, {"high 2", "HIGH"}, {"low 2", "LOW"}, {"medium 2", "MEDIUM"}} {
		c.enqueue(queueID, m[0], m[1])
	}

	var got []string
	for {
		m, ok := c.dequeue(queueID)
		if !ok {
			break
		}
		got = append(got, m.Payload)
	}

	is.Equal(got, []string{"high 1", "high 2", "medium 1", "medium 2", "low 1", "low 2"}) // priority, then enqueue order
}

func TestDequeue_HidesTheMessageForTheVisibilityTimeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","visibility_timeout_seconds":10}`).ID
	c.enqueue(queueID, "a", "LOW")
	first, _ := c.dequeue(queueID)

	_, ok := c.dequeue(queueID)
	is.True(!ok) // a delivered message is hidden
	c.clock.Advance(10 * time.Second)
	again, ok := c.dequeue(queueID)

	is.True(ok)                                         // it comes back once the timeout ends
	is.Equal(again.ID, first.ID)                        // the same message
	is.Equal(again.DeliveryAttempts, 2)                 // counted as a second delivery
	is.True(again.ReceiptHandle != first.ReceiptHandle) // with a new receipt handle
}

func TestDequeue_Bodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		request func(path string) *http.Request
		status  int    // for answers that are not problems
		code    string // for problems
	}{
		{"no body and no content type", func(p string) *http.Request { return newRequest(http.MethodPost, p, "", "") }, http.StatusOK, ""},
		{"no body with JSON content type", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, "") }, http.StatusOK, ""},
		{"empty chunked body", func(p string) *http.Request { return newChunkedRequest(http.MethodPost, p, "", "") }, http.StatusOK, ""},
		{"{} as JSON", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, "{}") }, http.StatusOK, ""},
		{"{} chunked as JSON", func(p string) *http.Request { return newChunkedRequest(http.MethodPost, p, jsonType, "{}") }, http.StatusOK, ""},
		{"{} with spaces as JSON", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, " { } \n") }, http.StatusOK, ""},
		{"{} with charset", func(p string) *http.Request {
			return newRequest(http.MethodPost, p, "application/json; charset=utf-8", "{}")
		}, http.StatusOK, ""},
		{"{} as text/plain", func(p string) *http.Request { return newRequest(http.MethodPost, p, "text/plain", "{}") }, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"{} without content type", func(p string) *http.Request { return newRequest(http.MethodPost, p, "", "{}") }, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"{} chunked without content type", func(p string) *http.Request { return newChunkedRequest(http.MethodPost, p, "", "{}") }, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"a member", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, `{"a":1}`) }, http.StatusBadRequest, "invalid_json"},
		{"an array", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, `[]`) }, http.StatusBadRequest, "invalid_json"},
		{"null", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, `null`) }, http.StatusBadRequest, "invalid_json"},
		{"spaces only", func(p string) *http.Request { return newRequest(http.MethodPost, p, jsonType, "  ") }, http.StatusBadRequest, "invalid_json"},
		{"over 1 MiB", func(p string) *http.Request {
			return newRequest(http.MethodPost, p, jsonType, "{"+strings.Repeat(" ", 1<<20)+"}")
		}, http.StatusRequestEntityTooLarge, "payload_too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			c.enqueue(queueID, "a", "LOW")

			res := c.send(tc.request(dequeuePath(queueID)))

			if tc.code != "" {
				assertProblem(t, res, tc.status, tc.code)
				_, ok := c.dequeue(queueID)
				is.True(ok) // a refused dequeue delivers nothing
				return
			}
			is.Equal(res.StatusCode, tc.status) // the message is delivered
		})
	}
}

func TestDequeue_UnknownQueue_IsQueueNotFound(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.do(http.MethodPost, dequeuePath(unknownID), "")

	assertProblem(t, res, http.StatusNotFound, "queue_not_found")
}

func TestDequeue_InvalidQueueID_IsInvalidPath(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.send(newRequest(http.MethodPost, dequeuePath("{"+unknownID+"}"), "text/plain", "x"))

	assertProblem(t, res, http.StatusBadRequest, "invalid_path")
}

func TestAcknowledge_RemovesTheMessage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "a", "LOW")
	m, _ := c.dequeue(queueID)

	res := c.do(http.MethodPost, acknowledgePath(queueID, m.ID), `{"receipt_handle":"`+m.ReceiptHandle+`"}`)

	is.Equal(res.StatusCode, http.StatusNoContent) // acknowledge answers 204
	is.Equal(len(readAll(t, res)), 0)              // with no body
	c.clock.Advance(time.Hour)
	_, ok := c.dequeue(queueID)
	is.True(!ok) // the message is gone, even after its visibility timeout
}

func TestAcknowledge_SeedExampleWithUppercaseIDs(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "a", "LOW")
	m, _ := c.dequeue(queueID)

	res := c.do(http.MethodPost, acknowledgePath(strings.ToUpper(queueID), strings.ToUpper(m.ID)), `{
    "receipt_handle": "`+strings.ToUpper(m.ReceiptHandle)+`"
  }`)

	is.Equal(res.StatusCode, http.StatusNoContent) // acknowledge answers 204
	c.clock.Advance(time.Hour)
	_, ok := c.dequeue(queueID)
	is.True(!ok) // UUIDs in either case name the delivery
}

func TestAcknowledge_IsSafeToRepeat(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "a", "LOW")
	m, _ := c.dequeue(queueID)

	for range 3 {
		res := c.do(http.MethodPost, acknowledgePath(queueID, m.ID), `{"receipt_handle":"`+m.ReceiptHandle+`"}`)
		is.Equal(res.StatusCode, http.StatusNoContent) // every repetition answers 204
	}
}

func TestAcknowledge_StaleOrUnknown_Is204AndRemovesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// acknowledge sends the acknowledgement, given the queue and the latest and
		// previous deliveries of its only message.
		acknowledge func(c *client, queueID string, latest, previous messageJSON)
	}{
		{"stale handle of an earlier delivery", func(c *client, queueID string, latest, previous messageJSON) {
			c.acknowledge(queueID, latest.ID, previous.ReceiptHandle)
		}},
		{"unknown handle", func(c *client, queueID string, latest, _ messageJSON) {
			c.acknowledge(queueID, latest.ID, uuid.NewString())
		}},
		{"unknown message", func(c *client, queueID string, latest, _ messageJSON) {
			c.acknowledge(queueID, uuid.Must(uuid.NewV7()).String(), latest.ReceiptHandle)
		}},
		{"another queue's message", func(c *client, _ string, latest, _ messageJSON) {
			other := c.createQueueNamed("other")
			c.acknowledge(other, latest.ID, latest.ReceiptHandle)
		}},
		{"late, after the visibility timeout", func(c *client, queueID string, latest, _ messageJSON) {
			c.clock.Advance(30 * time.Second)
			c.acknowledge(queueID, latest.ID, latest.ReceiptHandle)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			c.enqueue(queueID, "a", "LOW")
			previous, _ := c.dequeue(queueID)
			c.clock.Advance(30 * time.Second)
			latest, _ := c.dequeue(queueID)

			tc.acknowledge(c, queueID, latest, previous)

			c.clock.Advance(30 * time.Second)
			m, ok := c.dequeue(queueID)
			is.True(ok)                     // the message was not removed
			is.Equal(m.ID, latest.ID)       // it is delivered again
			is.Equal(m.DeliveryAttempts, 3) // as a third delivery
		})
	}
}

func TestAcknowledge_Refusals(t *testing.T) {
	t.Parallel()
	handle := uuid.NewString()
	tests := []struct {
		name        string
		queue       string // "known" for the created queue, else the path ID
		message     string
		contentType string
		body        string
		status      int
		code        string
	}{
		{"missing receipt_handle", "known", unknownID, jsonType, `{}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle not a UUID", "known", unknownID, jsonType, `{"receipt_handle":"not-a-uuid"}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle empty", "known", unknownID, jsonType, `{"receipt_handle":""}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle in braces", "known", unknownID, jsonType, `{"receipt_handle":"{` + handle + `}"}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle of 32 digits", "known", unknownID, jsonType, `{"receipt_handle":"` + strings.ReplaceAll(handle, "-", "") + `"}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle a number", "known", unknownID, jsonType, `{"receipt_handle":42}`, http.StatusBadRequest, "invalid_json"},
		{"receipt_handle null", "known", unknownID, jsonType, `{"receipt_handle":null}`, http.StatusBadRequest, "invalid_json"},
		{"unknown field", "known", unknownID, jsonType, `{"receipt_handle":"` + handle + `","message_id":"x"}`, http.StatusBadRequest, "invalid_json"},
		{"no content type", "known", unknownID, "", `{"receipt_handle":"` + handle + `"}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"no body", "known", unknownID, jsonType, "", http.StatusBadRequest, "invalid_json"},
		{"bad message ID", "known", "not-a-uuid", jsonType, `{"receipt_handle":"` + handle + `"}`, http.StatusBadRequest, "invalid_path"},
		{"bad queue ID", "urn:uuid:" + unknownID, unknownID, jsonType, `{"receipt_handle":"` + handle + `"}`, http.StatusBadRequest, "invalid_path"},
		{"bad message ID before content type", "known", unknownID[:35], "text/plain", `x`, http.StatusBadRequest, "invalid_path"},
		{"body before existence", unknownID, unknownID, jsonType, `{"receipt_handle":"x"}`, http.StatusBadRequest, "invalid_json"},
		{"unknown queue", unknownID, unknownID, jsonType, `{"receipt_handle":"` + handle + `"}`, http.StatusNotFound, "queue_not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.send(newRequest(http.MethodPost, acknowledgePath(queueID, tc.message), tc.contentType, tc.body))

			assertProblem(t, res, tc.status, tc.code)
		})
	}
}
