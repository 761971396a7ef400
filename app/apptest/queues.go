package apptest

import (
	"errors"
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// queueTests cover the life of a queue: creation, reading, listing, updates, deletion,
// purge and statistics.
var queueTests = []testCase{
	{"CreateQueue_DefaultsForWhatIsNotSupplied", func(t *testing.T, r *retsuTest) {
		name := uniqueName("defaults")
		q, err := r.CreateQueue(ctx, domain.NewQueue{Name: name, SettingsUpdate: domain.SettingsUpdate{MaxDeliveryAttempts: new(3)}})
		r.is.NoErr(err)
		r.is.True(!q.ID.IsZero())                                        // the queue has an ID
		r.is.Equal(q.Name, name)                                         // and its name
		r.is.Equal(q.MaxDeliveryAttempts, 3)                             // the supplied setting
		r.is.Equal(q.VisibilityTimeout, domain.DefaultVisibilityTimeout) // and the defaults of the others
		r.is.Equal(q.DefaultMessageTTL, domain.DefaultMessageTTL)
	}},

	{"CreateQueue_NameTaken_QueueAlreadyExists", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		_, err := r.CreateQueue(ctx, domain.NewQueue{Name: q.Name})
		r.is.Equal(codeOf(err), domain.CodeQueueAlreadyExists)  // names are unique
		r.is.True(errors.Is(err, domain.ErrQueueAlreadyExists)) // and the sentinel matches
	}},

	{"Queue_ReturnsCurrentSettings", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings)
		got, err := r.Queue(ctx, q.ID)
		r.is.NoErr(err)
		r.is.Equal(got, q) // the queue as created
	}},

	{"ListQueues_OrderedByName_PagedByAfterAndLimit", func(t *testing.T, r *retsuTest) {
		prefix := uniqueName("list")
		for _, suffix := range []string{"c", "a", "b"} {
			_, err := r.CreateQueue(ctx, domain.NewQueue{Name: prefix + "-" + suffix})
			r.is.NoErr(err)
		}
		first, err := r.ListQueues(ctx, ports.ListQueuesParams{After: prefix, Limit: 2})
		r.is.NoErr(err)
		r.is.Equal(names(first), []string{prefix + "-a", prefix + "-b"}) // ordered by name, limit per page
		next, err := r.ListQueues(ctx, ports.ListQueuesParams{After: prefix + "-b", Limit: 1})
		r.is.NoErr(err)
		r.is.Equal(names(next), []string{prefix + "-c"}) // the next page starts after the cursor
	}},

	{"ListQueues_Name_KeepsTheExactMatch", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		got, err := r.ListQueues(ctx, ports.ListQueuesParams{Name: new(q.Name)})
		r.is.NoErr(err)
		r.is.Equal(got, []domain.Queue{q}) // the queue of that name
		none, err := r.ListQueues(ctx, ports.ListQueuesParams{Name: new(q.Name + "x")})
		r.is.NoErr(err)
		r.is.Equal(len(none), 0) // and nothing for a name no queue has
	}},

	{"ListQueues_EmptyName_KeepsNone", func(t *testing.T, r *retsuTest) {
		r.queue(domain.SettingsUpdate{})
		none, err := r.ListQueues(ctx, ports.ListQueuesParams{Name: new("")})
		r.is.NoErr(err)
		r.is.Equal(len(none), 0) // no queue is named "": the empty name is a name, not an absent filter
		all, err := r.ListQueues(ctx, ports.ListQueuesParams{})
		r.is.NoErr(err)
		r.is.True(len(all) > 0) // without a name, every queue
	}},

	{"UpdateQueue_ChangesOnlySuppliedSettings", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings)
		got, err := r.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{VisibilityTimeout: new(45 * time.Second)})
		r.is.NoErr(err)
		want := q
		want.VisibilityTimeout = 45 * time.Second
		r.is.Equal(got, want) // the complete queue, with only that setting changed
		read, err := r.Queue(ctx, q.ID)
		r.is.NoErr(err)
		r.is.Equal(read, want) // and it stays changed
	}},

	{"DeleteQueue_GoneForEveryUseCase_NameFree", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityHigh, "left behind"))
		r.is.NoErr(r.DeleteQueue(ctx, q.ID))
		_, err := r.Queue(ctx, q.ID)
		r.is.Equal(codeOf(err), domain.CodeQueueNotFound) // the queue is gone
		_, err = r.DequeueMessages(ctx, dequeueParams(q, 1))
		r.is.Equal(codeOf(err), domain.CodeQueueNotFound)                      // and so are its messages
		r.is.Equal(codeOf(r.DeleteQueue(ctx, q.ID)), domain.CodeQueueNotFound) // a second deletion finds nothing
		again, err := r.CreateQueue(ctx, domain.NewQueue{Name: q.Name})
		r.is.NoErr(err)                          // the name is free at once
		r.is.True(again.ID != q.ID)              // for a new queue
		r.is.Equal(len(r.dequeue(again, 10)), 0) // which holds none of the old one's messages
	}},

	{"PurgeQueue_RemovesReadyDelayedAndInFlight_KeepsDeadLetters", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		r.deadLetter(q, message(domain.PriorityHigh, "dead"))
		r.enqueue(q, message(domain.PriorityHigh, "flying"))
		flying := r.dequeueOne(q)
		delayed := message(domain.PriorityLow, "later")
		delayed.Delay = new(time.Minute)
		r.enqueue(q, message(domain.PriorityMedium, "ready"), delayed)
		n, err := r.PurgeQueue(ctx, q.ID)
		r.is.NoErr(err)
		r.is.Equal(n, 3)                                 // the ready, the delayed and the in-flight message
		r.is.Equal(r.counts(q), counts{deadLettered: 1}) // the dead letter stays
		r.is.True(!r.acknowledge(q, flying))             // the purged delivery's acknowledgement removes nothing
		r.enqueue(q, message(domain.PriorityLow, "after"))
		r.is.Equal(payloads(r.dequeue(q, 10)), []string{"after"}) // messages enqueued after the purge stay
	}},

	{"Stats_CountsEachStateByPriority", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		r.enqueue(q, message(domain.PriorityLow, "flying"))
		r.dequeueOne(q)
		r.deadLetter(q, message(domain.PriorityHigh, "dead"))
		delayed := message(domain.PriorityMedium, "later")
		delayed.Delay = new(time.Minute)
		r.enqueue(q, message(domain.PriorityHigh, "ready"), delayed)
		stats := r.stats(q)
		high, medium, low := stats.Priorities[0], stats.Priorities[1], stats.Priorities[2]
		r.is.Equal([]domain.Priority{high.Priority, medium.Priority, low.Priority}, domain.Priorities[:]) // every priority, in delivery order
		r.is.Equal([]int64{high.Ready, high.DeadLettered}, []int64{1, 1})                                 // HIGH: one ready, one dead letter
		r.is.Equal([]int64{medium.Ready, medium.Delayed}, []int64{0, 1})                                  // MEDIUM: the delayed message is not ready
		r.is.Equal([]int64{low.Ready, low.InFlight}, []int64{0, 1})                                       // LOW: one in flight
	}},
}

// names returns the names of queues.
func names(queues []domain.Queue) []string {
	out := make([]string, len(queues))
	for i, q := range queues {
		out[i] = q.Name
	}
	return out
}
