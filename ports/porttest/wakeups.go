package porttest

import (
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestWakeups runs the Wakeups contract over the harness's Store, whose changes send the
// wakeups, and its Wakeups. A store on a real clock may send them asynchronously (a
// PostgreSQL store hears them back through LISTEN), so the tests wait up to wakeupTimeout
// for each, and hold the store only to what every store can promise: a wakeup for the queue
// comes, with an After within the tolerance.
func TestWakeups(t *testing.T, newHarness func(t *testing.T) MessageHarness) {
	runMessageTests(t, newHarness, wakeupTests)
}

// wakeupTimeout is how long a test waits for a wakeup, on the test's own clock.
const wakeupTimeout = 2 * time.Second

// quietPeriod is how long a test listens for wakeups that must not come.
const quietPeriod = 200 * time.Millisecond

// wakeups are the wakeups of one queue that a subscription received.
type wakeups chan ports.Wakeup

// listen subscribes to the wakeups of the test's queue until the test ends.
func (m *messageTest) listen(t *testing.T) wakeups {
	t.Helper()
	received := make(wakeups, 1024)
	cancel := m.Wakeups.Subscribe(func(w ports.Wakeup) {
		if w.QueueID != m.queueID {
			return
		}
		select {
		case received <- w:
		default: // never block the store; a test that misses one times out
		}
	})
	t.Cleanup(cancel)
	return received
}

// await returns the first wakeup that ok accepts, waiting up to wakeupTimeout for it.
func (w wakeups) await(ok func(ports.Wakeup) bool) (ports.Wakeup, bool) {
	timeout := time.After(wakeupTimeout)
	for {
		select {
		case wakeup := <-w:
			if ok(wakeup) {
				return wakeup, true
			}
		case <-timeout:
			return ports.Wakeup{}, false
		}
	}
}

// immediate accepts a wakeup that says "look now".
func immediate(w ports.Wakeup) bool { return w.After <= tolerance }

// after accepts a wakeup that says "look in d".
func after(d time.Duration) func(ports.Wakeup) bool {
	return func(w ports.Wakeup) bool { return within(w.After, d) }
}

var wakeupTests = []messageTestCase{
	{"Wakeup_Enqueue_Now_CountsTheMessages", func(t *testing.T, m *messageTest) {
		received := m.listen(t)
		m.enqueueBatch(m.message(domain.PriorityLow, "a"), m.message(domain.PriorityLow, "b"), m.message(domain.PriorityLow, "c"))
		counted, unknown := 0, false
		for counted < 3 && !unknown {
			w, ok := received.await(immediate)
			m.is.True(ok) // an enqueue wakes the queue's waiters at once
			counted += w.Count
			unknown = w.Count == 0
		}
		quiet := time.After(quietPeriod)
		for done := false; !done && !unknown; {
			select {
			case w := <-received:
				if immediate(w) {
					counted += w.Count
					unknown = w.Count == 0
				}
			case <-quiet:
				done = true
			}
		}
		m.is.True(unknown || counted == 3) // for the three messages it stored, no fewer and no more
	}},

	{"Wakeup_DelayedEnqueue_AfterItsDelay", func(t *testing.T, m *messageTest) {
		received := m.listen(t)
		m.enqueue(domain.PriorityLow, "later", withDelay(announcedDelay))
		_, ok := received.await(after(announcedDelay))
		m.is.True(ok) // a delayed enqueue wakes the queue's waiters when its delay ends
	}},

	{"Wakeup_Dequeue_WhenTheLeaseMayEnd", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "leased", withVisibilityTimeout(announcedDelay))
		received := m.listen(t)
		m.dequeue()
		_, ok := received.await(after(announcedDelay))
		m.is.True(ok) // a delivery wakes the queue's waiters when its lease may end unacknowledged
	}},

	{"Wakeup_Extend_WhenTheNewLeaseMayEnd", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "extended", withVisibilityTimeout(30*time.Second))
		d := m.dequeue()
		received := m.listen(t)
		m.is.True(m.extend(d, announcedDelay))
		_, ok := received.await(after(announcedDelay))
		m.is.True(ok) // an extension, which may shorten a lease, wakes them when the new lease may end
	}},

	{"Wakeup_Release_Now", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "released", withVisibilityTimeout(30*time.Second))
		d := m.dequeue()
		received := m.listen(t)
		m.is.True(m.release(d, 0))
		_, ok := received.await(immediate)
		m.is.True(ok) // a release wakes the queue's waiters at once
	}},

	{"Wakeup_ReleaseWithDelay_AfterTheDelay", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "released", withVisibilityTimeout(30*time.Second))
		d := m.dequeue()
		received := m.listen(t)
		m.is.True(m.release(d, announcedDelay))
		_, ok := received.await(after(announcedDelay))
		m.is.True(ok) // a release with a delay wakes them when the delay ends
	}},

	{"Wakeup_Undeliver_Now", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "taken back", withVisibilityTimeout(30*time.Second))
		d := m.dequeue()
		received := m.listen(t)
		m.undeliver(d)
		_, ok := received.await(immediate)
		m.is.True(ok) // an undelivery wakes the queue's waiters at once
	}},

	{"Wakeup_Redrive_Now", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityLow, "redriven")
		m.deadLetter(e)
		received := m.listen(t)
		m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		_, ok := received.await(immediate)
		m.is.True(ok) // a redrive wakes the queue's waiters at once
	}},

	{"Subscribe_Cancel_StopsWakeups", func(t *testing.T, m *messageTest) {
		received := make(chan ports.Wakeup, 16)
		cancel := m.Wakeups.Subscribe(func(w ports.Wakeup) {
			if w.QueueID == m.queueID {
				select {
				case received <- w:
				default:
				}
			}
		})
		cancel()
		m.enqueue(domain.PriorityLow, "unheard")
		select {
		case <-received:
			t.Fatal("a cancelled subscription received a wakeup")
		case <-time.After(quietPeriod):
		}
	}},
}
