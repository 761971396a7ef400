package memory

import (
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// wakeups sends a MessageStore's wakeups to its subscribers. The store gathers them under
// its lock and sends them after it, so that no subscriber runs while the store is locked.
type wakeups struct {
	pending []ports.Wakeup // under the store's mu

	subscribersMu sync.Mutex
	subscribers   map[int]func(ports.Wakeup)
	nextID        int
	// sending orders the sends of concurrent calls, one call at a time.
	sending sync.Mutex
}

// Subscribe calls notify with every wakeup from now on, until cancel is called.
func (w *wakeups) Subscribe(notify func(ports.Wakeup)) (cancel func()) {
	w.subscribersMu.Lock()
	defer w.subscribersMu.Unlock()
	if w.subscribers == nil {
		w.subscribers = map[int]func(ports.Wakeup){}
	}
	id := w.nextID
	w.nextID++
	w.subscribers[id] = notify
	return func() {
		w.subscribersMu.Lock()
		defer w.subscribersMu.Unlock()
		delete(w.subscribers, id)
	}
}

// wake gathers a wakeup for count messages of the queue after d, when count is positive.
// Called with the store's mu held.
func (w *wakeups) wake(queueID domain.ID, after time.Duration, count int) {
	if count > 0 {
		w.pending = append(w.pending, ports.Wakeup{QueueID: queueID, After: after, Count: count})
	}
}

// flush sends the gathered wakeups. It is deferred before the store's unlock, so that it
// runs after it; it takes the pending ones under the lock.
func (s *MessageStore) flush() {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	s.sending.Lock()
	defer s.sending.Unlock()
	s.subscribersMu.Lock()
	notify := make([]func(ports.Wakeup), 0, len(s.subscribers))
	for _, f := range s.subscribers {
		notify = append(notify, f)
	}
	s.subscribersMu.Unlock()
	for _, w := range pending {
		for _, f := range notify {
			f(w)
		}
	}
}
