package ports

import "time"

// Clock tells the time to the parts of Retsu that keep their own: the service, which times
// outages for its logs, the cleaners, which time their passes, and the memory stores and
// cache, which take every time decision on it. The PostgreSQL adapter uses the database's
// clock instead, so that instances with skewed clocks agree.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless stop is called
	// first; stop reports whether it stopped the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

var _ Clock = SystemClock{}

// SystemClock reads the operating system's clock: the clock of every process that is not a
// test.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc calls f after d, with a timer of package time.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
