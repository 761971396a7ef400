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

// ManualClock is a clock that moves only when told to, for tests. Its AfterFunc calls fire
// when Advance moves the clock to or past their moment.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f in its own goroutine once Advance has moved the clock d past now.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := !t.stopped
		t.stopped = true
		return stopped
	}
}

// Advance moves the clock forward by d and fires the timers that came due, in no set order.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !c.now.Before(t.at):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		go t.f()
	}
}

// Timers returns how many AfterFunc calls are waiting for their moment, so that a test can
// tell that the code it drives is waiting before it moves the clock.
func (c *ManualClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}
