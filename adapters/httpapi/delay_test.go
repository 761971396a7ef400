package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestEnqueue_Delay_HoldsTheMessageBack(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueueBody(queueID, `{"payload":"later","priority":"HIGH","delay_seconds":60}`)
	c.enqueue(queueID, "now", "LOW")

	first, _ := c.dequeue(queueID)
	is.Equal(first.Payload, "now") // a delayed message waits, even before a lower priority
	c.acknowledge(queueID, first.ID, first.ReceiptHandle)
	_, ok := c.dequeue(queueID)
	is.True(!ok) // and nothing else is deliverable
	c.clock.Advance(59 * time.Second)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // not a second early
	c.clock.Advance(time.Second)
	later, ok := c.dequeue(queueID)

	is.True(ok)                      // it is delivered once its delay ended
	is.Equal(later.Payload, "later") // the delayed message
	is.Equal(later.DeliveryAttempts, 1)
}

func TestEnqueue_DelayZero_IsNoDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueueBody(queueID, `{"payload":"a","priority":"LOW","delay_seconds":0}`)

	_, ok := c.dequeue(queueID)

	is.True(ok) // delay 0 delivers at once
}

func TestEnqueue_DelayValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		members string // besides payload and priority
		code    string // empty when accepted
	}{
		{`"delay_seconds":1`, ""},
		{`"delay_seconds":2591999,"ttl_seconds":2592000`, ""},
		{`"delay_seconds":30.0`, ""},
		{`"delay_seconds":3e1`, ""},
		{`"delay_seconds":0e100`, ""},
		{`"delay_seconds":-0`, ""},
		{`"delay_seconds":2592000,"ttl_seconds":2592000`, "invalid_delay"},
		{`"delay_seconds":-1`, "invalid_delay"},
		{`"delay_seconds":1.5`, "invalid_delay"},
		{`"delay_seconds":1e400`, "invalid_delay"},
		{`"delay_seconds":60,"ttl_seconds":60`, "invalid_delay"},
		{`"delay_seconds":61,"ttl_seconds":60`, "invalid_delay"},
		{`"delay_seconds":604800`, "invalid_delay"},
		{`"delay_seconds":"60"`, "invalid_json"},
		{`"delay_seconds":null`, "invalid_json"},
		{`"delay_seconds":-1,"ttl_seconds":0`, "invalid_ttl"},
		{`"delay_seconds":"1","priority":"bad"`, "invalid_json"},
	}
	for _, tc := range tests {
		t.Run(tc.members, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			body := `{"payload":"a",` + tc.members + `}`
			if !strings.Contains(tc.members, "priority") {
				body = `{"payload":"a","priority":"LOW",` + tc.members + `}`
			}

			res := c.do(http.MethodPost, messagesPath(queueID), body)

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(res.StatusCode, http.StatusCreated) // an in-range delay is accepted
		})
	}
}

func TestEnqueue_DelayAgainstTheQueueDefaultLifetime(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","default_message_ttl_seconds":120}`).ID

	res := c.do(http.MethodPost, messagesPath(queueID), `{"payload":"a","priority":"LOW","delay_seconds":120}`)
	assertProblem(t, res, http.StatusBadRequest, "invalid_delay")
	res = c.do(http.MethodPost, messagesPath(queueID), `{"payload":"a","priority":"LOW","delay_seconds":119}`)

	is.Equal(res.StatusCode, http.StatusCreated) // a delay shorter than the queue's default lifetime
}

func TestEnqueue_DelayBeforeExistence(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.do(http.MethodPost, messagesPath(unknownID), `{"payload":"a","priority":"LOW","delay_seconds":-1}`)

	assertProblem(t, res, http.StatusBadRequest, "invalid_delay")
}

func TestEnqueue_LifetimeCountsFromEnqueueNotFromTheDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueueBody(queueID, `{"payload":"a","priority":"LOW","ttl_seconds":100,"delay_seconds":90}`)

	c.clock.Advance(100 * time.Second)
	_, ok := c.dequeue(queueID)

	is.True(!ok) // the message expired 10 s after its delay ended
}
