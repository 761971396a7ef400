package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// deadLetterJSON is a dead letter as the API answers it.
type deadLetterJSON struct {
	ID               string `json:"id"`
	Payload          string `json:"payload"`
	Priority         string `json:"priority"`
	DeliveryAttempts int    `json:"delivery_attempts"`
	EnqueuedAt       string `json:"enqueued_at"`
	DeadLetteredAt   string `json:"dead_lettered_at"`
}

var deadLetterMembers = []string{"dead_lettered_at", "delivery_attempts", "enqueued_at", "id", "payload", "priority"}

// answerTime is the spelling of every time in answers: RFC 3339 in UTC, microseconds.
var answerTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// decodeDeadLetter checks the exact shape of one dead letter and returns it.
func decodeDeadLetter(t *testing.T, raw []byte) deadLetterJSON {
	t.Helper()
	is := is.New(t)
	is.Equal(membersOf(t, raw), deadLetterMembers) // a dead letter has exactly its six members
	var d deadLetterJSON
	is.NoErr(jsonUnmarshalStrict(raw, &d))
	is.True(answerTime.MatchString(d.EnqueuedAt))     // times are RFC 3339 in UTC with microseconds
	is.True(answerTime.MatchString(d.DeadLetteredAt)) // both of them
	return d
}

// deadLetters lists a queue's dead letters with query, checking the answer's shape.
func (c *client) deadLetters(queueID, query string) []deadLetterJSON {
	c.t.Helper()
	is := is.New(c.t)
	res := c.do(http.MethodGet, deadLettersPath(queueID)+query, "")
	is.Equal(res.StatusCode, http.StatusOK)                      // a listing answers 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as JSON
	body := readAll(c.t, res)
	is.Equal(membersOf(c.t, body), []string{"dead_letters"}) // holding only the dead letters
	var page struct {
		DeadLetters []json.RawMessage `json:"dead_letters"`
	}
	is.NoErr(json.Unmarshal(body, &page))
	is.True(page.DeadLetters != nil) // an array, never null
	letters := make([]deadLetterJSON, len(page.DeadLetters))
	for i, raw := range page.DeadLetters {
		letters[i] = decodeDeadLetter(c.t, raw)
	}
	return letters
}

// setupDeadLetters returns a client with a queue whose messages have one attempt, holding
// the dead letters of the given payloads, in that order, and their IDs.
func setupDeadLetters(t *testing.T, payloads ...string) (*client, string, []string) {
	t.Helper()
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","max_delivery_attempts":1,"visibility_timeout_seconds":10}`).ID
	var ids []string
	for _, payload := range payloads {
		ids = append(ids, c.deadLetter(queueID, payload))
	}
	return c, queueID, ids
}

func TestDeadLetters_ListedInIDOrderWithTheirDetails(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b", "c")

	letters := c.deadLetters(queueID, "")

	is.Equal(len(letters), 3) // every dead letter
	for i, d := range letters {
		is.Equal(d.ID, ids[i])                          // in ID order, which is enqueue order
		is.Equal(d.Payload, []string{"a", "b", "c"}[i]) // with its payload
		is.Equal(d.Priority, "MEDIUM")                  // its priority
		is.Equal(d.DeliveryAttempts, 1)                 // its attempts
		enqueued, err := time.Parse(time.RFC3339Nano, d.EnqueuedAt)
		is.NoErr(err)
		dead, err := time.Parse(time.RFC3339Nano, d.DeadLetteredAt)
		is.NoErr(err)
		is.Equal(dead.Sub(enqueued), time.Hour) // moved by the dequeue an hour after its enqueue
	}
	is.Equal(letters[0].EnqueuedAt, "2026-11-30T12:00:00.000000Z") // on the store's clock, six digits always
}

func TestDeadLetters_Pages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b", "c")

	first := c.deadLetters(queueID, "?limit=2")
	next := c.deadLetters(queueID, "?limit=2&after="+first[1].ID)
	none := c.deadLetters(queueID, "?after="+strings.ToUpper(ids[2]))
	all := c.deadLetters(queueID, "?limit=1000&after=00000000-0000-0000-0000-000000000000")

	is.Equal([]string{first[0].ID, first[1].ID}, ids[:2]) // the lowest IDs first
	is.Equal(len(next), 1)                                // after is exclusive
	is.Equal(next[0].ID, ids[2])                          // and the next page goes on from it
	is.Equal(len(none), 0)                                // nothing after the last
	is.Equal(len(all), 3)                                 // after need not be a dead letter
}

