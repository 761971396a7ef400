package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
)

func TestCreateQueue_DefaultsApply(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)

	res := c.do(http.MethodPost, "/v1/queues", `{"name":"emails"}`)

	is.Equal(res.StatusCode, http.StatusCreated) // a created queue answers 201
	q := decodeQueue(t, res)
	is.Equal(res.Header.Get("Location"), "/v1/queues/"+q.ID) // Location names the new queue
	is.Equal(q.Name, "emails")                               // the name is kept
	is.Equal(q.VisibilityTimeoutSeconds, int64(30))          // default visibility timeout
	is.Equal(q.MaxDeliveryAttempts, int64(5))                // default delivery-attempt limit
	is.Equal(q.DefaultMessageTTLSeconds, int64(604800))      // default message lifetime: 7 days
}

func TestCreateQueue_SeedExampleWithExplicitSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)

	// The body of the API document, spaces and line breaks included.
	q := c.createQueue(`{
    "name": "emails",
    "visibility_timeout_seconds": 60,
    "max_delivery_attempts": 10,
    "default_message_ttl_seconds": 86400
  }`)

	is.Equal(q.Name, "emails")                         // the name is kept
	is.Equal(q.VisibilityTimeoutSeconds, int64(60))    // the given visibility timeout
	is.Equal(q.MaxDeliveryAttempts, int64(10))         // the given delivery-attempt limit
	is.Equal(q.DefaultMessageTTLSeconds, int64(86400)) // the given message lifetime
}

func TestGetQueue_ReturnsTheCreatedQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	created := c.createQueue(`{"name":"emails","max_delivery_attempts":7}`)

	res := c.do(http.MethodGet, queuePath(created.ID), "")

	is.Equal(res.StatusCode, http.StatusOK) // a queue is read with 200
	is.Equal(decodeQueue(t, res), created)  // the same queue as the create answered
}

func TestGetQueue_UppercaseIDIsAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	created := c.createQueue(`{"name":"emails"}`)

	res := c.do(http.MethodGet, queuePath(strings.ToUpper(created.ID)), "")

	is.Equal(res.StatusCode, http.StatusOK)      // an ID in either case names the queue
	is.Equal(decodeQueue(t, res).ID, created.ID) // the answer spells the ID in lowercase
}

func TestGetQueue_UnknownQueue_IsQueueNotFound(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.do(http.MethodGet, queuePath(unknownID), "")

	assertProblem(t, res, http.StatusNotFound, "queue_not_found")
}

// nonCanonicalIDs are path IDs that are not canonical UUIDs.
var nonCanonicalIDs = map[string]string{
	"braces":           "{" + unknownID + "}",
	"urn":              "urn:uuid:" + unknownID,
	"32 hex digits":    strings.ReplaceAll(unknownID, "-", ""),
	"35 characters":    unknownID[:35],
	"37 characters":    unknownID + "0",
	"not hex":          "019c9a65-7d3a-7c6b-8a9d-12345678zzzz",
	"hyphen misplaced": "019c9a657-d3a-7c6b-8a9d-123456789abc",
	"word":             "emails",
}

func TestGetQueue_NonCanonicalID_IsInvalidPath(t *testing.T) {
	t.Parallel()
	for name, id := range nonCanonicalIDs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)

			res := c.do(http.MethodGet, queuePath(id), "")

			assertProblem(t, res, http.StatusBadRequest, "invalid_path")
		})
	}
}

// setting describes one queue setting of create and update bodies.
type setting struct {
	member string
	code   string
	max    int64
	value  func(queueJSON) int64
}

var queueSettings = []setting{
	{"visibility_timeout_seconds", "invalid_visibility_timeout", 21600, func(q queueJSON) int64 { return q.VisibilityTimeoutSeconds }},
	{"max_delivery_attempts", "invalid_max_delivery_attempts", 100, func(q queueJSON) int64 { return q.MaxDeliveryAttempts }},
	{"default_message_ttl_seconds", "invalid_default_message_ttl", 2592000, func(q queueJSON) int64 { return q.DefaultMessageTTLSeconds }},
}

// valueCase is one JSON value of a whole-seconds or count member: accepted as want when
// code is empty, refused with code otherwise.
type valueCase struct {
	value string
	code  string
	want  int64
}

// rangeCases returns the boundary, type and number-spelling cases of a member whose range
// is 1 to max and whose out-of-range code is code.
func rangeCases(code string, max int64) []valueCase {
	return []valueCase{
		{"1", "", 1},
		{strconv.FormatInt(max, 10), "", max},
		{"30.0", "", 30},
		{"3e1", "", 30},
		{"3E+1", "", 30},
		{"300e-1", "", 30},
		{"0", code, 0},
		{"-0", code, 0},
		{strconv.FormatInt(max+1, 10), code, 0},
		{"-1", code, 0},
		{"1.5", code, 0},
		{"30.5", code, 0},
		{"1e400", code, 0},
		{"2147483648", code, 0},
		{"99999999999999999999", code, 0},
		{`"30"`, "invalid_json", 0},
		{"null", "invalid_json", 0},
		{"true", "invalid_json", 0},
		{"[30]", "invalid_json", 0},
		{`{}`, "invalid_json", 0},
	}
}

