package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// entries returns a batch body of n entries made by entry.
func entries(n int, entry func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = entry(i)
	}
	return `{"messages":[` + strings.Join(parts, ",") + `]}`
}

func lowEntry(i int) string { return fmt.Sprintf(`{"payload":"m%d","priority":"LOW"}`, i) }

// ids decodes the answer of a batch enqueue, checking its shape.
func ids(t *testing.T, res *http.Response) []string {
	t.Helper()
	is := is.New(t)
	is.Equal(res.StatusCode, http.StatusCreated)                 // a batch is enqueued with 201
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as JSON
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"ids"}) // holding only the IDs
	var answer struct{ IDs []string }
	is.NoErr(json.Unmarshal(body, &answer))
	return answer.IDs
}

func TestEnqueueBatch_AnswersOneIDPerEntryInOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	got := ids(t, c.do(http.MethodPost, batchPath(queueID), `{"messages":[
		{"payload":"first","priority":"LOW"},
		{"payload":"second","priority":"LOW","ttl_seconds":3600},
		{"payload":"urgent","priority":"HIGH","delay_seconds":0}
	]}`))

	is.Equal(len(got), 3) // one ID per entry
	for _, id := range got {
		is.Equal(uuidVersion(id), byte('7')) // each a UUID version 7
	}
	var delivered []string
	for range 3 {
		m, _ := c.dequeue(queueID)
		delivered = append(delivered, m.ID)
	}
	is.Equal(delivered, []string{got[2], got[0], got[1]}) // priority first, then array order
}

func TestEnqueueBatch_Sizes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		code string
	}{{1, ""}, {1000, ""}, {0, "invalid_batch_size"}, {1001, "invalid_batch_size"}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, batchPath(queueID), entries(tc.n, lowEntry))

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(len(ids(t, res)), tc.n) // every entry is stored
		})
	}
}

func TestEnqueueBatch_EntryErrors_NameTheFirstFailingEntry_AndStoreNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		code    string
		pointer string
	}{
		{"bad priority", entries(5, func(i int) string {
			if i == 3 {
				return `{"payload":"x","priority":"URGENT"}`
			}
			return lowEntry(i)
		}), "invalid_priority", "/messages/3/priority"},
		{"missing priority", `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b"}]}`, "invalid_priority", "/messages/1/priority"},
		{"bad ttl", `{"messages":[{"payload":"a","priority":"LOW","ttl_seconds":0}]}`, "invalid_ttl", "/messages/0/ttl_seconds"},
		{"bad delay", `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b","priority":"LOW","delay_seconds":-1}]}`, "invalid_delay", "/messages/1/delay_seconds"},
		{"delay not shorter than the lifetime", `{"messages":[{"payload":"a","priority":"LOW","ttl_seconds":60,"delay_seconds":60}]}`, "invalid_delay", "/messages/0/delay_seconds"},
		{"delay not shorter than the queue's default", `{"messages":[{"payload":"a","priority":"LOW","delay_seconds":604800}]}`, "invalid_delay", "/messages/0/delay_seconds"},
		{"lowest index first", `{"messages":[{"payload":"a","priority":"LOW"},{"payload":"b","priority":"LOW","ttl_seconds":0},{"payload":"c","priority":"no"}]}`, "invalid_ttl", "/messages/1/ttl_seconds"},
		{"entry not an object", `{"messages":[{"payload":"a","priority":"LOW"},"b"]}`, "invalid_json", "/messages/1"},
		{"entry null", `{"messages":[null]}`, "invalid_json", "/messages/0"},
		{"unknown member", `{"messages":[{"payload":"a","priority":"LOW","colour":"red"}]}`, "invalid_json", "/messages/0"},
		{"duplicate member", `{"messages":[{"payload":"a","payload":"b","priority":"LOW"}]}`, "invalid_json", "/messages/0"},
		{"missing payload", `{"messages":[{"payload":"a","priority":"LOW"},{"priority":"LOW"}]}`, "invalid_json", "/messages/1/payload"},
		{"payload of the wrong type", `{"messages":[{"payload":1,"priority":"LOW"}]}`, "invalid_json", "/messages/0/payload"},
		{"lone surrogate in a payload", `{"messages":[{"payload":"\ud800","priority":"LOW"}]}`, "invalid_json", "/messages/0/payload"},
		{"ttl of the wrong type", `{"messages":[{"payload":"a","priority":"LOW","ttl_seconds":"60"}]}`, "invalid_json", "/messages/0/ttl_seconds"},
		{"delay of the wrong type", `{"messages":[{"payload":"a","priority":"LOW","delay_seconds":null}]}`, "invalid_json", "/messages/0/delay_seconds"},
		{"shape before values", `{"messages":[{"payload":"a","priority":"bad"},{"payload":2,"priority":"LOW"}]}`, "invalid_json", "/messages/1/payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, batchPath(queueID), tc.body)

			assertPointedProblem(t, res, http.StatusBadRequest, tc.code, tc.pointer)
			_, ok := c.dequeue(queueID)
			is.True(!ok) // all or nothing: no entry was stored
		})
	}
}

