package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// leaseBody spells the body of an extend (member visibility_timeout_seconds) or a release
// (member delay_seconds).
func leaseBody(receiptHandle, member, value string) string {
	body := `{"receipt_handle":"` + receiptHandle + `"`
	if member != "" {
		body += `,"` + member + `":` + value
	}
	return body + "}"
}

func TestExtend_TheLeaseEndsThatLongAfterTheRequest(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","visibility_timeout_seconds":30}`).ID
	c.enqueue(queueID, "a", "LOW")
	m, _ := c.dequeue(queueID)
	c.clock.Advance(20 * time.Second)

	res := c.do(http.MethodPost, extendPath(queueID, m.ID), leaseBody(m.ReceiptHandle, "visibility_timeout_seconds", "60"))

	is.Equal(res.StatusCode, http.StatusNoContent) // extend answers 204
	is.Equal(len(readAll(t, res)), 0)              // with no body
	c.clock.Advance(59 * time.Second)
	_, ok := c.dequeue(queueID)
	is.True(!ok) // hidden until 60 s after the extend, past its old end
	c.acknowledge(queueID, m.ID, m.ReceiptHandle)
	c.clock.Advance(time.Hour)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // the same handle still acknowledges it
}

func TestExtend_CanShortenTheLease_AndKeepsTheAttempts(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","visibility_timeout_seconds":600}`).ID
	c.enqueue(queueID, "a", "LOW")
	m, _ := c.dequeue(queueID)

	res := c.do(http.MethodPost, extendPath(queueID, m.ID), leaseBody(m.ReceiptHandle, "visibility_timeout_seconds", "1"))
	is.Equal(res.StatusCode, http.StatusNoContent) // the lease now ends in a second
	c.clock.Advance(time.Second)
	again, ok := c.dequeue(queueID)

	is.True(ok)                         // the message is deliverable again
	is.Equal(again.DeliveryAttempts, 2) // as its second delivery: extend spends no attempt
	c.clock.Advance(599 * time.Second)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // later deliveries keep the queue's visibility timeout
}

func TestRelease_TheMessageIsDeliverableAgainAfterTheDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "first", "LOW")
	c.enqueue(queueID, "second", "LOW")
	m, _ := c.dequeue(queueID)

	res := c.do(http.MethodPost, releasePath(queueID, m.ID), leaseBody(m.ReceiptHandle, "delay_seconds", "10"))

	is.Equal(res.StatusCode, http.StatusNoContent) // release answers 204
	next, _ := c.dequeue(queueID)
	is.Equal(next.Payload, "second") // the released message waits for its delay
	c.clock.Advance(10 * time.Second)
	again, ok := c.dequeue(queueID)
	is.True(ok)                         // then it is delivered again
	is.Equal(again.ID, m.ID)            // the released message
	is.Equal(again.DeliveryAttempts, 2) // with its attempts unchanged before this delivery
	res = c.do(http.MethodPost, acknowledgePath(queueID, m.ID), `{"receipt_handle":"`+m.ReceiptHandle+`"}`)
	is.Equal(res.StatusCode, http.StatusNoContent)
	c.clock.Advance(time.Minute)
	_, ok = c.dequeue(queueID)
	is.True(ok) // the released handle no longer removes the message
}

func TestRelease_WithoutDelay_KeepsItsPlaceInLine(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "first", "LOW")
	c.enqueue(queueID, "second", "LOW")
	m, _ := c.dequeue(queueID)

	res := c.do(http.MethodPost, releasePath(queueID, m.ID), leaseBody(m.ReceiptHandle, "", ""))

	is.Equal(res.StatusCode, http.StatusNoContent) // delay_seconds defaults to 0
	again, _ := c.dequeue(queueID)
	is.Equal(again.ID, m.ID) // the released message comes first again, in its original place
}