func TestCreateQueue_SettingValues(t *testing.T) {
	t.Parallel()
	for _, s := range queueSettings {
		for _, tc := range rangeCases(s.code, s.max) {
			t.Run(s.member+"="+tc.value, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)

				res := c.do(http.MethodPost, "/v1/queues", `{"name":"emails","`+s.member+`":`+tc.value+`}`)

				if tc.code != "" {
					assertProblem(t, res, http.StatusBadRequest, tc.code)
					return
				}
				is.Equal(res.StatusCode, http.StatusCreated)    // an in-range value is accepted
				is.Equal(s.value(decodeQueue(t, res)), tc.want) // the value is stored as a whole number
			})
		}
	}
}

func TestCreateQueue_NameRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		code string // empty when the name is accepted
	}{
		{"lowercase word", `{"name":"emails"}`, ""},
		{"one character", `{"name":"a"}`, ""},
		{"digits, dots, underscores and hyphens inside", `{"name":"a0.b_c-9"}`, ""},
		{"64 characters", `{"name":"` + strings.Repeat("a", 64) + `"}`, ""},
		{"65 characters", `{"name":"` + strings.Repeat("a", 65) + `"}`, "invalid_queue_name"},
		{"uppercase", `{"name":"Emails"}`, "invalid_queue_name"},
		{"leading hyphen", `{"name":"-emails"}`, "invalid_queue_name"},
		{"trailing dot", `{"name":"emails."}`, "invalid_queue_name"},
		{"leading underscore", `{"name":"_emails"}`, "invalid_queue_name"},
		{"space", `{"name":"e mails"}`, "invalid_queue_name"},
		{"slash", `{"name":"e/mails"}`, "invalid_queue_name"},
		{"non-ASCII letter", `{"name":"émails"}`, "invalid_queue_name"},
		{"empty", `{"name":""}`, "invalid_queue_name"},
		{"missing", `{"visibility_timeout_seconds":60}`, "invalid_queue_name"},
		{"empty object", `{}`, "invalid_queue_name"},
		{"number", `{"name":42}`, "invalid_json"},
		{"null", `{"name":null}`, "invalid_json"},
		{"array", `{"name":["emails"]}`, "invalid_json"},
		{"field name in another case", `{"Name":"emails"}`, "invalid_json"},
		{"unknown field", `{"name":"emails","colour":"blue"}`, "invalid_json"},
		{"duplicate name field", `{"name":"emails","name":"other"}`, "invalid_json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)

			res := c.do(http.MethodPost, "/v1/queues", tc.body)

			if tc.code != "" {
				assertProblem(t, res, http.StatusBadRequest, tc.code)
				return
			}
			is.Equal(res.StatusCode, http.StatusCreated) // a valid name is accepted
			decodeQueue(t, res)
		})
	}
}

func TestCreateQueue_FirstInvalidValueDecidesTheCode(t *testing.T) {
	t.Parallel()
	c := setup(t)

	// A wrong JSON type anywhere comes before any value out of range.
	res := c.do(http.MethodPost, "/v1/queues", `{"name":"Bad","max_delivery_attempts":"5"}`)
	assertProblem(t, res, http.StatusBadRequest, "invalid_json")

	// Field values in the order name, visibility timeout, attempts, lifetime.
	res = c.do(http.MethodPost, "/v1/queues", `{"name":"Bad","visibility_timeout_seconds":0}`)
	assertProblem(t, res, http.StatusBadRequest, "invalid_queue_name")
}

func TestCreateQueue_DuplicateName_IsQueueAlreadyExists(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	first := c.createQueueNamed("emails")

	res := c.do(http.MethodPost, "/v1/queues", `{"name":"emails","max_delivery_attempts":9}`)

	assertProblem(t, res, http.StatusConflict, "queue_already_exists")
	res = c.do(http.MethodGet, queuePath(first), "")
	is.Equal(decodeQueue(t, res).MaxDeliveryAttempts, int64(5)) // the first queue is unchanged
}

func TestListQueues_OrderedByName(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		c.createQueueNamed(name)
	}

	res := c.do(http.MethodGet, "/v1/queues", "")

	is.Equal(res.StatusCode, http.StatusOK)                        // a listing answers 200
	is.Equal(names(t, res), []string{"alpha", "bravo", "charlie"}) // queues come ordered by name
}