func TestEnqueueBatch_BodyRefusals(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"missing messages":     `{}`,
		"messages null":        `{"messages":null}`,
		"messages an object":   `{"messages":{"payload":"a","priority":"LOW"}}`,
		"messages a string":    `{"messages":"a"}`,
		"unknown member":       `{"messages":[],"wait_seconds":1}`,
		"a single message":     `{"payload":"a","priority":"LOW"}`,
		"an array":             `[{"payload":"a","priority":"LOW"}]`,
		"truncated array":      `{"messages":[{"payload":"a","priority":"LOW"}`,
		"messages twice":       `{"messages":[],"messages":[]}`,
		"trailing comma":       `{"messages":[{"payload":"a","priority":"LOW"},]}`,
		"member name in caps":  `{"Messages":[{"payload":"a","priority":"LOW"}]}`,
		"invalid UTF-8 inside": "{\"messages\":[{\"payload\":\"\xff\",\"priority\":\"LOW\"}]}",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, batchPath(queueID), body)

			assertProblem(t, res, http.StatusBadRequest, "invalid_json")
		})
	}
}

func TestEnqueueBatch_OrderOfChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, queue, contentType, body string
		status                         int
		code                           string
	}{
		{"path before content type", "not-a-uuid", "text/plain", `x`, http.StatusBadRequest, "invalid_path"},
		{"content type before size", "known", "text/plain", strings.Repeat(" ", 1<<20+1), http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"size before JSON", "known", jsonType, strings.Repeat("[", 1<<20+1), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"size is not a shape", "known", jsonType, `{"messages":[]}`, http.StatusBadRequest, "invalid_batch_size"},
		{"values before existence", unknownID, jsonType, `{"messages":[{"payload":"a","priority":"no"}]}`, http.StatusBadRequest, "invalid_priority"},
		{"size before existence", unknownID, jsonType, `{"messages":[]}`, http.StatusBadRequest, "invalid_batch_size"},
		{"existence", unknownID, jsonType, `{"messages":[{"payload":"a","priority":"LOW"}]}`, http.StatusNotFound, "queue_not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.send(newRequest(http.MethodPost, batchPath(queueID), tc.contentType, tc.body))

			if tc.code == "invalid_priority" {
				assertPointedProblem(t, res, tc.status, tc.code, "/messages/0/priority")
				return
			}
			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

// messages decodes the answer of a batch dequeue, checking its shape.
func messages(t *testing.T, res *http.Response) []messageJSON {
	t.Helper()
	is := is.New(t)
	is.Equal(res.StatusCode, http.StatusOK)                      // a batch dequeue answers 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as JSON
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"messages"}) // holding only the messages
	var answer struct{ Messages []json.RawMessage }
	is.NoErr(json.Unmarshal(body, &answer))
	is.True(answer.Messages != nil) // an array, never null
	list := make([]messageJSON, len(answer.Messages))
	for i, raw := range answer.Messages {
		is.Equal(membersOf(t, raw), messageMembers) // each entry is a dequeued message
		is.NoErr(jsonUnmarshalStrict(raw, &list[i]))
	}
	return list
}

func TestDequeueBatch_DeliversInOrder_UpToMax(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	c.enqueue(queueID, "low", "LOW")
	c.enqueue(queueID, "high 1", "HIGH")
	c.enqueue(queueID, "medium", "MEDIUM")
	c.enqueue(queueID, "high 2", "HIGH")

	got := messages(t, c.do(http.MethodPost, dequeueBatchPath(queueID), `{"max_messages":3}`))

	is.Equal(len(got), 3)                                                                                      // up to max_messages
	is.Equal([]string{got[0].Payload, got[1].Payload, got[2].Payload}, []string{"high 1", "high 2", "medium"}) // in delivery order
	for _, m := range got {
		is.Equal(m.DeliveryAttempts, 1)                   // each a first delivery
		is.Equal(uuidVersion(m.ReceiptHandle), byte('4')) // with its own receipt handle
	}
	rest := messages(t, c.do(http.MethodPost, dequeueBatchPath(queueID), ""))
	is.Equal(len(rest), 1) // the others are hidden; the one left comes next
	is.Equal(rest[0].Payload, "low")
}

func TestDequeueBatch_DefaultIsTen(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	ids(t, c.do(http.MethodPost, batchPath(queueID), entries(12, lowEntry)))

	is.Equal(len(messages(t, c.do(http.MethodPost, dequeueBatchPath(queueID), ""))), 10)  // no body: ten
	is.Equal(len(messages(t, c.do(http.MethodPost, dequeueBatchPath(queueID), "{}"))), 2) // {}: the default too
}