func TestDeadLetters_BadQuery_IsInvalidQuery(t *testing.T) {
	t.Parallel()
	for _, query := range []string{
		"?limit=0", "?limit=1001", "?limit=-1", "?limit=1.5", "?limit=", "?limit=ten",
		"?after=", "?after=a", "?after={" + unknownID + "}", "?after=" + strings.ReplaceAll(unknownID, "-", ""),
		"?after=%FF", "?after=" + unknownID + "&after=" + unknownID, "?limit=1&limit=2",
		"?name=emails", "?Limit=1", "?after=%zz", "?limit=1;after=x",
	} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			c, queueID, _ := setupDeadLetters(t)

			res := c.do(http.MethodGet, deadLettersPath(queueID)+query, "")

			assertProblem(t, res, http.StatusBadRequest, "invalid_query")
		})
	}
}

func TestDeadLetter_ReadOne(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b")

	res := c.do(http.MethodGet, deadLetterPath(queueID, strings.ToUpper(ids[1])), "")

	is.Equal(res.StatusCode, http.StatusOK)                      // a dead letter is read with 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as JSON
	d := decodeDeadLetter(t, readAll(t, res))
	is.Equal(d.ID, ids[1]) // the one asked for, in lowercase
	is.Equal(d.Payload, "b")
}

func TestDeadLetter_Unknown_IsDeadLetterNotFound(t *testing.T) {
	t.Parallel()
	c, queueID, _ := setupDeadLetters(t, "a")
	live := c.enqueue(queueID, "alive", "LOW")

	for _, id := range []string{unknownID, live} {
		assertProblem(t, c.do(http.MethodGet, deadLetterPath(queueID, id), ""), http.StatusNotFound, "dead_letter_not_found")
	}
}

func TestDeadLetter_OfAnotherQueue_IsDeadLetterNotFound(t *testing.T) {
	t.Parallel()
	c, _, ids := setupDeadLetters(t, "a")
	other := c.createQueueNamed("other")

	assertProblem(t, c.do(http.MethodGet, deadLetterPath(other, ids[0]), ""), http.StatusNotFound, "dead_letter_not_found")
}

func TestDeleteDeadLetter_Is204EvenWhenThereIsNone(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b")

	for _, id := range []string{ids[0], ids[0], unknownID} {
		res := c.do(http.MethodDelete, deadLetterPath(queueID, id), "")
		is.Equal(res.StatusCode, http.StatusNoContent) // 204, for a dead letter, a deleted one and one that never was
		is.Equal(len(readAll(t, res)), 0)              // with no body
	}
	letters := c.deadLetters(queueID, "")
	is.Equal(len(letters), 1) // only the one deleted is gone
	is.Equal(letters[0].ID, ids[1])
}

func TestDeleteDeadLetters_DeletesAllAndCountsThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, _ := setupDeadLetters(t, "a", "b", "c")
	c.enqueue(queueID, "alive", "LOW")

	res := c.do(http.MethodDelete, deadLettersPath(queueID), "")

	is.Equal(res.StatusCode, http.StatusOK)                                                                                 // the deletion answers 200
	is.Equal(strings.TrimSpace(string(readAll(t, res))), `{"deleted":3}`)                                                   // with how many it deleted
	is.Equal(len(c.deadLetters(queueID, "")), 0)                                                                            // none is left
	is.Equal(strings.TrimSpace(string(readAll(t, c.do(http.MethodDelete, deadLettersPath(queueID), "")))), `{"deleted":0}`) // again: nothing
	_, ok := c.dequeue(queueID)
	is.True(ok) // the queue's messages stay
}

// redriven decodes the answer of a redrive, checking its shape.
func redriven(t *testing.T, res *http.Response) []string {
	t.Helper()
	is := is.New(t)
	is.Equal(res.StatusCode, http.StatusOK) // a redrive answers 200
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"redriven"}) // with the IDs moved only
	var answer struct{ Redriven []string }
	is.NoErr(json.Unmarshal(body, &answer))
	is.True(answer.Redriven != nil) // an array, never null
	return answer.Redriven
}

func TestRedrive_ByIDs_MovesThoseThatAreDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b", "c")

	got := redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"ids":["`+ids[2]+`","`+unknownID+`","`+strings.ToUpper(ids[0])+`"]}`))

	is.Equal(got, []string{ids[2], ids[0]}) // the IDs moved, in the order given, without the one that is no dead letter
	left := c.deadLetters(queueID, "")
	is.Equal(len(left), 1) // the others stay
	is.Equal(left[0].ID, ids[1])
	m, ok := c.dequeue(queueID)
	is.True(ok)                     // a redriven message is delivered again
	is.Equal(m.ID, ids[2])          // with its ID, at the end of its priority's line in redrive order
	is.Equal(m.Payload, "c")        // its payload
	is.Equal(m.Priority, "MEDIUM")  // its priority
	is.Equal(m.DeliveryAttempts, 1) // and fresh attempts
}

func TestRedrive_ByLimit_MovesTheLowestIDsFirst(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a", "b", "c")

	is.Equal(redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"limit":2}`)), ids[:2])     // the two lowest
	is.Equal(redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"limit":10000}`)), ids[2:]) // then the rest
	is.Equal(redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"limit":1}`)), []string{})  // then nothing
}

func TestRedrive_TakesTheQueuesCurrentSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, queueID, ids := setupDeadLetters(t, "a")
	res := c.do(http.MethodPatch, queuePath(queueID), `{"max_delivery_attempts":2,"default_message_ttl_seconds":60}`)
	is.Equal(res.StatusCode, http.StatusOK)

	redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"ids":["`+ids[0]+`"]}`))
	c.dequeue(queueID)
	c.clock.Advance(10 * time.Second)
	again, ok := c.dequeue(queueID)

	is.True(ok)                         // two attempts now, the queue's current limit
	is.Equal(again.DeliveryAttempts, 2) // counted from 0 at the redrive
	c.clock.Advance(60 * time.Second)
	_, ok = c.dequeue(queueID)
	is.True(!ok) // and the queue's current lifetime, from the redrive
}

func TestRedrive_Refusals(t *testing.T) {
	t.Parallel()
	ids := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = `"` + unknownID + `"`
		}
		return `{"ids":[` + strings.Join(list, ",") + `]}`
	}
	tests := []struct {
		name, queue, body string
		status            int
		code, pointer     string
	}{
		{"neither", "known", `{}`, 400, "invalid_json", ""},
		{"both", "known", `{"ids":["` + unknownID + `"],"limit":1}`, 400, "invalid_json", ""},
		{"ids null", "known", `{"ids":null}`, 400, "invalid_json", ""},
		{"ids a string", "known", `{"ids":"` + unknownID + `"}`, 400, "invalid_json", ""},
		{"limit a string", "known", `{"limit":"5"}`, 400, "invalid_json", ""},
		{"unknown member", "known", `{"limit":5,"queue":"x"}`, 400, "invalid_json", ""},
		{"entry not a UUID", "known", `{"ids":["` + unknownID + `","m1"]}`, 400, "invalid_json", "/ids/1"},
		{"entry a number", "known", `{"ids":[7]}`, 400, "invalid_json", "/ids/0"},
		{"entry in braces", "known", `{"ids":["{` + unknownID + `}"]}`, 400, "invalid_json", "/ids/0"},
		{"no ids", "known", `{"ids":[]}`, 400, "invalid_batch_size", ""},
		{"1,001 ids", "known", ids(1001), 400, "invalid_batch_size", ""},
		{"limit 0", "known", `{"limit":0}`, 400, "invalid_batch_size", ""},
		{"limit 10,001", "known", `{"limit":10001}`, 400, "invalid_batch_size", ""},
		{"limit fractional", "known", `{"limit":1.5}`, 400, "invalid_batch_size", ""},
		{"no body", "known", ``, 415, "unsupported_media_type", ""},
		{"bad queue ID", "emails", `{"limit":1}`, 400, "invalid_path", ""},
		{"size before existence", unknownID, `{"limit":0}`, 400, "invalid_batch_size", ""},
		{"unknown queue", unknownID, `{"limit":1}`, 404, "queue_not_found", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.do(http.MethodPost, redrivePath(queueID), tc.body)

			if tc.pointer != "" {
				assertPointedProblem(t, res, tc.status, tc.code, tc.pointer)
				return
			}
			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

func TestRedrive_AThousandIDsAreAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	list := make([]string, 1000)
	for i := range list {
		list[i] = strconv.Quote(unknownID)
	}

	is.Equal(redriven(t, c.do(http.MethodPost, redrivePath(queueID), `{"ids":[`+strings.Join(list, ",")+`]}`)), []string{}) // 1,000 ids are within the bound
}

func TestDeadLetterRoutes_UnknownQueueOrBadPath(t *testing.T) {
	t.Parallel()
	routes := []struct {
		method string
		path   func(queueID string) string
	}{
		{http.MethodGet, deadLettersPath},
		{http.MethodDelete, deadLettersPath},
		{http.MethodGet, func(q string) string { return deadLetterPath(q, unknownID) }},
		{http.MethodDelete, func(q string) string { return deadLetterPath(q, unknownID) }},
	}
	for _, route := range routes {
		t.Run(route.method+" "+route.path("{queue_id}"), func(t *testing.T) {
			t.Parallel()
			c := setup(t)

			assertProblem(t, c.do(route.method, route.path(unknownID), ""), http.StatusNotFound, "queue_not_found")
			assertProblem(t, c.do(route.method, route.path("emails"), ""), http.StatusBadRequest, "invalid_path")
		})
	}
}

func TestDeadLetterRoutes_BadMessageID_IsInvalidPath(t *testing.T) {
	t.Parallel()
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		assertProblem(t, c.do(method, deadLetterPath(queueID, "m1"), ""), http.StatusBadRequest, "invalid_path")
	}
}
