package app

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retsu/retsu/ports"
)

// outageQuietPeriod is the least time between two warnings about one dependency, so that
// a dependency that fails and recovers many times a second (a flapping network, backends
// terminated in a loop) is not logged on every flap.
const outageQuietPeriod = time.Minute

// outageLog logs the outages of one dependency: a warning when its calls start failing and
// a line when they work again. A warning that comes within outageQuietPeriod of the
// previous one is left out, with its end, and the next warning counts those left out.
// Calls that succeed while nothing fails cost one atomic load.
type outageLog struct {
	log        *slog.Logger
	clock      ports.Clock
	down, back string // the messages

	failing atomic.Bool
	mu      sync.Mutex
	// The state of the current or latest outage, under mu.
	started   time.Time
	warned    bool
	warnedAt  time.Time
	notLogged int // outages left out since the last warning
}

// failed notes a failed call, logging err with attrs when it starts an outage that is to
// be logged.
func (o *outageLog) failed(err error, attrs ...any) {
	if o.failing.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.failing.CompareAndSwap(false, true) {
		return
	}
	o.started = o.clock.Now()
	o.warned = o.warnedAt.IsZero() || o.started.Sub(o.warnedAt) >= outageQuietPeriod
	if !o.warned {
		o.notLogged++
		return
	}
	o.warnedAt = o.started
	if o.notLogged > 0 {
		attrs = append(attrs, "outages_not_logged", o.notLogged)
		o.notLogged = 0
	}
	o.log.Warn(o.down, append(attrs, "err", err)...)
}

// succeeded notes a call that worked, logging the end of a logged outage.
func (o *outageLog) succeeded() {
	if !o.failing.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.failing.CompareAndSwap(true, false) || !o.warned {
		return
	}
	o.log.Info(o.back, "outage", o.clock.Now().Sub(o.started))
}