func TestDequeueBatch_NothingDeliverable_IsAnEmptyArray(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	res := c.do(http.MethodPost, dequeueBatchPath(queueID), `{"max_messages":100}`)

	is.Equal(res.StatusCode, http.StatusOK) // never 204
	body := readAll(t, res)
	is.Equal(strings.TrimSpace(string(body)), `{"messages":[]}`) // an empty array
}

func TestDequeueBatch_MovesExhaustedMessagesToTheDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueue(`{"name":"emails","max_delivery_attempts":1}`).ID
	c.enqueue(queueID, "poison", "HIGH")
	c.dequeue(queueID)
	c.clock.Advance(time.Minute)
	c.enqueue(queueID, "fine", "LOW")

	got := messages(t, c.do(http.MethodPost, dequeueBatchPath(queueID), ""))

	is.Equal(len(got), 1)                                           // the exhausted message is not delivered
	is.Equal(got[0].Payload, "fine")                                // the next one is
	is.Equal(c.stats(queueID).Priorities[0].DeadLettered, int64(1)) // and the exhausted one is a dead letter
}

func TestDequeueBatch_Values(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		code string // empty when accepted
	}{
		{`{"max_messages":1}`, ""},
		{`{"max_messages":100}`, ""},
		{`{"max_messages":1e2}`, ""},
		{`{"wait_seconds":0}`, ""},
		{`{"wait_seconds":0e100}`, ""},
		{`{"max_messages":5,"wait_seconds":0}`, ""},
		{`{"max_messages":0}`, "invalid_max_messages"},
		{`{"max_messages":101}`, "invalid_max_messages"},
		{`{"max_messages":-1}`, "invalid_max_messages"},
		{`{"max_messages":2.5}`, "invalid_max_messages"},
		{`{"wait_seconds":21}`, "invalid_wait"},
		{`{"wait_seconds":-1}`, "invalid_wait"},
		{`{"wait_seconds":0.5}`, "invalid_wait"},
		{`{"max_messages":0,"wait_seconds":21}`, "invalid_max_messages"},
		{`{"wait_seconds":21,"max_messages":0}`, "invalid_max_messages"},
		{`{"max_messages":"5"}`, "invalid_json"},
		{`{"max_messages":null}`, "invalid_json"},
		{`{"wait_seconds":true}`, "invalid_json"},
		{`{"max_messages":0,"wait_seconds":"1"}`, "invalid_json"},
		{`{"max":5}`, "invalid_json"},
		{`{"max_messages":5,"visibility_timeout_seconds":5}`, "invalid_json"},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")

			res := c.do(http.MethodPost, dequeueBatchPath(queueID), tc.body)

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(res.StatusCode, http.StatusOK) // accepted
		})
	}
}