func TestListQueues_Selection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"exact name", "?name=bravo", []string{"bravo"}},
		{"no queue with that name", "?name=delta", []string{}},
		{"name is not a prefix", "?name=alp", []string{}},
		{"limit 1", "?limit=1", []string{"alpha"}},
		{"limit 2", "?limit=2", []string{"alpha", "bravo"}},
		{"limit 1000", "?limit=1000", []string{"alpha", "bravo", "charlie"}},
		{"after a name", "?after=alpha", []string{"bravo", "charlie"}},
		{"second page", "?limit=2&after=bravo", []string{"charlie"}},
		{"after the last", "?after=charlie", []string{}},
		{"after a name that is not a queue", "?after=b", []string{"bravo", "charlie"}},
		{"name and after", "?name=alpha&after=alpha", []string{}},
		{"the empty name, which no queue has", "?name=", []string{}},
		{"the empty name and a limit", "?name=&limit=2", []string{}},
		{"a name no queue could have", "?name=Alpha", []string{}},
		{"an over-long name", "?name=" + strings.Repeat("a", 65), []string{}},
		{"after any string", "?after=B", []string{"alpha", "bravo", "charlie"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			for _, name := range []string{"charlie", "alpha", "bravo"} {
				c.createQueueNamed(name)
			}

			res := c.do(http.MethodGet, "/v1/queues"+tc.query, "")

			is.Equal(res.StatusCode, http.StatusOK) // the listing answers 200
			is.Equal(names(t, res), tc.want)        // the selected page
		})
	}
}

func TestListQueues_NoQueues_IsEmptyList(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)

	res := c.do(http.MethodGet, "/v1/queues?name=emails", "")

	is.Equal(res.StatusCode, http.StatusOK)                               // an empty listing is still 200
	is.Equal(res.Header.Get("Content-Type"), "application/json")          // a listing is application/json
	is.Equal(strings.TrimSpace(string(readAll(t, res))), `{"queues":[]}`) // an empty array, not null
}

func TestListQueues_BadQuery_IsInvalidQuery(t *testing.T) {
	t.Parallel()
	for _, query := range []string{
		"?limit=0",
		"?limit=1001",
		"?limit=abc",
		"?limit=-1",
		"?limit=1.5",
		"?limit=",
		"?colour=blue",
		"?Name=alpha",
		"?name=alpha&name=bravo",
		"?limit=1&limit=2",
		"?name=%zz",
		"?name=alpha;limit=1",
	} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			c.createQueueNamed("alpha")

			res := c.do(http.MethodGet, "/v1/queues"+query, "")

			assertProblem(t, res, http.StatusBadRequest, "invalid_query")
		})
	}
}

func TestListQueues_CursorThatIsNotText_IsInvalidQuery(t *testing.T) {
	t.Parallel()
	for _, query := range []string{
		"?after=%FF", "?after=%C3%28", "?after=%ED%A0%80", "?after=%C0%AF",
		"?after=%F4%90%80%80", "?name=%FF", "?after=%", "?after=%F", "?after=%G0", "?after=%FF&limit=2",
	} {
		for name, handler := range map[string]func(t *testing.T) http.Handler{
			"memory stores":                   func(t *testing.T) http.Handler { return setup(t).handler },
			"a service that takes any cursor": func(*testing.T) http.Handler { return httpapi.NewHandler(stubService{}, httpapi.Options{}) },
		} {
			t.Run(query+" over "+name, func(t *testing.T) {
				t.Parallel()

				res := serve(handler(t), newRequest(http.MethodGet, "/v1/queues"+query, "", ""))

				assertProblem(t, res, http.StatusBadRequest, "invalid_query")
			})
		}
	}
}

func TestListQueues_CursorWithANUL_IsInvalidQuery(t *testing.T) {
	t.Parallel()
	for _, query := range []string{"?after=%00", "?after=a%00b"} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()

			res := setup(t).do(http.MethodGet, "/v1/queues"+query, "")

			assertProblem(t, res, http.StatusBadRequest, "invalid_query") // the service's rule: no name holds a NUL, nor can PostgreSQL's text
		})
	}
}

func TestListQueues_CursorOfAnyValidText_IsAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	c.createQueueNamed("emails")

	for _, query := range []string{"?after=%C3%A9", "?after=%F0%9F%98%80", "?after=%EF%BF%BD", "?after=+", "?after=" + strings.Repeat("z", 1024)} {
		is.Equal(c.do(http.MethodGet, "/v1/queues"+query, "").StatusCode, http.StatusOK) // UTF-8 text of up to 1,024 bytes is a cursor
	}
	assertProblem(t, c.do(http.MethodGet, "/v1/queues?after="+strings.Repeat("z", 1025), ""), http.StatusBadRequest, "invalid_query")
}

