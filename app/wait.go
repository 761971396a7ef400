package app

import (
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// waitRoom holds the dequeues that wait for a message, by queue, and wakes them when one may
// have become deliverable: on a wakeup from the stores (ports.Wakeups), and on a timer set
// to the next moment a delayed or leased message becomes deliverable. A waiting dequeue holds
// no database connection; it costs a goroutine and a channel until it is woken, and only the
// dequeues it wakes ask the store again, one per message that may have come.
//
// The room subscribes to the wakeups only while dequeues wait, and for wakeupLinger after the
// last one left: wakeups serve nothing else, and they are not free (a PostgreSQL store holds a
// connection that LISTENs, and every notification of every instance wakes it). Once a new
// subscription is in place, every wait asks again: what committed between its first ask and
// the subscription sent its wakeup to nobody.
type waitRoom struct {
	clock   ports.Clock
	wakeups ports.Wakeups // nil: none, the waits end on their timers and deadlines alone

	mu     sync.Mutex
	queues map[domain.ID]*queueWaits
	closed bool
	// done is closed by close: every wait ends.
	done chan struct{}
	// subscribed is set while a subscription is being made or is in place; unsubscribe,
	// once it is in place, cancels it; stopLinger, while no dequeue waits, stops the timer
	// that cancels it then, lingers counts those timers, so that one stopped too late knows.
	subscribed  bool
	unsubscribe func()
	stopLinger  func() bool
	lingers     int
	// subscribing counts the subscribe goroutines, so that close returns after them.
	subscribing sync.WaitGroup
}

// wakeupLinger is how long the room keeps its subscription after the last waiting dequeue
// left: workers that long-poll come back within moments, and each new subscription costs a
// LISTEN and one more ask of every wait.
const wakeupLinger = 30 * time.Second

// queueWaits are the waits of one queue, in arrival order, and its timer.
type queueWaits struct {
	waits []*wait
	// timerAt is when the timer fires, zero without one; stopTimer stops it.
	timerAt   time.Time
	stopTimer func() bool
}

// wait is one waiting dequeue.
type wait struct {
	queueID domain.ID
	// want is how many messages the dequeue takes.
	want int
	// woken receives a signal when the dequeue should ask the store again.
	woken chan struct{}
	// asking is set while the dequeue asks the store, so that a wakeup goes to one that is
	// not already asking; again, when a wakeup came meanwhile, which that ask may have
	// missed, so that the dequeue asks once more.
	asking, again bool
}

func newWaitRoom(clock ports.Clock, wakeups ports.Wakeups) *waitRoom {
	return &waitRoom{clock: clock, wakeups: wakeups, queues: map[domain.ID]*queueWaits{}, done: make(chan struct{})}
}

// enter adds a wait for up to want messages of the queue, first asking (its dequeue asks
// the store right away). It returns nil when the room is closed.
func (r *waitRoom) enter(queueID domain.ID, want int) *wait {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	w := &wait{queueID: queueID, want: want, woken: make(chan struct{}, 1), asking: true}
	if r.stopLinger != nil {
		r.stopLinger()
		r.stopLinger = nil
	}
	if !r.subscribed && r.wakeups != nil {
		r.subscribed = true
		r.subscribing.Go(r.subscribe)
	}
	q := r.queues[queueID]
	if q == nil {
		q = &queueWaits{}
		r.queues[queueID] = q
	}
	q.waits = append(q.waits, w)
	return w
}

// leave removes w. A wakeup that w was given but did not use, since its dequeue ended
// first, goes to the next wait of the queue.
func (r *waitRoom) leave(w *wait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[w.queueID]
	if q == nil {
		return
	}
	r.removeLocked(q, w)
	if len(w.woken) > 0 {
		r.wakeLocked(q, 1)
	}
	if len(q.waits) == 0 {
		if q.stopTimer != nil {
			q.stopTimer()
		}
		delete(r.queues, w.queueID)
		if len(r.queues) == 0 {
			r.lingerLocked()
		}
	}
}

// subscribe subscribes the room to the wakeups, then makes every wait ask again.
func (r *waitRoom) subscribe() {
	unsubscribe := r.wakeups.Subscribe(r.notify)
	r.notify(ports.Wakeup{})
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		unsubscribe()
		return
	}
	r.unsubscribe = unsubscribe
	if len(r.queues) == 0 {
		r.lingerLocked()
	}
	r.mu.Unlock()
}

