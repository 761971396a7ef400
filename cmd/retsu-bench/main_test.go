package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
)

// newMemoryServer serves the Retsu API on the memory stores, as `retsu serve --store=memory`.
func newMemoryServer(t *testing.T, wrap func(http.Handler) http.Handler) *httptest.Server {
	handler := httpapi.NewHandler(app.NewService(app.Ports{
		Queues: memory.NewQueueStore(memory.QueueStoreOptions{}), Messages: memory.NewMessageStore(memory.MessageStoreOptions{}), Cache: memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{}), httpapi.Options{})
	server := httptest.NewServer(wrap(handler))
	t.Cleanup(server.Close)
	return server
}

// runQuickLoad runs a short load against url and returns its result.
func runQuickLoad(t *testing.T, url string) result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "-url", url, "-name", "memory", "-producers", "2", "-consumers", "2",
		"-warmup", "100ms", "-duration", "700ms", "-progress", "200ms", "-out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRun_AgainstACorrectServer_CountsLifecyclesAndNoErrors(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := runQuickLoad(t, newMemoryServer(t, func(h http.Handler) http.Handler { return h }).URL)
	is.Equal(r.Errors, int64(0))                                  // a correct server causes no error
	is.True(r.Lifecycles > 0)                                     // lifecycles are completed
	is.True(r.Operations[opAcknowledge].Requests >= r.Lifecycles) // and each took an acknowledgement
	is.True(r.LifecyclesPerSecond > 0)
}

func TestRun_AgainstAServerThatDeliversTwice_ReportsErrorsAndCountsOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := runQuickLoad(t, newMemoryServer(t, replayEveryFifthDelivery).URL)
	is.True(r.UnknownDeliveries+r.DuplicateDeliveries > 0)       // the replayed deliveries are caught
	is.True(r.Errors > 0)                                        // and reported as errors
	is.True(r.Lifecycles < r.Operations[opAcknowledge].Requests) // and not counted as lifecycles
}

// replayEveryFifthDelivery answers every fifth dequeue with the previous delivery again, as
// a broken store that lost an acknowledgement or a lease would.
func replayEveryFifthDelivery(next http.Handler) http.Handler {
	var mu sync.Mutex
	var last []byte
	dequeues := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/dequeue") {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		dequeues++
		replay := dequeues%5 == 0 && last != nil
		previous := last
		mu.Unlock()
		if replay {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(previous)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK {
			mu.Lock()
			last = rec.Body.Bytes()
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = io.Copy(w, rec.Body)
	})
}

func TestReport_PrintsEachRunWithBothRatiosLast(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	write := func(r result) string {
		path := filepath.Join(dir, r.Name+".json")
		is.NoErr(writeResult(path, r))
		return path
	}
	postgres := write(result{Name: "postgres", LifecyclesPerSecond: 3000})
	memoryRun := write(result{Name: "memory", LifecyclesPerSecond: 4000})
	var stdout bytes.Buffer
	is.NoErr(run(context.Background(), []string{"report", "-ceiling-8", "1500", "-ceiling-32", "2000", postgres, memoryRun}, &stdout, io.Discard))
	lines := strings.Split(stdout.String(), "\n")
	is.True(strings.HasSuffix(strings.TrimSpace(lines[0]), "× ceiling  × memory")) // the ratios are the last columns
	is.True(strings.Contains(stdout.String(), "1,500"))                            // the ceiling's figures are shown
	fields := strings.Fields(findLine(lines, "postgres"))
	is.Equal(fields[len(fields)-2:], []string{"1.50", "0.75"}) // 3000 over the better ceiling, 2000, and over memory's 4000
}

func findLine(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	return ""
}

func TestThousands(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for v, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 1234567: "1,234,567"} {
		is.Equal(thousands(v), want) // whole numbers with thousands separators
	}
}
