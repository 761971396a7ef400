package ports

import (
	"time"

	"github.com/retsu/retsu/domain"
)

// Wakeups tells the core when queues may have deliverable messages, so that dequeues that
// wait for one look again then, instead of polling. A store sends a wakeup for every change
// that makes messages deliverable now or later: an enqueue (now, counting the messages
// deliverable at once, and After the shortest delay of the others), a release (After its
// delay), an undelivery and a redrive (now), a dequeue that delivered (After the visibility
// timeout, when a lease may end unacknowledged), and an extension (After its timeout, since
// it may shorten a lease). A PostgreSQL store hears those of every instance on the database,
// a moment later, and also sends one when a queue is deleted, whose waiting dequeues then
// find it gone.
type Wakeups interface {
	// Subscribe calls notify with every wakeup of what commits after it returns, one call at
	// a time, until the returned cancel is called. notify must not block. A wakeup with a
	// zero QueueID says that some may have been lost (the store had to reconnect): every
	// waiter should look again.
	Subscribe(notify func(Wakeup)) (cancel func())
}

// Wakeup says that up to Count messages of a queue may become deliverable After from now.
type Wakeup struct {
	QueueID domain.ID
	// After is how long from now; zero or less is now.
	After time.Duration
	// Count is how many messages; 0 means unknown.
	Count int
}
