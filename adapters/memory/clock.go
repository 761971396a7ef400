package memory

import (
	"sync"
	"time"

	"github.com/retsu/retsu/ports"
)

var _ ports.Clock = (*ManualClock)(nil)

// clockOr returns clock, or the system clock when it is nil.
func clockOr(clock ports.Clock) ports.Clock {
	if clock == nil {
		return ports.SystemClock{}
	}
	return clock
}

// ManualClock is a clock that moves only when told to, for tests.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
