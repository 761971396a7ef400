package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// badRequest is one malformed request: its target may name the test's queue as {queue}.
type badRequest struct {
	name        string
	method      string
	target      string
	contentType string
	body        string
	chunked     bool // the body announces no length
	status      int
	code        string
}

// The targets of the bad requests.
const (
	queueTarget       = "/v1/queues/{queue}"
	messagesTarget    = "/v1/queues/{queue}/messages"
	dequeueTarget     = "/v1/queues/{queue}/messages/dequeue"
	acknowledgeTarget = "/v1/queues/{queue}/messages/" + unknownID + "/acknowledge"
	batchTarget       = "/v1/queues/{queue}/messages/batch"
	dequeueBatch      = "/v1/queues/{queue}/messages/dequeue/batch"
	ackBatchTarget    = "/v1/queues/{queue}/messages/acknowledge/batch"
	extendTarget      = "/v1/queues/{queue}/messages/" + unknownID + "/extend"
	releaseTarget     = "/v1/queues/{queue}/messages/" + unknownID + "/release"
	deadLetterTarget  = "/v1/queues/{queue}/dead-letters"
	redriveTarget     = "/v1/queues/{queue}/dead-letters/redrive"
)

// badRequests gathers in one table the malformed requests of CONTRACT.md and more, each with
// the exact answer it gets. The route-by-route tests around it cover each rule in depth.
var badRequests = []badRequest{
	// JSON that is not one well-formed object.
	{"truncated object", http.MethodPost, "/v1/queues", jsonType, `{"name":"emails"`, false, 400, "invalid_json"},
	{"truncated string", http.MethodPost, messagesTarget, jsonType, `{"payload":"a`, false, 400, "invalid_json"},
	{"truncated escape", http.MethodPost, messagesTarget, jsonType, `{"payload":"\u00`, false, 400, "invalid_json"},
	{"null body", http.MethodPatch, queueTarget, jsonType, `null`, false, 400, "invalid_json"},
	{"array body", http.MethodPost, messagesTarget, jsonType, `[{"payload":"a","priority":"LOW"}]`, false, 400, "invalid_json"},
	{"trailing object", http.MethodPost, "/v1/queues", jsonType, `{"name":"other"}{}`, false, 400, "invalid_json"},
	{"trailing garbage", http.MethodPost, acknowledgeTarget, jsonType, `{"receipt_handle":"` + unknownID + `"}x`, false, 400, "invalid_json"},
	{"byte order mark", http.MethodPost, "/v1/queues", jsonType, "\ufeff{\"name\":\"other\"}", false, 400, "invalid_json"},
	{"deeply nested value", http.MethodPost, messagesTarget, jsonType,
		`{"payload":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `,"priority":"LOW"}`, false, 400, "invalid_json"},
	{"1 MiB of brackets", http.MethodPost, messagesTarget, jsonType, strings.Repeat("[", 1<<20), false, 400, "invalid_json"},

	// Member names and duplicates.
	{"duplicate member", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW","priority":"HIGH"}`, false, 400, "invalid_json"},
	{"duplicate member spelled with an escape", http.MethodPost, "/v1/queues", jsonType, `{"name":"a","n\u0061me":"b"}`, false, 400, "invalid_json"},
	{"member name with NUL", http.MethodPost, "/v1/queues", jsonType, `{"name\u0000":"other"}`, false, 400, "invalid_json"},
	{"member name in another case", http.MethodPost, acknowledgeTarget, jsonType, `{"Receipt_Handle":"` + unknownID + `"}`, false, 400, "invalid_json"},
	{"name is not a PATCH member", http.MethodPatch, queueTarget, jsonType, `{"name":"other"}`, false, 400, "invalid_json"},

	// Text that is not valid UTF-8, or not representable in it.
	{"invalid UTF-8 in a value", http.MethodPost, "/v1/queues", jsonType, "{\"name\":\"\xc0\xaf\"}", false, 400, "invalid_json"},
	{"invalid UTF-8 in a member name", http.MethodPost, messagesTarget, jsonType, "{\"pay\xffload\":\"a\",\"priority\":\"LOW\"}", false, 400, "invalid_json"},
	{"UTF-8 of a surrogate", http.MethodPost, messagesTarget, jsonType, "{\"payload\":\"\xed\xa0\x80\",\"priority\":\"LOW\"}", false, 400, "invalid_json"},
	{"lone surrogate in a payload", http.MethodPost, messagesTarget, jsonType, `{"payload":"\udbff","priority":"LOW"}`, false, 400, "invalid_json"},
	{"lone surrogate in a name", http.MethodPost, "/v1/queues", jsonType, `{"name":"a\ud800"}`, false, 400, "invalid_json"},
	{"lone surrogate in a priority", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW\udc00"}`, false, 400, "invalid_json"},
	{"NUL in a name", http.MethodPost, "/v1/queues", jsonType, `{"name":"emails\u0000"}`, false, 400, "invalid_queue_name"},
	{"NUL in a priority", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW\u0000"}`, false, 400, "invalid_priority"},
	{"raw control character in a string", http.MethodPost, messagesTarget, jsonType, "{\"payload\":\"a\tb\",\"priority\":\"LOW\"}", false, 400, "invalid_json"},

	// Numbers too large, too precise or of the wrong kind.
	{"number with 10,000 digits", http.MethodPost, "/v1/queues", jsonType, `{"name":"other","max_delivery_attempts":` + strings.Repeat("9", 10000) + `}`, false, 400, "invalid_max_delivery_attempts"},
	{"exponent beyond float64", http.MethodPatch, queueTarget, jsonType, `{"visibility_timeout_seconds":1e400}`, false, 400, "invalid_visibility_timeout"},
	{"exponent beyond int64", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW","ttl_seconds":1e99999999999999999999}`, false, 400, "invalid_ttl"},
	{"negative huge number", http.MethodPatch, queueTarget, jsonType, `{"default_message_ttl_seconds":-1e400}`, false, 400, "invalid_default_message_ttl"},
	{"2^63", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW","ttl_seconds":9223372036854775808}`, false, 400, "invalid_ttl"},
	{"fraction below one", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":0.999999999999999999999}`, false, 400, "invalid_max_delivery_attempts"},
	{"hexadecimal", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":0x10}`, false, 400, "invalid_json"},
	{"leading zero", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":010}`, false, 400, "invalid_json"},
	{"plus sign", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":+10}`, false, 400, "invalid_json"},
	{"Infinity", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":Infinity}`, false, 400, "invalid_json"},

	// Values of the wrong JSON type, and null.
	{"name as a number", http.MethodPost, "/v1/queues", jsonType, `{"name":7}`, false, 400, "invalid_json"},
	{"setting as a string", http.MethodPatch, queueTarget, jsonType, `{"visibility_timeout_seconds":"60"}`, false, 400, "invalid_json"},
	{"setting as null", http.MethodPatch, queueTarget, jsonType, `{"max_delivery_attempts":null}`, false, 400, "invalid_json"},
	{"payload as an object", http.MethodPost, messagesTarget, jsonType, `{"payload":{"to":"ada"},"priority":"LOW"}`, false, 400, "invalid_json"},
	{"priority as a number", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":3}`, false, 400, "invalid_json"},
	{"ttl as a boolean", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"LOW","ttl_seconds":true}`, false, 400, "invalid_json"},
	{"receipt handle as null", http.MethodPost, acknowledgeTarget, jsonType, `{"receipt_handle":null}`, false, 400, "invalid_json"},
	{"dequeue body with an unknown member", http.MethodPost, dequeueTarget, jsonType, `{"wait":5}`, false, 400, "invalid_json"},

	// Values of the right type out of their range.
	{"name of 65 characters", http.MethodPost, "/v1/queues", jsonType, `{"name":"` + strings.Repeat("q", 65) + `"}`, false, 400, "invalid_queue_name"},
	{"name of 100,000 characters", http.MethodPost, "/v1/queues", jsonType, `{"name":"` + strings.Repeat("q", 100000) + `"}`, false, 400, "invalid_queue_name"},
	{"name of 64 two-byte characters", http.MethodPost, "/v1/queues", jsonType, `{"name":"` + strings.Repeat("é", 64) + `"}`, false, 400, "invalid_queue_name"},
	{"priority in lowercase", http.MethodPost, messagesTarget, jsonType, `{"payload":"a","priority":"low"}`, false, 400, "invalid_priority"},
	{"missing priority", http.MethodPost, messagesTarget, jsonType, `{"payload":"a"}`, false, 400, "invalid_priority"},
	{"missing payload", http.MethodPost, messagesTarget, jsonType, `{"priority":"LOW"}`, false, 400, "invalid_json"},
	{"empty update", http.MethodPatch, queueTarget, jsonType, `{}`, false, 400, "empty_queue_update"},

	// Receipt handles and path IDs in odd spellings.
	{"receipt handle in braces", http.MethodPost, acknowledgeTarget, jsonType, `{"receipt_handle":"{` + unknownID + `}"}`, false, 400, "invalid_json"},
	{"receipt handle as a URN", http.MethodPost, acknowledgeTarget, jsonType, `{"receipt_handle":"urn:uuid:` + unknownID + `"}`, false, 400, "invalid_json"},
	{"receipt handle with spaces", http.MethodPost, acknowledgeTarget, jsonType, `{"receipt_handle":" ` + unknownID + ` "}`, false, 400, "invalid_json"},
	{"queue ID in braces", http.MethodGet, "/v1/queues/%7B" + unknownID + "%7D", "", "", false, 400, "invalid_path"},
	{"queue ID as a URN", http.MethodPost, "/v1/queues/urn:uuid:" + unknownID + "/messages/dequeue", "", "", false, 400, "invalid_path"},
	{"queue ID of 32 digits", http.MethodGet, "/v1/queues/" + strings.ReplaceAll(unknownID, "-", ""), "", "", false, 400, "invalid_path"},
	{"queue ID of 35 characters", http.MethodGet, "/v1/queues/" + unknownID[1:], "", "", false, 400, "invalid_path"},
	{"queue ID of 37 characters", http.MethodGet, "/v1/queues/" + unknownID + "0", "", "", false, 400, "invalid_path"},
	{"queue ID with a non-hex digit", http.MethodGet, "/v1/queues/" + strings.Replace(unknownID, "a", "g", 1), "", "", false, 400, "invalid_path"},
	{"queue ID with misplaced hyphens", http.MethodGet, "/v1/queues/019c9a657-d3a-7c6b-8a9d-123456789abc", "", "", false, 400, "invalid_path"},
	{"queue ID with an encoded NUL", http.MethodGet, "/v1/queues/" + unknownID[:35] + "%00", "", "", false, 400, "invalid_path"},
	{"queue ID of fullwidth digits", http.MethodGet, "/v1/queues/" + strings.Replace(unknownID, "0", "０", 1), "", "", false, 400, "invalid_path"},
	{"message ID as a URN", http.MethodPost, "/v1/queues/{queue}/messages/urn:uuid:" + unknownID + "/acknowledge", jsonType, `{"receipt_handle":"` + unknownID + `"}`, false, 400, "invalid_path"},

	// Content types and sizes.
	{"no content type", http.MethodPost, "/v1/queues", "", `{"name":"other"}`, false, 415, "unsupported_media_type"},
	{"form content type", http.MethodPost, messagesTarget, "application/x-www-form-urlencoded", "payload=a&priority=LOW", false, 415, "unsupported_media_type"},
	{"JSON Patch content type", http.MethodPatch, queueTarget, "application/merge-patch+json", `{"max_delivery_attempts":3}`, false, 415, "unsupported_media_type"},
	{"malformed content type", http.MethodPost, "/v1/queues", "application/json; charset", `{"name":"other"}`, false, 415, "unsupported_media_type"},
	{"two content types", http.MethodPost, "/v1/queues", "application/json, text/plain", `{"name":"other"}`, false, 415, "unsupported_media_type"},
	{"chunked body of 1 MiB + 1", http.MethodPost, messagesTarget, jsonType, `{"payload":"` + strings.Repeat("a", 1<<20) + `","priority":"LOW"}`, true, 413, "payload_too_large"},
	{"chunked garbage over 1 MiB", http.MethodPatch, queueTarget, jsonType, strings.Repeat("\xff", 1<<20+1), true, 413, "payload_too_large"},

	// The routes of Part 2: batches, waits, leases and dead letters.
	{"batch with messages twice", http.MethodPost, batchTarget, jsonType, `{"messages":[{"payload":"a","priority":"LOW"}],"messages":[]}`, false, 400, "invalid_json"},
	{"batch of a single message", http.MethodPost, batchTarget, jsonType, `{"payload":"a","priority":"LOW"}`, false, 400, "invalid_json"},
	{"batch with invalid UTF-8 in an entry", http.MethodPost, batchTarget, jsonType, "{\"messages\":[{\"payload\":\"\xc3\x28\",\"priority\":\"LOW\"}]}", false, 400, "invalid_json"},
	{"batch with entries nested deeply", http.MethodPost, batchTarget, jsonType, `{"messages":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, false, 400, "invalid_json"},
	{"batch of no entries", http.MethodPost, batchTarget, jsonType, `{"messages":[]}`, false, 400, "invalid_batch_size"},
	{"chunked batch over 1 MiB", http.MethodPost, batchTarget, jsonType, `{"messages":[` + strings.Repeat(`{"payload":"a","priority":"LOW"},`, 40000) + `]}`, true, 413, "payload_too_large"},
	{"wait beyond 20 s", http.MethodPost, dequeueTarget, jsonType, `{"wait_seconds":21}`, false, 400, "invalid_wait"},
	{"wait of a huge exponent", http.MethodPost, dequeueBatch, jsonType, `{"wait_seconds":1e99999999999999999999}`, false, 400, "invalid_wait"},
	{"batch dequeue of none", http.MethodPost, dequeueBatch, jsonType, `{"max_messages":0}`, false, 400, "invalid_max_messages"},
	{"batch dequeue with a stranger", http.MethodPost, dequeueBatch, jsonType, `{"max_messages":1,"visibility_timeout_seconds":5}`, false, 400, "invalid_json"},
	{"acknowledgement batch of none", http.MethodPost, ackBatchTarget, jsonType, `{"messages":[]}`, false, 400, "invalid_batch_size"},
	{"extend without a timeout", http.MethodPost, extendTarget, jsonType, `{"receipt_handle":"` + unknownID + `"}`, false, 400, "invalid_json"},
	{"extend past 12 hours", http.MethodPost, extendTarget, jsonType, `{"receipt_handle":"` + unknownID + `","visibility_timeout_seconds":43201}`, false, 400, "invalid_visibility_timeout"},
	{"extend of no lease", http.MethodPost, extendTarget, jsonType, `{"receipt_handle":"` + unknownID + `","visibility_timeout_seconds":60}`, false, 409, "lease_lost"},
	{"release with a negative delay", http.MethodPost, releaseTarget, jsonType, `{"receipt_handle":"` + unknownID + `","delay_seconds":-1}`, false, 400, "invalid_delay"},
	{"release of no lease", http.MethodPost, releaseTarget, jsonType, `{"receipt_handle":"` + unknownID + `"}`, false, 409, "lease_lost"},
	{"redrive with ids and limit", http.MethodPost, redriveTarget, jsonType, `{"ids":[],"limit":1}`, false, 400, "invalid_json"},
	{"redrive of no limit", http.MethodPost, redriveTarget, jsonType, `{"limit":0}`, false, 400, "invalid_batch_size"},
	{"dead letters after a name", http.MethodGet, deadLetterTarget + "?after=emails", "", "", false, 400, "invalid_query"},
	{"dead letters with a limit of 0", http.MethodGet, deadLetterTarget + "?limit=0", "", "", false, 400, "invalid_query"},
	{"a dead letter that is not", http.MethodGet, deadLetterTarget + "/" + unknownID, "", "", false, 404, "dead_letter_not_found"},
	{"dead letter ID as a URN", http.MethodDelete, deadLetterTarget + "/urn:uuid:" + unknownID, "", "", false, 400, "invalid_path"},

	// Routes and methods.
	{"unknown route", http.MethodGet, "/v1/topics", "", "", false, 404, "not_found"},
	{"unknown action", http.MethodPost, "/v1/queues/{queue}/messages/" + unknownID + "/ack", "", "", false, 404, "not_found"},
	{"trailing slash", http.MethodPost, dequeueTarget + "/", "", "", false, 404, "not_found"},
	{"encoded slash inside an ID", http.MethodGet, "/v1/queues/{queue}%2Fmessages", "", "", false, 400, "invalid_path"},
	{"method in lowercase", "get", "/v1/queues", "", "", false, 405, "method_not_allowed"},
	{"PUT of a queue", http.MethodPut, queueTarget, "", "", false, 405, "method_not_allowed"},
	{"HEAD of dequeue", http.MethodHead, dequeueTarget, "", "", false, 405, "method_not_allowed"},
	{"GET of a batch", http.MethodGet, batchTarget, "", "", false, 405, "method_not_allowed"},
	{"PATCH of the dead letters", http.MethodPatch, deadLetterTarget, jsonType, `{}`, false, 405, "method_not_allowed"},
	{"trailing slash after batch", http.MethodPost, batchTarget + "/", jsonType, `{}`, false, 404, "not_found"},
	{"TRACE", http.MethodTrace, "/v1/queues", "", "", false, 405, "method_not_allowed"},
}

func TestBadInput_EveryMalformedRequest_IsAProblemAndChangesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			target := strings.ReplaceAll(tc.target, "{queue}", queueID)
			req := newRequest(tc.method, target, tc.contentType, tc.body)
			if tc.chunked {
				req = newChunkedRequest(tc.method, target, tc.contentType, tc.body)
			}

			res := c.send(req)

			if tc.method == http.MethodHead {
				is.Equal(res.StatusCode, tc.status) // HEAD answers carry no body to check
			} else {
				assertProblem(t, res, tc.status, tc.code)
			}
			res = c.do(http.MethodGet, "/v1/queues", "")
			is.Equal(names(t, res), []string{"emails"}) // no queue was created
			res = c.do(http.MethodGet, queuePath(queueID), "")
			is.Equal(decodeQueue(t, res).MaxDeliveryAttempts, int64(5)) // none changed
			_, ok := c.dequeue(queueID)
			is.True(!ok) // and no message was stored
		})
	}
}
