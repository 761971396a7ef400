package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The seed corpora are in testdata/fuzz/<target>/. `make test` fuzzes each target for a few
// seconds; `go test -fuzz '^FuzzHandler$' ./adapters/httpapi/` fuzzes one for longer.

// FuzzHandler sends any request to the API over the memory adapters, with a queue that
// holds a message; {queue} in the target names that queue. No request may panic or get a
// 5xx; every error is problem+json with exactly its five members; every success has the
// shape of the contract.
func FuzzHandler(f *testing.F) {
	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte, chunked bool) {
		c := setup(t)
		queueID := c.createQueueNamed("emails")
		c.enqueue(queueID, "a", "LOW")
		req, err := http.NewRequest(method, "http://retsu.test"+strings.ReplaceAll(target, "{queue}", queueID), bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(target, "/") {
			t.Skip("not a request a server could receive")
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if chunked {
			req.Body, req.ContentLength = readCloser(string(body)), -1
		}

		res := c.send(req)

		assertContractAnswer(t, res)
	})
}

// assertContractAnswer checks any answer of the API: no 5xx, errors as problem+json, and
// successes with the members and content type of the contract.
func assertContractAnswer(t *testing.T, res *http.Response) {
	t.Helper()
	is := is.New(t)
	is.True(res.StatusCode < 500) // no request makes the server fail
	body := readAll(t, res)
	switch {
	case res.StatusCode >= 400:
		var p struct{ Code string }
		is.NoErr(json.Unmarshal(body, &p)) // an error answer is JSON
		res.Body = readCloser(string(body))
		assertProblem(t, res, res.StatusCode, p.Code)
	case res.StatusCode == http.StatusNoContent:
		is.Equal(len(body), 0) // 204 has no body
	default:
		is.Equal(res.Header.Get("Content-Type"), "application/json") // a success with a body is JSON
		is.True(json.Valid(body))                                    // well formed
	}
}

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
			assertContractAnswer(t, res)
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
