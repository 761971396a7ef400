package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// serveAnswer serves, on a real server, a handler that answers with answer, behind the
// middleware that observes and recovers every request, and returns the answer's status,
// its body, whether reading it failed, and the logs.
func serveAnswer(t *testing.T, answer handlerFunc) (status int, body string, cut bool, logs string) {
	t.Helper()
	is := is.New(t)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	a := &api{log: log, problems: newProblemWriter(log)}
	server := httptest.NewServer(observe(log, nil, recoverPanics(log, a.handle(answer), a.fail)))
	defer server.Close()

	res, err := http.Get(server.URL)
	is.NoErr(err) // the status line and headers arrive
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	server.Close() // waits for the handler, and so for its logs
	return res.StatusCode, string(data), err != nil, buf.String()
}

// unencodable is a value encoding/json refuses.
var unencodable = make(chan int)

func identity(v any) any { return v }

func TestWriteList_ALaterEntryThatFails_CutsTheAnswer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	entries := []any{strings.Repeat("a", 10_000), unencodable}

	status, body, cut, logs := serveAnswer(t, func(w http.ResponseWriter, _ *http.Request) error {
		return writeList(w, http.StatusOK, "entries", entries, identity)
	})

	is.Equal(status, http.StatusOK)                    // the answer had started
	is.True(cut)                                       // the client sees it incomplete
	is.True(!strings.Contains(body, "internal_error")) // and no problem after its first bytes
	is.True(strings.Contains(logs, "connection cut"))  // the server logs why
	is.True(strings.Contains(logs, "encode answer"))   // with the error
}

func TestWriteList_AFirstEntryThatFails_IsAProblem(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	status, body, cut, _ := serveAnswer(t, func(w http.ResponseWriter, _ *http.Request) error {
		return writeList(w, http.StatusOK, "entries", []any{unencodable}, identity)
	})

	is.Equal(status, http.StatusInternalServerError)    // nothing had been written: a 500
	is.True(!cut)                                       // whole
	is.True(strings.Contains(body, `"internal_error"`)) // problem+json
}

func TestWriteJSON_AValueThatFails_IsAProblem(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	status, body, _, _ := serveAnswer(t, func(w http.ResponseWriter, _ *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]any{"a": "b", "c": unencodable})
	})

	is.Equal(status, http.StatusInternalServerError)    // encoding/json writes nothing of a value it cannot encode
	is.True(strings.Contains(body, `"internal_error"`)) // so the answer is a problem
}

func TestWriteList_Shapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		entries []any
		want    string
	}{
		{[]any{}, `{"entries":[]}` + "\n"},
		{nil, `{"entries":[]}` + "\n"},
		{[]any{1}, `{"entries":[1]}` + "\n"},
		{[]any{1, "<&>", map[string]int{"x": 2}}, `{"entries":[1,"<&>",{"x":2}]}` + "\n"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			w := httptest.NewRecorder()

			is.NoErr(writeList(w, http.StatusCreated, "entries", tc.entries, identity))

			is.Equal(w.Code, http.StatusCreated)                         // the status given
			is.Equal(w.Header().Get("Content-Type"), "application/json") // JSON
			is.Equal(w.Body.String(), tc.want)                           // one object, entries as encoding/json spells them, HTML unescaped
		})
	}
}
