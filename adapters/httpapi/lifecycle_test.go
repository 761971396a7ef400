package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestDeleteQueue_EveryRouteOfItIsQueueNotFound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	messageID := c.enqueue(queueID, "a", "LOW")

	res := c.do(http.MethodDelete, queuePath(queueID), "")

	is.Equal(res.StatusCode, http.StatusNoContent) // the deletion answers 204
	is.Equal(len(readAll(t, res)), 0)              // with no body
	for _, req := range []*http.Request{
		newRequest(http.MethodGet, queuePath(queueID), "", ""),
		newRequest(http.MethodPatch, queuePath(queueID), jsonType, `{"max_delivery_attempts":3}`),
		newRequest(http.MethodDelete, queuePath(queueID), "", ""),
		newRequest(http.MethodPost, messagesPath(queueID), jsonType, `{"payload":"b","priority":"LOW"}`),
		newRequest(http.MethodPost, batchPath(queueID), jsonType, `{"messages":[{"payload":"b","priority":"LOW"}]}`),
		newRequest(http.MethodDelete, messagesPath(queueID), "", ""),
		newRequest(http.MethodPost, dequeuePath(queueID), "", ""),
		newRequest(http.MethodPost, dequeueBatchPath(queueID), "", ""),
		newRequest(http.MethodPost, acknowledgePath(queueID, messageID), jsonType, `{"receipt_handle":"`+unknownID+`"}`),
		newRequest(http.MethodPost, acknowledgeBatchPath(queueID), jsonType, `{"messages":[{"id":"`+messageID+`","receipt_handle":"`+unknownID+`"}]}`),
		newRequest(http.MethodPost, extendPath(queueID, messageID), jsonType, `{"receipt_handle":"`+unknownID+`","visibility_timeout_seconds":5}`),
		newRequest(http.MethodPost, releasePath(queueID, messageID), jsonType, `{"receipt_handle":"`+unknownID+`"}`),
		newRequest(http.MethodGet, statsPath(queueID), "", ""),
		newRequest(http.MethodGet, deadLettersPath(queueID), "", ""),
		newRequest(http.MethodDelete, deadLettersPath(queueID), "", ""),
		newRequest(http.MethodGet, deadLetterPath(queueID, messageID), "", ""),
		newRequest(http.MethodDelete, deadLetterPath(queueID, messageID), "", ""),
		newRequest(http.MethodPost, redrivePath(queueID), jsonType, `{"limit":1}`),
	} {
		assertProblem(t, c.send(req), http.StatusNotFound, "queue_not_found")
	}
	is.Equal(names(t, c.do(http.MethodGet, "/v1/queues", "")), []string{}) // and the listing leaves it out
}

func TestDeleteQueue_NameIsFreeAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	old := c.createQueueNamed("emails")
	c.enqueue(old, "old", "LOW")
	is.Equal(c.do(http.MethodDelete, queuePath(old), "").StatusCode, http.StatusNoContent)

	fresh := c.createQueueNamed("emails")

	is.True(fresh != old) // a new queue takes the name
	_, ok := c.dequeue(fresh)
	is.True(!ok) // and none of the old queue's messages
}

func TestDeleteQueue_Refusals(t *testing.T) {
	t.Parallel()
	c := setup(t)

	assertProblem(t, c.do(http.MethodDelete, queuePath(unknownID), ""), http.StatusNotFound, "queue_not_found")
	assertProblem(t, c.do(http.MethodDelete, queuePath("emails"), ""), http.StatusBadRequest, "invalid_path")
}

func TestPurge_RemovesEveryMessage_ReadyDelayedAndInFlight(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","max_delivery_attempts":1,"visibility_timeout_seconds":10}`).ID
	dead := c.deadLetter(queueID, "dead")
	c.enqueue(queueID, "ready", "LOW")
	c.enqueueBody(queueID, `{"payload":"delayed","priority":"LOW","delay_seconds":60}`)
	c.enqueue(queueID, "in flight", "HIGH")
	inFlight, _ := c.dequeue(queueID)

	res := c.do(http.MethodDelete, messagesPath(queueID), "")

	is.Equal(res.StatusCode, http.StatusOK)                               // a purge answers 200
	is.Equal(strings.TrimSpace(string(readAll(t, res))), `{"deleted":3}`) // with how many messages it removed
	c.acknowledge(queueID, inFlight.ID, inFlight.ReceiptHandle)           // the purged delivery's acknowledgement still answers 204
	c.clock.Advance(time.Hour)
	_, ok := c.dequeue(queueID)
	is.True(!ok) // nothing is left to deliver, delayed or not
	letters := c.deadLetters(queueID, "")
	is.Equal(len(letters), 1) // the dead letters stay
	is.Equal(letters[0].ID, dead)
	c.enqueue(queueID, "after", "LOW")
	_, ok = c.dequeue(queueID)
	is.True(ok) // and messages enqueued after the purge are kept
}

func TestPurge_Refusals(t *testing.T) {
	t.Parallel()
	c := setup(t)

	assertProblem(t, c.do(http.MethodDelete, messagesPath(unknownID), ""), http.StatusNotFound, "queue_not_found")
	assertProblem(t, c.do(http.MethodDelete, messagesPath("emails"), ""), http.StatusBadRequest, "invalid_path")
}