func TestLeases_WithoutTheLease_AreLeaseLostAndChangeNothing(t *testing.T) {
	t.Parallel()
	routes := map[string]struct {
		path   func(queueID, messageID string) string
		member string
		value  string
	}{
		"extend":  {extendPath, "visibility_timeout_seconds", "600"},
		"release": {releasePath, "delay_seconds", "0"},
	}
	cases := map[string]func(c *client, queueID string, latest, previous messageJSON) (queue, message, handle string){
		"stale handle": func(_ *client, q string, latest, previous messageJSON) (string, string, string) {
			return q, latest.ID, previous.ReceiptHandle
		},
		"unknown handle": func(_ *client, q string, latest, _ messageJSON) (string, string, string) {
			return q, latest.ID, unknownID
		},
		"unknown message": func(_ *client, q string, latest, _ messageJSON) (string, string, string) {
			return q, unknownID, latest.ReceiptHandle
		},
		"another queue": func(c *client, _ string, latest, _ messageJSON) (string, string, string) {
			return c.createQueueNamed("other"), latest.ID, latest.ReceiptHandle
		},
		"late": func(c *client, q string, latest, _ messageJSON) (string, string, string) {
			c.clock.Advance(30 * time.Second)
			return q, latest.ID, latest.ReceiptHandle
		},
	}
	for routeName, route := range routes {
		for caseName, lease := range cases {
			t.Run(routeName+"/"+caseName, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)
				queueID := c.createQueueNamed("emails")
				c.enqueue(queueID, "a", "LOW")
				previous, _ := c.dequeue(queueID)
				c.clock.Advance(30 * time.Second)
				latest, _ := c.dequeue(queueID)
				queue, message, handle := lease(c, queueID, latest, previous)

				res := c.do(http.MethodPost, route.path(queue, message), leaseBody(handle, route.member, route.value))

				assertProblem(t, res, http.StatusConflict, "lease_lost")
				if caseName != "late" {
					c.clock.Advance(30 * time.Second)
				}
				m, ok := c.dequeue(queueID)
				is.True(ok)                     // the lease ended when it would have
				is.Equal(m.DeliveryAttempts, 3) // and nothing else changed
			})
		}
	}
}

func TestLeases_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, route, queue, message, contentType, body string
		status                                         int
		code                                           string
	}{
		{"extend without timeout", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "", ""), 400, "invalid_json"},
		{"extend without handle", "extend", "known", unknownID, jsonType, `{"visibility_timeout_seconds":60}`, 400, "invalid_json"},
		{"extend handle not a UUID", "extend", "known", unknownID, jsonType, leaseBody("abc", "visibility_timeout_seconds", "60"), 400, "invalid_json"},
		{"extend timeout a string", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", `"60"`), 400, "invalid_json"},
		{"extend timeout null", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "null"), 400, "invalid_json"},
		{"extend with a delay", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "delay_seconds", "1"), 400, "invalid_json"},
		{"extend timeout 0", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "0"), 400, "invalid_visibility_timeout"},
		{"extend timeout 43,201", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "43201"), 400, "invalid_visibility_timeout"},
		{"extend timeout fractional", "extend", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "1.5"), 400, "invalid_visibility_timeout"},
		{"release delay -1", "release", "known", unknownID, jsonType, leaseBody(unknownID, "delay_seconds", "-1"), 400, "invalid_delay"},
		{"release delay 43,201", "release", "known", unknownID, jsonType, leaseBody(unknownID, "delay_seconds", "43201"), 400, "invalid_delay"},
		{"release delay fractional", "release", "known", unknownID, jsonType, leaseBody(unknownID, "delay_seconds", "0.5"), 400, "invalid_delay"},
		{"release with a timeout", "release", "known", unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "1"), 400, "invalid_json"},
		{"release without handle", "release", "known", unknownID, jsonType, `{}`, 400, "invalid_json"},
		{"release no body", "release", "known", unknownID, jsonType, ``, 400, "invalid_json"},
		{"release no content type", "release", "known", unknownID, "", leaseBody(unknownID, "", ""), 415, "unsupported_media_type"},
		{"extend bad message ID", "extend", "known", "m1", "text/plain", `x`, 400, "invalid_path"},
		{"release bad queue ID", "release", "emails", unknownID, jsonType, leaseBody(unknownID, "", ""), 400, "invalid_path"},
		{"extend range before existence", "extend", unknownID, unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "0"), 400, "invalid_visibility_timeout"},
		{"extend unknown queue", "extend", unknownID, unknownID, jsonType, leaseBody(unknownID, "visibility_timeout_seconds", "60"), 404, "queue_not_found"},
		{"release unknown queue", "release", unknownID, unknownID, jsonType, leaseBody(unknownID, "", ""), 404, "queue_not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}
			path := extendPath
			if tc.route == "release" {
				path = releasePath
			}

			res := c.send(newRequest(http.MethodPost, path(queueID, tc.message), tc.contentType, tc.body))

			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

func TestLeases_TimeoutBounds_AreAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ route, member, value string }{
		{"extend", "visibility_timeout_seconds", "1"},
		{"extend", "visibility_timeout_seconds", "43200"},
		{"release", "delay_seconds", "0"},
		{"release", "delay_seconds", "43200"},
	} {
		t.Run(tc.route+"="+tc.value, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			c.enqueue(queueID, "a", "LOW")
			m, _ := c.dequeue(queueID)
			path := extendPath
			if tc.route == "release" {
				path = releasePath
			}

			res := c.do(http.MethodPost, path(queueID, strings.ToUpper(m.ID)), leaseBody(strings.ToUpper(m.ReceiptHandle), tc.member, tc.value))

			is.Equal(res.StatusCode, http.StatusNoContent) // the bounds of the range, and UUIDs in capitals, are accepted
		})
	}
}
