package porttest

import (
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// tolerance is how far a duration that a store on a real clock reports (Dequeued.Next, a
// wakeup's After) may stray from the one a store on a manual clock reports exactly: the
// time the calls and the notifications take, on a loaded machine too. The durations the
// tests check are five seconds, well apart from now, and nobody waits for them.
const tolerance = time.Second

// announcedDelay is the delay, or the visibility timeout, whose end the tests of Next and of the
// wakeups expect to be told.
const announcedDelay = 5 * time.Second

// within reports whether got is d, give or take the tolerance.
func within(got, d time.Duration) bool { return got >= d-tolerance && got <= d+tolerance }

// deliveryTests hold the store to the Part 2 rules of enqueue and dequeue: batches, delays,
// what a delivery carries, and when a dequeue may look again.
var deliveryTests = []messageTestCase{
	{"EnqueueBatch_ReturnsIDsInRequestOrder", func(t *testing.T, m *messageTest) {
		messages := []domain.Enqueue{
			m.message(domain.PriorityLow, "a"), m.message(domain.PriorityHigh, "b"), m.message(domain.PriorityMedium, "c"),
		}
		got := m.enqueueBatch(messages...)
		m.is.Equal(got, []domain.ID{messages[0].MessageID, messages[1].MessageID, messages[2].MessageID}) // one ID per entry, in request order
	}},

	{"EnqueueBatch_KeepsArrayOrder", func(t *testing.T, m *messageTest) {
		var messages []domain.Enqueue
		for range 5 {
			messages = append(messages, m.message(domain.PriorityMedium, "in order"))
		}
		want := m.enqueueBatch(messages...)
		m.is.Equal(ids(m.dequeueUpTo(5)), want) // within a batch, enqueue order is array order
	}},

	{"EnqueueBatch_PriorityThenArrayOrder", func(t *testing.T, m *messageTest) {
		low1, high1 := m.message(domain.PriorityLow, "low 1"), m.message(domain.PriorityHigh, "high 1")
		low2, high2 := m.message(domain.PriorityLow, "low 2"), m.message(domain.PriorityHigh, "high 2")
		m.enqueueBatch(low1, high1, low2, high2)
		m.is.Equal(ids(m.dequeueUpTo(4)), []domain.ID{high1.MessageID, high2.MessageID, low1.MessageID, low2.MessageID}) // HIGH first, each priority in array order
	}},

	{"EnqueueBatch_ComesAfterEarlierEnqueues", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "single")
		batch := m.enqueueBatch(m.message(domain.PriorityMedium, "batch 1"), m.message(domain.PriorityMedium, "batch 2"))
		last := m.enqueue(domain.PriorityMedium, "single again")
		m.is.Equal(ids(m.dequeueUpTo(4)), []domain.ID{first, batch[0], batch[1], last}) // a batch takes its place among the other enqueues
	}},

	{"EnqueueBatch_ThousandMessages_AllStored", func(t *testing.T, m *messageTest) {
		messages := make([]domain.Enqueue, domain.MaxEnqueueBatch)
		for i := range messages {
			messages[i] = m.message(domain.Priorities[i%3], "many")
		}
		m.enqueueBatch(messages...)
		m.is.Equal(m.total(ready), int64(domain.MaxEnqueueBatch)) // every message of the largest batch is stored
	}},

	{"DequeueBatch_DeliversUpToMaxInDeliveryOrder", func(t *testing.T, m *messageTest) {
		low := m.enqueue(domain.PriorityLow, "low")
		medium1 := m.enqueue(domain.PriorityMedium, "medium 1")
		high := m.enqueue(domain.PriorityHigh, "high")
		medium2 := m.enqueue(domain.PriorityMedium, "medium 2")
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{high, medium1, medium2}) // at most Max, by priority then enqueue order
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{low})                    // then what is left, fewer than Max
		m.is.Equal(len(m.dequeueUpTo(3)), 0)                                   // then nothing
	}},

	{"DequeueBatch_EachDeliveryHasItsOwnHandle", func(t *testing.T, m *messageTest) {
		for range 3 {
			m.enqueue(domain.PriorityLow, "x")
		}
		deliveries := m.dequeueUpTo(3)
		m.is.Equal(len(deliveries), 3)
		handles := map[domain.ID]bool{}
		for _, d := range deliveries {
			handles[d.ReceiptHandle] = true
			m.is.Equal(d.DeliveryAttempts, 1) // each delivery counts its own attempt
		}
		m.is.Equal(len(handles), 3) // and has its own receipt handle
		for _, d := range deliveries {
			m.is.True(m.acknowledge(d)) // which acknowledges its message
		}
	}},

	{"DequeueBatch_SkipsLeasedDelayedAndExpired", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "leased", withVisibilityTimeout(30*time.Second))
		m.dequeue()
		m.enqueue(domain.PriorityHigh, "delayed", withDelay(30*time.Second))
		m.enqueue(domain.PriorityHigh, "expires", withTTL(time.Second))
		m.Wait(time.Second + margin)
		live := m.enqueue(domain.PriorityLow, "live")
		m.is.Equal(ids(m.dequeueUpTo(10)), []domain.ID{live}) // only the deliverable message, though the others rank higher
	}},

	{"Dequeue_ReturnsAttributesAndTimes", func(t *testing.T, m *messageTest) {
		attributes := domain.Attributes{
			"kind":  {DataType: "String", StringValue: "welcome"},
			"count": {DataType: "Number.int", StringValue: "3"},
			"blob":  {DataType: "Binary", BinaryValue: []byte{0, 1, 0xff}},
		}
		m.enqueue(domain.PriorityHigh, "with attributes", withAttributes(attributes))
		first := m.dequeue()
		m.is.True(first.Attributes.Equal(attributes))               // the attributes come back as they went in
		m.is.True(!first.EnqueuedAt.IsZero())                       // with the enqueue time
		m.is.True(!first.FirstDeliveredAt.Before(first.EnqueuedAt)) // and the first delivery's, not before it
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.is.True(second.Attributes.Equal(attributes))                   // a redelivery carries them too
		m.is.True(second.EnqueuedAt.Equal(first.EnqueuedAt))             // with the same enqueue time
		m.is.True(second.FirstDeliveredAt.Equal(first.FirstDeliveredAt)) // and the first delivery's time, not its own
	}},

	{"Dequeue_WithoutAttributes_HasNone", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "plain")
		m.is.Equal(len(m.dequeue().Attributes), 0) // a message enqueued without attributes has none
	}},

	{"Dequeue_Delayed_NotBeforeItsDelay", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "later", withDelay(time.Second))
		m.dequeueNothing() // not deliverable during its delay
		m.Wait(time.Second + margin)
		d := m.dequeue()
		m.is.Equal(d.MessageID, id)       // deliverable once it ended
		m.is.Equal(d.DeliveryAttempts, 1) // as its first attempt
	}},

	{"Dequeue_DelayEnded_TakesItsEnqueuePlace", func(t *testing.T, m *messageTest) {
		delayed := m.enqueue(domain.PriorityMedium, "delayed", withDelay(time.Second))
		second := m.enqueue(domain.PriorityMedium, "second")
		third := m.enqueue(domain.PriorityMedium, "third")
		d := m.dequeue()
		m.is.Equal(d.MessageID, second) // the delayed message is passed over meanwhile
		m.is.True(m.acknowledge(d))
		m.Wait(time.Second + margin)
		m.is.Equal(ids(m.dequeueUpTo(2)), []domain.ID{delayed, third}) // then it comes in its enqueue place, before the later one
	}},

	{"Dequeue_Delayed_LifetimeCountsFromEnqueue", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "delayed, short-lived", withDelay(time.Second), withTTL(2*time.Second))
		m.Wait(2*time.Second + margin)
		m.dequeueNothing() // it expired two seconds after its enqueue, not after its delay
	}},

	{"EnqueueBatch_MixedDelays_OnlyUndelayedDeliverable", func(t *testing.T, m *messageTest) {
		now1 := m.message(domain.PriorityLow, "now", withVisibilityTimeout(30*time.Second))
		later := m.message(domain.PriorityHigh, "later", withDelay(time.Second))
		now2 := m.message(domain.PriorityLow, "now too", withVisibilityTimeout(30*time.Second))
		m.enqueueBatch(now1, later, now2)
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{now1.MessageID, now2.MessageID}) // the delayed entry waits
		m.Wait(time.Second + margin)
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{later.MessageID}) // until its delay ends
	}},

	{"Dequeue_LeasesEndedOutOfOrder_DeliveredInEnqueueOrder", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "first", withVisibilityTimeout(2*time.Second))
		second := m.enqueue(domain.PriorityMedium, "second", withVisibilityTimeout(time.Second))
		m.is.Equal(ids(m.dequeueUpTo(2)), []domain.ID{first, second})
		third := m.enqueue(domain.PriorityMedium, "third")
		m.Wait(2*time.Second + margin)            // both leases ended, the second's first
		m.is.Equal(m.dequeue().MessageID, first)  // the earliest enqueued goes out first
		m.is.Equal(m.dequeue().MessageID, second) // then the next, whatever the order the leases ended in
		m.is.Equal(m.dequeue().MessageID, third)  // and only then the message that waited in line
	}},

	{"Dequeue_ExpiredLeaseEndedAhead_HoldsBackNoLowerPriority", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "expires after its lease", withTTL(2*time.Second), withVisibilityTimeout(time.Second))
		m.dequeue()
		medium := m.enqueue(domain.PriorityMedium, "redelivered", withVisibilityTimeout(time.Second))
		m.is.Equal(m.dequeue().MessageID, medium)
		m.enqueue(domain.PriorityLow, "in line")
		m.Wait(2*time.Second + margin)            // both leases ended; the high one also expired
		m.is.Equal(m.dequeue().MessageID, medium) // the medium one goes out before the low one
	}},

	{"Dequeue_ExpiredExhausted_NotDeadLettered", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "exhausted and expired", withMaxDeliveryAttempts(1), withTTL(2*time.Second))
		m.dequeue()
		m.Wait(2*time.Second + margin)
		dequeued, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1})
		m.is.NoErr(err)
		m.is.Equal(len(dequeued.Deliveries), 0) // an expired message is not delivered
		m.is.Equal(m.deadLettered(), int64(0))  // nor dead-lettered
		deleted, err := m.Cleaning.DeleteExpired(ctx, m.queueID, 10)
		m.is.NoErr(err)
		m.is.Equal(dequeued.Expired+deleted, 1) // it is deleted, by the claim that met it or by the cleaner
	}},

	{"Dequeue_ManyExhaustedAhead_DeliversTheDeliverableOne", func(t *testing.T, m *messageTest) {
		const exhausted = 300
		messages := make([]domain.Enqueue, exhausted)
		for i := range messages {
			messages[i] = m.message(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		}
		m.enqueueBatch(messages...)
		for delivered := 0; delivered < exhausted; {
			n := len(m.dequeueUpTo(domain.MaxDequeueBatch))
			m.is.True(n > 0) // every poison message is delivered once
			delivered += n
		}
		m.Wait(time.Second + margin)
		live := m.enqueue(domain.PriorityLow, "live")
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1})
		m.is.NoErr(err)
		m.is.Equal(ids(result.Deliveries), []domain.ID{live}) // the first dequeue delivers the live message behind them
		moved := result.DeadLettered
		for range 10 {
			if moved == exhausted {
				break
			}
			result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1})
			m.is.NoErr(err)
			m.is.Equal(len(result.Deliveries), 0) // none of them is ever delivered again
			moved += result.DeadLettered
		}
		m.is.Equal(moved, exhausted)                   // repeated dequeues move them all, and say so
		m.is.Equal(m.deadLettered(), int64(exhausted)) // into dead-letter storage
	}},

	{"Dequeue_ReportsDeadLettered", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "poison 1", withMaxDeliveryAttempts(1))
		m.enqueue(domain.PriorityHigh, "poison 2", withMaxDeliveryAttempts(1))
		m.dequeueUpTo(2)
		m.Wait(time.Second + margin)
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1})
		m.is.NoErr(err)
		m.is.Equal(result.DeadLettered, 2) // the dequeue counts the messages it moved
	}},

	{"Dequeue_Next_DelayedMessage", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "later", withDelay(announcedDelay))
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1, Next: true})
		m.is.NoErr(err)
		m.is.Equal(len(result.Deliveries), 0)
		m.is.True(result.HasNext)                      // a delayed message will become deliverable
		m.is.True(within(result.Next, announcedDelay)) // when its delay ends
	}},

	{"Dequeue_Next_LeasedMessage", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "leased", withVisibilityTimeout(announcedDelay))
		m.dequeue()
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1, Next: true})
		m.is.NoErr(err)
		m.is.True(result.HasNext)                      // a leased message may become deliverable
		m.is.True(within(result.Next, announcedDelay)) // when its lease ends
	}},

	{"Dequeue_Next_EarliestOfDelayedAndLeased", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "later", withDelay(30*time.Second))
		m.enqueue(domain.PriorityLow, "leased", withVisibilityTimeout(announcedDelay))
		m.dequeue()
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1, Next: true})
		m.is.NoErr(err)
		m.is.True(result.HasNext)                      // something will become deliverable
		m.is.True(within(result.Next, announcedDelay)) // the lease that ends first decides
	}},

	{"Dequeue_Next_NothingPending", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "done")
		m.is.True(m.acknowledge(m.dequeue()))
		result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1, Next: true})
		m.is.NoErr(err)
		m.is.True(!result.HasNext) // nothing is delayed or leased: nothing to look again for
	}},

	{"Stats_CountsDelayedApartFromReady", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "delayed", withDelay(time.Second))
		m.enqueue(domain.PriorityLow, "released")
		m.is.True(m.release(m.dequeue(), 30*time.Second))
		m.enqueue(domain.PriorityLow, "ready")
		s := m.stats()
		m.is.Equal(s.Priorities[0].Delayed, int64(1))  // the enqueue delay counts as delayed
		m.is.Equal(s.Priorities[0].Ready, int64(0))    // not as ready
		m.is.Equal(s.Priorities[2].Delayed, int64(1))  // so does a release delay
		m.is.Equal(s.Priorities[2].Ready, int64(1))    // only the undelayed LOW message is ready
		m.is.Equal(s.Priorities[2].InFlight, int64(0)) // a released message is not in flight
		m.Wait(time.Second + margin)
		s = m.stats()
		m.is.Equal(s.Priorities[0].Delayed, int64(0)) // once the delay ended
		m.is.Equal(s.Priorities[0].Ready, int64(1))   // the message is ready
	}},

	{"Stats_ExpiredDelayedMessage_NotCounted", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "short-lived", withTTL(2*time.Second))
		m.is.True(m.release(m.dequeue(), 30*time.Second))
		m.Wait(2*time.Second + margin)
		m.is.Equal(m.total(delayedCount), int64(0)) // an expired message is not delayed
		m.is.Equal(m.total(ready), int64(0))        // nor ready
	}},
}