func TestDequeueBatch_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, queue, contentType, body string
		status                         int
		code                           string
	}{
		{"bad queue ID", "emails", "", "", http.StatusBadRequest, "invalid_path"},
		{"body without a JSON type", "known", "text/plain", `{}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"body over 1 MiB", "known", jsonType, "{" + strings.Repeat(" ", 1<<20) + "}", http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"array body", "known", jsonType, `[]`, http.StatusBadRequest, "invalid_json"},
		{"values before existence", unknownID, jsonType, `{"max_messages":0}`, http.StatusBadRequest, "invalid_max_messages"},
		{"unknown queue", unknownID, "", "", http.StatusNotFound, "queue_not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.send(newRequest(http.MethodPost, dequeueBatchPath(queueID), tc.contentType, tc.body))

			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

// results decodes the answer of a batch acknowledgement, checking its shape.
func results(t *testing.T, res *http.Response) []bool {
	t.Helper()
	is := is.New(t)
	is.Equal(res.StatusCode, http.StatusOK)                      // a batch acknowledgement answers 200
	is.Equal(res.Header.Get("Content-Type"), "application/json") // as JSON
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"results"}) // holding only the results
	var answer struct {
		Results []struct {
			ID           string `json:"id"`
			Acknowledged bool   `json:"acknowledged"`
		} `json:"results"`
	}
	is.NoErr(jsonUnmarshalStrict(body, &answer)) // each result has exactly id and acknowledged
	acknowledged := make([]bool, len(answer.Results))
	for i, r := range answer.Results {
		acknowledged[i] = r.Acknowledged
	}
	return acknowledged
}

// receiptEntry spells a batch acknowledgement entry.
func receiptEntry(messageID, receiptHandle string) string {
	return `{"id":"` + messageID + `","receipt_handle":"` + receiptHandle + `"}`
}

func TestAcknowledgeBatch_TrueExactlyWhenThisRequestRemovedTheMessage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	other := c.createQueueNamed("other")
	c.enqueue(queueID, "a", "LOW")
	c.enqueue(queueID, "b", "LOW")
	c.enqueue(queueID, "c", "LOW")
	a, _ := c.dequeue(queueID)
	b, _ := c.dequeue(queueID)
	cm, _ := c.dequeue(queueID)
	c.enqueue(other, "d", "LOW")
	d, _ := c.dequeue(other)

	res := c.do(http.MethodPost, acknowledgeBatchPath(queueID), `{"messages":[`+strings.Join([]string{
		receiptEntry(a.ID, a.ReceiptHandle),
		receiptEntry(b.ID, unknownID),
		receiptEntry(a.ID, a.ReceiptHandle),
		receiptEntry(d.ID, d.ReceiptHandle),
		receiptEntry(strings.ToUpper(cm.ID), strings.ToUpper(cm.ReceiptHandle)),
	}, ",")+`]}`)

	is.Equal(results(t, res), []bool{true, false, false, false, true}) // removed, wrong handle, already removed, other queue's, uppercase
	c.clock.Advance(time.Minute)
	again, ok := c.dequeue(queueID)
	is.True(ok)              // the message with the wrong handle stays
	is.Equal(again.ID, b.ID) // and comes back
	_, ok = c.dequeue(other)
	is.True(ok) // the other queue's message was not removed either
}

func TestAcknowledgeBatch_ResultsNameTheEntries(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")

	res := c.do(http.MethodPost, acknowledgeBatchPath(queueID), `{"messages":[`+receiptEntry(unknownID, unknownID)+`]}`)

	is.Equal(strings.TrimSpace(string(readAll(t, res))), `{"results":[{"id":"`+unknownID+`","acknowledged":false}]}`) // the entry's ID, in request order
}

func TestAcknowledgeBatch_Refusals(t *testing.T) {
	t.Parallel()
	entry := receiptEntry(unknownID, unknownID)
	tests := []struct {
		name    string
		queue   string
		body    string
		status  int
		code    string
		pointer string
	}{
		{"no entries", "known", `{"messages":[]}`, http.StatusBadRequest, "invalid_batch_size", ""},
		{"1,001 entries", "known", `{"messages":[` + strings.Repeat(entry+",", 1000) + entry + `]}`, http.StatusBadRequest, "invalid_batch_size", ""},
		{"missing messages", "known", `{}`, http.StatusBadRequest, "invalid_json", ""},
		{"messages not an array", "known", `{"messages":{}}`, http.StatusBadRequest, "invalid_json", ""},
		{"missing id", "known", `{"messages":[` + entry + `,{"receipt_handle":"` + unknownID + `"}]}`, http.StatusBadRequest, "invalid_json", "/messages/1/id"},
		{"missing receipt handle", "known", `{"messages":[{"id":"` + unknownID + `"}]}`, http.StatusBadRequest, "invalid_json", "/messages/0/receipt_handle"},
		{"id not a UUID", "known", `{"messages":[{"id":"m1","receipt_handle":"` + unknownID + `"}]}`, http.StatusBadRequest, "invalid_json", "/messages/0/id"},
		{"receipt handle in braces", "known", `{"messages":[{"id":"` + unknownID + `","receipt_handle":"{` + unknownID + `}"}]}`, http.StatusBadRequest, "invalid_json", "/messages/0/receipt_handle"},
		{"entry not an object", "known", `{"messages":["` + unknownID + `"]}`, http.StatusBadRequest, "invalid_json", "/messages/0"},
		{"unknown member in an entry", "known", `{"messages":[{"id":"` + unknownID + `","receipt_handle":"` + unknownID + `","queue":"x"}]}`, http.StatusBadRequest, "invalid_json", "/messages/0"},
		{"shape before size", "known", `{"messages":[` + strings.Repeat(entry+",", 1000) + `{"id":"x"}]}`, http.StatusBadRequest, "invalid_json", "/messages/1000/id"},
		{"bad queue ID", "x", `{"messages":[` + entry + `]}`, http.StatusBadRequest, "invalid_path", ""},
		{"size before existence", unknownID, `{"messages":[]}`, http.StatusBadRequest, "invalid_batch_size", ""},
		{"unknown queue", unknownID, `{"messages":[` + entry + `]}`, http.StatusNotFound, "queue_not_found", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			queueID := tc.queue
			if queueID == "known" {
				queueID = c.createQueueNamed("emails")
			}

			res := c.do(http.MethodPost, acknowledgeBatchPath(queueID), tc.body)

			if tc.pointer != "" {
				assertPointedProblem(t, res, tc.status, tc.code, tc.pointer)
				return
			}
			assertProblem(t, res, tc.status, tc.code)
		})
	}
}
