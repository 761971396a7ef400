package porttest

import (
	"errors"
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// lifecycleTests hold the store to a purge and to the deletion of its queue.
var lifecycleTests = []messageTestCase{
	{"Purge_RemovesReadyDelayedAndInFlight", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "in flight")
		m.dequeue()
		m.enqueue(domain.PriorityMedium, "delayed", withDelay(time.Second))
		m.enqueue(domain.PriorityLow, "released")
		m.is.True(m.release(m.dequeue(), time.Second))
		m.enqueue(domain.PriorityLow, "ready")
		purged, err := m.Store.Purge(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.Equal(purged, 4) // every message counts, whatever its state
		m.dequeueNothing()    // nothing is left to deliver
		m.Wait(time.Second + margin)
		m.dequeueNothing()                                                                                            // not even once the delays and the lease ended
		m.is.Equal(m.total(func(p domain.PriorityStats) int64 { return p.Ready + p.Delayed + p.InFlight }), int64(0)) // the queue holds nothing
	}},

	{"Purge_KeepsDeadLetters", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		m.dequeue()
		m.Wait(time.Second + margin)
		m.dequeueNothing()
		m.enqueue(domain.PriorityHigh, "ready")
		purged, err := m.Store.Purge(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.Equal(purged, 1)                  // a dead letter is not a message of the queue
		m.is.Equal(m.deadLettered(), int64(1)) // and stays
	}},

	{"Purge_AcknowledgementOfPurgedDelivery_RemovesNothing", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		_, err := m.Store.Purge(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.True(!m.acknowledge(d))         // the purged delivery acknowledges nothing
		m.is.True(!m.extend(d, time.Minute)) // nor holds a lease
	}},

	{"Purge_MessagesEnqueuedAfterStay", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "before")
		_, err := m.Store.Purge(ctx, m.queueID)
		m.is.NoErr(err)
		after := m.enqueue(domain.PriorityLow, "after")
		m.is.Equal(m.dequeue().MessageID, after) // a message enqueued after the purge stays
	}},

	{"Purge_EmptyQueue_RemovesNothing", func(t *testing.T, m *messageTest) {
		purged, err := m.Store.Purge(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.Equal(purged, 0) // nothing to purge is no error
	}},

	{"Purge_OtherQueuesUntouched", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "mine")
		_, err := m.Store.Purge(ctx, newID())
		m.is.NoErr(err)
		m.is.Equal(m.dequeue().MessageID, id) // a purge removes only its queue's messages
	}},

	{"DeletedQueue_Enqueue_ReturnsQueueNotFound", func(t *testing.T, m *messageTest) {
		m.createQueue(t)
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "before"))
		m.is.NoErr(err)
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		_, err = m.Store.Enqueue(ctx, ports.EnqueueParams{QueueID: m.queueID, Messages: []domain.Enqueue{m.message(domain.PriorityHigh, "after")}})
		m.is.True(errors.Is(err, domain.ErrQueueNotFound)) // the store refuses messages of a deleted queue
		_, err = m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "before"))
		m.is.True(errors.Is(err, domain.ErrQueueNotFound)) // even a replay: the queue is gone
	}},

	{"DeletedQueue_Dequeue_DeliversNothing", func(t *testing.T, m *messageTest) {
		m.createQueue(t)
		m.enqueue(domain.PriorityHigh, "ready")
		m.enqueue(domain.PriorityHigh, "leased")
		m.dequeue()
		m.enqueue(domain.PriorityHigh, "delayed", withDelay(time.Second))
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		dequeued, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 10})
		m.is.NoErr(err)
		m.is.Equal(len(dequeued.Deliveries), 0) // no message of a deleted queue is delivered
		m.is.True(dequeued.Gone)                // and the dequeue learns that the queue is gone
		m.Wait(time.Second + margin)
		m.dequeueNothing() // not when a lease or a delay ends either
	}},

	{"DeletedQueue_Redrive_MovesNothing", func(t *testing.T, m *messageTest) {
		q := m.createQueue(t)
		m.enqueue(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		m.dequeue()
		m.Wait(time.Second + margin)
		m.dequeueNothing()
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		moved, err := m.DeadLetters.Redrive(ctx, q, domain.Redrive{Limit: 10})
		m.is.NoErr(err)
		m.is.Equal(len(moved), 0) // a deleted queue takes no message back
		m.dequeueNothing()
	}},

	{"DeletedQueue_OtherQueuesUntouched", func(t *testing.T, m *messageTest) {
		other := m.queueID
		id := m.enqueue(domain.PriorityHigh, "other queue")
		m.queueID = newID()
		m.createQueue(t)
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		m.queueID = other
		m.is.Equal(m.dequeue().MessageID, id) // deleting a queue leaves the others alone
	}},
}
