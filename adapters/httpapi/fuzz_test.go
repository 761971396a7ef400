package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi/httpapitest"
)

// The seed corpora are in httpapitest (for the targets shared with other stores) and in
// testdata/fuzz/<target>/. `make test` fuzzes each target for a few seconds;
// `go test -fuzz '^FuzzHandler$' ./adapters/httpapi/` fuzzes one for longer.

// newFuzzHandler returns the API over fresh memory stores, for each input.
func newFuzzHandler(t *testing.T) http.Handler { return setup(t).handler }

// FuzzHandler sends any request to the API over the memory stores (see
// httpapitest.FuzzHandler).
func FuzzHandler(f *testing.F) { httpapitest.FuzzHandler(f, newFuzzHandler) }

// FuzzQuery sends any query to the listings over the memory stores (see
// httpapitest.FuzzQuery).
func FuzzQuery(f *testing.F) { httpapitest.FuzzQuery(f, newFuzzHandler) }

// FuzzEnqueue_AcceptedPayloadRoundTrips enqueues a body whose payload member is spelled by
// the fuzzer: a refusal must be a 4xx problem, and an accepted payload must come back from
// dequeue as exactly the string that encoding/json reads in the body.
func FuzzEnqueue_AcceptedPayloadRoundTrips(f *testing.F) {
	f.Fuzz(func(t *testing.T, payloadJSON string) {
		is := is.New(t)
		c := setup(t)
		queueID := c.createQueueNamed("emails")
		body := `{"priority":"LOW","payload":` + payloadJSON + `}`

		res := c.do(http.MethodPost, messagesPath(queueID), body)

		if res.StatusCode != http.StatusCreated {
			httpapitest.AssertContractAnswer(t, res)
			return
		}
		var sent struct{ Payload string }
		is.NoErr(json.Unmarshal([]byte(body), &sent)) // an accepted body is JSON
		m, ok := c.dequeue(queueID)
		is.True(ok)                       // the accepted message is delivered
		is.Equal(m.Payload, sent.Payload) // with the very string that was sent
		spelled := strings.Count(payloadJSON, "\uFFFD") + strings.Count(strings.ToLower(payloadJSON), `\ufffd`)
		is.True(strings.Count(m.Payload, "\uFFFD") <= spelled) // which held nothing that had to be replaced, such as a lone surrogate
	})
}
