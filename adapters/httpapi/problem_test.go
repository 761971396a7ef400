package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestThrottledWarning_AtMostOnceAPeriod_CountingTheOnesLeftOut(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs bytes.Buffer
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	w := &throttledWarning{log: slog.New(slog.NewJSONHandler(&logs, nil)), every: time.Second, now: func() time.Time { return now }}

	for range 3 {
		w.warn(context.Background(), "timed out")
		now = now.Add(300 * time.Millisecond)
	}
	now = now.Add(100 * time.Millisecond) // a second after the first
	w.warn(context.Background(), "timed out")

	var counts []int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry struct {
			Level     string
			NotLogged int `json:"not_logged"`
		}
		is.NoErr(json.Unmarshal([]byte(line), &entry))
		is.Equal(entry.Level, "WARN") // each a warning
		counts = append(counts, entry.NotLogged)
	}
	is.Equal(counts, []int{0, 2}) // two lines a second apart, the second counting the two left out
}
