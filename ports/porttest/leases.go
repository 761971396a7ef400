package porttest

import (
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
)

// leaseTests hold the store to what a receipt may do with its delivery: acknowledge in
// batches, extend, release and undeliver, and nothing once it lost the lease.
var leaseTests = []messageTestCase{
	{"AcknowledgeBatch_ReportsEachInRequestOrder", func(t *testing.T, m *messageTest) {
		for range 3 {
			m.enqueue(domain.PriorityMedium, "x")
		}
		deliveries := m.dequeueUpTo(3)
		m.is.Equal(len(deliveries), 3)
		unknown := domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}
		removed, err := m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{deliveries[2].Receipt(), unknown, deliveries[0].Receipt()})
		m.is.NoErr(err)
		m.is.Equal(removed, []bool{true, false, true}) // one answer per receipt, in request order
		m.is.Equal(m.total(inFlight), int64(1))        // only the message left out is still in flight
		m.is.True(m.acknowledge(deliveries[1]))        // and acknowledges on its own
	}},

	{"AcknowledgeBatch_SameMessageTwice_OnlyFirstRemoves", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityMedium, "x")
		d := m.dequeue()
		removed, err := m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{d.Receipt(), d.Receipt()})
		m.is.NoErr(err)
		m.is.Equal(removed, []bool{true, false}) // once an entry removed the message, a later one naming it removes nothing
	}},

	{"AcknowledgeBatch_StaleAndCurrentHandle", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityMedium, "x")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		removed, err := m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{first.Receipt(), second.Receipt()})
		m.is.NoErr(err)
		m.is.Equal(removed, []bool{false, true}) // the stale handle removes nothing, the current one removes the message
	}},

	{"Extend_LeaseEndsTimeoutFromNow", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "slow work")
		d := m.dequeue()
		m.is.True(m.extend(d, 2*time.Second)) // the current handle holds the lease
		m.Wait(time.Second + margin)
		m.dequeueNothing() // hidden past the end of its first lease
		m.Wait(time.Second)
		m.is.Equal(m.dequeue().MessageID, id) // and back when the extended lease ends
	}},

	{"Extend_ShorterThanWhatIsLeft_EndsSooner", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "long lease", withVisibilityTimeout(30*time.Second))
		d := m.dequeue()
		m.is.True(m.extend(d, time.Second))
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, id) // the lease ends timeout after the call, not after its old end
	}},

	{"Extend_KeepsHandleAndAttempts", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.extend(d, 3*time.Second))
		m.Wait(time.Second + margin)
		m.is.True(m.extend(d, time.Second)) // the same handle still holds the lease past its first end
		m.Wait(time.Second + margin)
		again := m.dequeue()
		m.is.Equal(again.DeliveryAttempts, 2) // extensions count no attempt
	}},

	{"Extend_HandleStillAcknowledges", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.extend(d, 3*time.Second))
		m.Wait(time.Second + margin)
		m.is.True(m.acknowledge(d)) // the extended delivery's handle acknowledges after the first lease's end
		m.Wait(time.Second)
		m.dequeueNothing() // and the message is gone
	}},

	{"Extend_KeepsTheMessagesOwnVisibilityTimeout", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.extend(d, 2*time.Second))
		m.Wait(2*time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, id)
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, id) // the next delivery lasts the message's own timeout, not the extension's
	}},

	{"Extend_StaleHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.is.True(!m.extend(first, 30*time.Second)) // a stale handle holds no lease
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().DeliveryAttempts, 3) // and extended nothing: the current lease ended on time
		m.is.True(!m.acknowledge(second))           // so the current handle is now late too
	}},

	{"Extend_LateHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.Wait(time.Second + margin)
		m.is.True(!m.extend(d, 30*time.Second)) // a handle whose lease ended holds none
		m.is.Equal(m.dequeue().MessageID, id)   // and hid nothing
	}},

	{"Extend_OtherQueue_LeaseLost", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		held, err := m.Store.Extend(ctx, newID(), d.Receipt(), 30*time.Second)
		m.is.NoErr(err)
		m.is.True(!held) // a receipt used through another queue holds nothing
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, id) // and the lease was not extended
	}},

	{"Extend_UnknownMessageOrHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		m.dequeue()
		held, err := m.Store.Extend(ctx, m.queueID, domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}, time.Minute)
		m.is.NoErr(err)
		m.is.True(!held) // an unknown message is no error, and holds nothing
		held, err = m.Store.Extend(ctx, m.queueID, domain.Receipt{MessageID: id, ReceiptHandle: newID()}, time.Minute)
		m.is.NoErr(err)
		m.is.True(!held) // nor does an invented handle
	}},

	{"Extend_AfterAcknowledge_LeaseLost", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.acknowledge(d))
		m.is.True(!m.extend(d, time.Minute)) // a removed message has no lease to extend
	}},

	{"Release_DeliverableAtOnce_AttemptsUnchanged", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.release(d, 0)) // the current handle holds the lease
		again := m.dequeue()
		m.is.Equal(again.MessageID, id)                             // the message is deliverable at once
		m.is.Equal(again.DeliveryAttempts, 2)                       // the release kept the first attempt, the new delivery counts one
		m.is.True(again.ReceiptHandle != d.ReceiptHandle)           // under a new handle
		m.is.True(again.FirstDeliveredAt.Equal(d.FirstDeliveredAt)) // and the first delivery's time
	}},

	{"Release_KeepsPlaceInLine", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "first")
		second := m.enqueue(domain.PriorityMedium, "second")
		d := m.dequeue()
		m.is.Equal(d.MessageID, first)
		m.is.True(m.release(d, 0))
		m.is.Equal(ids(m.dequeueUpTo(2)), []domain.ID{first, second}) // the released message comes back before the later one
	}},

	{"Release_WithDelay_NotBeforeItsDelay", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		m.is.True(m.release(m.dequeue(), time.Second))
		m.dequeueNothing() // not deliverable during the release delay
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, id) // deliverable once it ended
	}},

	{"Release_WithDelay_KeepsPlaceInLine", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "first")
		second := m.enqueue(domain.PriorityMedium, "second")
		third := m.enqueue(domain.PriorityMedium, "third")
		m.is.True(m.release(m.dequeue(), time.Second))
		d := m.dequeue()
		m.is.Equal(d.MessageID, second) // the others go on meanwhile
		m.is.True(m.acknowledge(d))
		m.Wait(time.Second + margin)
		m.is.Equal(ids(m.dequeueUpTo(2)), []domain.ID{first, third}) // then it comes back in its original place
	}},

	{"Release_HandleNoLongerCurrent", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.True(m.release(d, 30*time.Second))
		m.is.True(!m.acknowledge(d))                // the released handle no longer acknowledges
		m.is.True(!m.extend(d, time.Minute))        // nor extends
		m.is.True(!m.release(d, 0))                 // nor releases again, which would end the delay
		m.is.Equal(m.total(delayedCount), int64(1)) // the message still waits for its delay
	}},

	{"Release_LastAttempt_DeadLetteredByNextDequeue", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		m.is.True(m.release(m.dequeue(), 0))
		m.dequeueNothing()                     // a message that used its attempts is not delivered again
		m.is.Equal(m.deadLettered(), int64(1)) // the dequeue moves it to the dead letters
	}},

	{"Release_StaleHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.is.True(m.extend(second, time.Minute)) // a lease no pause of the machine can outlast
		m.is.True(!m.release(first, 0))          // a stale handle holds no lease
		m.dequeueNothing()                       // and ended nothing: the current delivery still hides the message
		m.is.True(m.acknowledge(second))
	}},

	{"Release_LateHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.Wait(time.Second + margin)
		m.is.True(!m.release(d, 30*time.Second)) // a handle whose lease ended holds none
		m.is.Equal(m.dequeue().MessageID, id)    // and delayed nothing
	}},

	{"Release_OtherQueue_LeaseLost", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		held, err := m.Store.Release(ctx, newID(), d.Receipt(), 0)
		m.is.NoErr(err)
		m.is.True(!held)            // a receipt used through another queue holds nothing
		m.dequeueNothing()          // and the lease still runs
		m.is.True(m.acknowledge(d)) // for its own queue
	}},

	{"Release_UnknownMessageOrHandle_LeaseLost", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		m.dequeue()
		held, err := m.Store.Release(ctx, m.queueID, domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}, 0)
		m.is.NoErr(err)
		m.is.True(!held) // an unknown message is no error, and holds nothing
		held, err = m.Store.Release(ctx, m.queueID, domain.Receipt{MessageID: id, ReceiptHandle: newID()}, 0)
		m.is.NoErr(err)
		m.is.True(!held)   // nor does an invented handle
		m.dequeueNothing() // the lease still runs
	}},

	{"Undeliver_AttemptNotCounted_DeliverableAtOnce", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.undeliver(d)
		again := m.dequeue()
		m.is.Equal(again.MessageID, id)                   // the message is deliverable at once
		m.is.Equal(again.DeliveryAttempts, 1)             // the taken-back attempt did not count
		m.is.True(again.ReceiptHandle != d.ReceiptHandle) // under a new handle
		m.is.True(!m.acknowledge(d))                      // the taken-back handle acknowledges nothing
	}},

	{"Undeliver_LastAttempt_DeliveredAgain", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "x", withMaxDeliveryAttempts(1))
		m.undeliver(m.dequeue())
		m.is.Equal(m.dequeue().MessageID, id)  // a delivery nobody received did not use the only attempt
		m.is.Equal(m.deadLettered(), int64(0)) // so the message is not dead-lettered
	}},

	{"Undeliver_KeepsPlaceInLine", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "first")
		second := m.enqueue(domain.PriorityMedium, "second")
		m.undeliver(m.dequeue())
		m.is.Equal(ids(m.dequeueUpTo(2)), []domain.ID{first, second}) // the taken-back message is first again
	}},

	{"Undeliver_Batch_TakesBackEach", func(t *testing.T, m *messageTest) {
		want := m.enqueueBatch(m.message(domain.PriorityLow, "a"), m.message(domain.PriorityLow, "b"), m.message(domain.PriorityLow, "c"))
		m.undeliver(m.dequeueUpTo(3)...)
		again := m.dequeueUpTo(3)
		m.is.Equal(ids(again), want) // every delivery is taken back, each in its place
		for _, d := range again {
			m.is.Equal(d.DeliveryAttempts, 1) // none charged an attempt
		}
	}},

	{"Undeliver_StaleHandle_ChangesNothing", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.undeliver(first)
		m.dequeueNothing()               // the current delivery still hides the message
		m.is.True(m.acknowledge(second)) // and its handle still acknowledges
	}},

	{"Undeliver_OtherQueue_ChangesNothing", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "x")
		d := m.dequeue()
		m.is.NoErr(m.Store.Undeliver(ctx, newID(), []domain.Receipt{d.Receipt()}))
		m.dequeueNothing()          // a receipt used through another queue takes nothing back
		m.is.True(m.acknowledge(d)) // the delivery still holds the message
	}},
}