// lingerLocked starts the timer that cancels the subscription wakeupLinger from now, when
// one is in place and no timer runs; enter stops it.
func (r *waitRoom) lingerLocked() {
	if r.unsubscribe == nil || r.stopLinger != nil {
		return
	}
	r.lingers++
	linger := r.lingers
	r.stopLinger = r.clock.AfterFunc(wakeupLinger, func() {
		r.mu.Lock()
		if r.stopLinger == nil || r.lingers != linger || r.closed {
			r.mu.Unlock() // stopped too late: a dequeue came meanwhile
			return
		}
		unsubscribe := r.unsubscribe
		r.unsubscribe, r.stopLinger, r.subscribed = nil, nil, false
		r.mu.Unlock()
		unsubscribe()
	})
}

// asked records that w's dequeue asked the store and got got messages: it waits again. A
// dequeue that got all it wanted leaves, and may have left more behind, so the next wait
// of the queue asks in turn, also for a wakeup that came during w's ask; next, when
// hasNext, is when a message not deliverable now may become so.
func (r *waitRoom) asked(w *wait, got int, next time.Duration, hasNext bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[w.queueID]
	if q == nil {
		return
	}
	w.asking = false
	if hasNext {
		// Also when w leaves with what it got: the timer that woke it is spent, and the waits
		// that stay need the queue's next moment.
		r.scheduleLocked(w.queueID, q, next)
	}
	if got >= w.want && got > 0 {
		// w is done: out of the line first, so that the turn it passes on is not its own.
		r.removeLocked(q, w)
		r.wakeLocked(q, 1)
		return
	}
	if w.again {
		w.again = false
		r.wakeOneLocked(w)
	}
}

// wakeQueue makes every wait of the queue ask again.
func (r *waitRoom) wakeQueue(queueID domain.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.queues[queueID]; q != nil {
		r.wakeLocked(q, 0)
	}
}

// removeLocked takes w out of the queue's waits, if it is there.
func (r *waitRoom) removeLocked(q *queueWaits, w *wait) {
	for i, other := range q.waits {
		if other == w {
			q.waits = append(q.waits[:i], q.waits[i+1:]...)
			return
		}
	}
}

// notify handles a wakeup from the stores.
func (r *waitRoom) notify(wakeup ports.Wakeup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if wakeup.QueueID.IsZero() {
		for _, q := range r.queues {
			r.wakeLocked(q, 0)
		}
		return
	}
	q := r.queues[wakeup.QueueID]
	if q == nil {
		return
	}
	if wakeup.After > 0 {
		r.scheduleLocked(wakeup.QueueID, q, wakeup.After)
		return
	}
	r.wakeLocked(q, wakeup.Count)
}

// wakeLocked wakes the first waits that are not asking, enough to take count messages, or
// every one when count is 0. The waits that are asking are told to ask again, since their
// ask may have looked before the messages came; they do not count.
func (r *waitRoom) wakeLocked(q *queueWaits, count int) {
	for _, w := range q.waits {
		if w.asking {
			w.again = true
			continue
		}
		r.wakeOneLocked(w)
		if count > 0 {
			if count -= w.want; count <= 0 {
				return
			}
		}
	}
}

// wakeOneLocked makes w ask again.
func (r *waitRoom) wakeOneLocked(w *wait) {
	w.asking = true
	w.woken <- struct{}{} // never blocks: a wait is woken once per ask, and drains it to ask
}

// scheduleLocked sets the queue's timer to fire after d, unless it fires sooner already.
// When it fires, one wait asks; if it finds as many messages as it wanted, the next asks.
func (r *waitRoom) scheduleLocked(queueID domain.ID, q *queueWaits, d time.Duration) {
	at := r.clock.Now().Add(d)
	if !q.timerAt.IsZero() && !q.timerAt.After(at) {
		return
	}
	if q.stopTimer != nil {
		q.stopTimer()
	}
	q.timerAt = at
	q.stopTimer = r.clock.AfterFunc(d, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if current := r.queues[queueID]; current == q && q.timerAt.Equal(at) {
			q.timerAt, q.stopTimer = time.Time{}, nil
			r.wakeLocked(q, 1)
		}
	})
}

// close ends every wait, refuses new ones and cancels the subscription, and returns once a
// subscription still being made is cancelled too. It cancels outside the room's lock: a
// store's cancel may wait for a notify in progress, which takes that lock.
func (r *waitRoom) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	close(r.done)
	for _, q := range r.queues {
		if q.stopTimer != nil {
			q.stopTimer()
		}
	}
	if r.stopLinger != nil {
		r.stopLinger()
	}
	unsubscribe := r.unsubscribe
	r.unsubscribe = nil
	r.mu.Unlock()
	if unsubscribe != nil {
		unsubscribe()
	}
	r.subscribing.Wait() // a subscribe that finishes after closed cancels its own
}