// names returns the names of a listing, checking each queue's members.
func names(t *testing.T, res *http.Response) []string {
	t.Helper()
	is := is.New(t)
	body := readAll(t, res)
	is.Equal(membersOf(t, body), []string{"queues"}) // a listing has only its queues
	var page struct {
		Queues []queueJSON `json:"queues"`
	}
	is.NoErr(json.Unmarshal(body, &page)) // the listing decodes
	names := make([]string, 0, len(page.Queues))
	for _, q := range page.Queues {
		names = append(names, q.Name)
	}
	return names
}

func TestUpdateQueue_OnlyGivenFieldsChange(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	created := c.createQueue(`{"name":"emails","max_delivery_attempts":7}`)

	res := c.do(http.MethodPatch, queuePath(created.ID), `{"visibility_timeout_seconds":60}`)

	is.Equal(res.StatusCode, http.StatusOK) // an update answers 200
	updated := decodeQueue(t, res)
	want := created
	want.VisibilityTimeoutSeconds = 60
	is.Equal(updated, want) // the complete queue, with only the given field changed
	res = c.do(http.MethodGet, queuePath(created.ID), "")
	is.Equal(decodeQueue(t, res), want) // the change is stored
}

func TestUpdateQueue_SeedExample(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	created := c.createQueue(`{"name":"emails"}`)

	res := c.do(http.MethodPatch, queuePath(created.ID), `{
    "visibility_timeout_seconds": 60,
    "max_delivery_attempts": 10
  }`)

	is.Equal(res.StatusCode, http.StatusOK) // the seed's update succeeds
	is.Equal(decodeQueue(t, res), queueJSON{
		ID: created.ID, Name: "emails", VisibilityTimeoutSeconds: 60, MaxDeliveryAttempts: 10, DefaultMessageTTLSeconds: 604800,
	}) // the seed's answer
}

func TestUpdateQueue_SettingValues(t *testing.T) {
	t.Parallel()
	for _, s := range queueSettings {
		for _, tc := range rangeCases(s.code, s.max) {
			t.Run(s.member+"="+tc.value, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				c := setup(t)
				created := c.createQueue(`{"name":"emails"}`)

				res := c.do(http.MethodPatch, queuePath(created.ID), `{"`+s.member+`":`+tc.value+`}`)

				if tc.code != "" {
					assertProblem(t, res, http.StatusBadRequest, tc.code)
					res = c.do(http.MethodGet, queuePath(created.ID), "")
					is.Equal(decodeQueue(t, res), created) // a refused update changes nothing
					return
				}
				is.Equal(res.StatusCode, http.StatusOK)         // an in-range value is accepted
				is.Equal(s.value(decodeQueue(t, res)), tc.want) // the new value
			})
		}
	}
}

func TestUpdateQueue_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   func(queueID string) string
		body   string
		status int
		code   string
	}{
		{"empty update", queuePath, `{}`, http.StatusBadRequest, "empty_queue_update"},
		{"name is not a PATCH field", queuePath, `{"name":"other"}`, http.StatusBadRequest, "invalid_json"},
		{"name beside a setting", queuePath, `{"name":"other","max_delivery_attempts":3}`, http.StatusBadRequest, "invalid_json"},
		{"unknown field", queuePath, `{"colour":"blue"}`, http.StatusBadRequest, "invalid_json"},
		{"not an object", queuePath, `[]`, http.StatusBadRequest, "invalid_json"},
		{"unknown queue", func(string) string { return queuePath(unknownID) }, `{"max_delivery_attempts":3}`, http.StatusNotFound, "queue_not_found"},
		{"range before existence", func(string) string { return queuePath(unknownID) }, `{"max_delivery_attempts":0}`, http.StatusBadRequest, "invalid_max_delivery_attempts"},
		{"empty update before existence", func(string) string { return queuePath(unknownID) }, `{}`, http.StatusBadRequest, "empty_queue_update"},
		{"invalid path before a bad body", func(string) string { return queuePath("not-a-uuid") }, `{"name":`, http.StatusBadRequest, "invalid_path"},
		{"invalid path before an empty update", func(string) string { return queuePath("not-a-uuid") }, `{}`, http.StatusBadRequest, "invalid_path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t)
			created := c.createQueue(`{"name":"emails"}`)

			res := c.do(http.MethodPatch, tc.path(created.ID), tc.body)

			assertProblem(t, res, tc.status, tc.code)
		})
	}
}

func TestUpdateQueue_InvalidPathBeforeContentType(t *testing.T) {
	t.Parallel()
	c := setup(t)

	res := c.send(newRequest(http.MethodPatch, queuePath("not-a-uuid"), "text/plain", `{"max_delivery_attempts":3}`))

	assertProblem(t, res, http.StatusBadRequest, "invalid_path")
}
