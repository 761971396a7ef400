package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// writeSizes is an answer that remembers the size of each write of its body.
type writeSizes struct {
	*httptest.ResponseRecorder
	sizes []int
}

func (w *writeSizes) Write(b []byte) (int, error) {
	w.sizes = append(w.sizes, len(b))
	return w.ResponseRecorder.Write(b)
}

// largest returns the size of the largest write.
func (w *writeSizes) largest() int {
	largest := 0
	for _, n := range w.sizes {
		largest = max(largest, n)
	}
	return largest
}

func TestListAnswers_AreWrittenEntryByEntry(t *testing.T) {
	t.Parallel()
	const entries, payloadBytes = 4, 100_000
	payload := strings.Repeat("p", payloadBytes)
	c, queueID, _ := setupDeadLetters(t, payload, payload, payload, payload)
	for range entries {
		c.enqueue(queueID, payload, "LOW")
	}
	for name, req := range map[string]*http.Request{
		"dead letters":  newRequest(http.MethodGet, deadLettersPath(queueID), "", ""),
		"dequeue batch": newRequest(http.MethodPost, dequeueBatchPath(queueID), jsonType, `{"max_messages":10}`),
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			w := &writeSizes{ResponseRecorder: httptest.NewRecorder()}

			c.handler.ServeHTTP(w, req)

			is.Equal(w.Code, http.StatusOK)                              // the page is answered
			is.Equal(w.Header().Get("Content-Type"), "application/json") // as JSON
			is.True(w.Body.Len() > entries*payloadBytes)                 // with every entry
			is.True(w.largest() < 2*payloadBytes)                        // never more than about one entry at a time
			is.True(json.Valid(w.Body.Bytes()))                          // and the pieces make one JSON document
		})
	}
}
