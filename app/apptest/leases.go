package apptest

import (
	"errors"
	"testing"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// leaseTests cover what a receipt does with its delivery: acknowledge, extend, release,
// and nothing once it lost the lease.
var leaseTests = []testCase{
	{"AcknowledgeMessages_ReportsEachInRequestOrder", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityLow, "a"), message(domain.PriorityLow, "b"), message(domain.PriorityLow, "c"))
		d := r.dequeue(q, 3)
		unknown := domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}
		removed, err := r.AcknowledgeMessages(ctx, q.ID, []domain.Receipt{d[2].Receipt(), unknown, d[0].Receipt(), d[0].Receipt()})
		r.is.NoErr(err)
		r.is.Equal(removed, []bool{true, false, true, false}) // one answer per receipt in order; a second entry for a removed message removes nothing
		r.is.Equal(r.counts(q), counts{inFlight: 1})          // only the message left out is still there
		r.is.True(r.acknowledge(q, d[1]))                     // and its receipt still acknowledges it
	}},

	{"AcknowledgeMessages_BatchSize_InvalidBatchSize", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		_, err := r.AcknowledgeMessages(ctx, q.ID, nil)
		r.is.Equal(codeOf(err), domain.CodeInvalidBatchSize) // at least one receipt
	}},

	{"Extend_LeaseOutlivesTheVisibilityTimeout", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings) // a one-second visibility timeout
		r.enqueue(q, message(domain.PriorityHigh, "slow work"))
		d := r.dequeueOne(q)
		r.is.NoErr(r.Extend(ctx, q.ID, d.Receipt(), 3*time.Second))
		time.Sleep(time.Second + margin)
		r.is.Equal(len(r.dequeue(q, 1)), 0) // still hidden past the end of its first lease
		r.is.True(r.acknowledge(q, d))      // and the same handle still acknowledges it
	}},

	{"Extend_AfterTheLeaseEnded_LeaseLost", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityHigh, "x"))
		d := r.dequeueOne(q)
		r.is.True(r.acknowledge(q, d))
		err := r.Extend(ctx, q.ID, d.Receipt(), time.Minute)
		r.is.True(errors.Is(err, domain.ErrLeaseLost)) // the handle of a removed message holds no lease
		unknown := domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}
		r.is.Equal(codeOf(r.Extend(ctx, q.ID, unknown, time.Minute)), domain.CodeLeaseLost) // nor does one of an unknown message
	}},

	{"Extend_TimeoutOutOfRange_InvalidVisibilityTimeout", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityHigh, "x"))
		d := r.dequeueOne(q)
		for _, timeout := range []time.Duration{0, 1500 * time.Millisecond, domain.MaxLeaseExtension + time.Second} {
			r.is.Equal(codeOf(r.Extend(ctx, q.ID, d.Receipt(), timeout)), domain.CodeInvalidVisibilityTimeout) // 1 s to 12 h in whole seconds
		}
	}},

	{"Release_BackInItsPlace_AttemptsUnchanged", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		first := r.enqueue(q, message(domain.PriorityMedium, "first"), message(domain.PriorityMedium, "second"))[0]
		d := r.dequeueOne(q)
		r.is.NoErr(r.Release(ctx, q.ID, d.Receipt(), 0))
		again := r.dequeueOne(q)
		r.is.Equal(again.MessageID, first)                // back at once, before the message enqueued after it
		r.is.Equal(again.DeliveryAttempts, 2)             // its release used no attempt; this delivery does
		r.is.True(again.ReceiptHandle != d.ReceiptHandle) // under a new handle
		err := r.Release(ctx, q.ID, d.Receipt(), 0)
		r.is.True(errors.Is(err, domain.ErrLeaseLost)) // the released handle holds nothing any more
	}},

	{"Release_Delay_DeliverableAfterIt", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings)
		r.enqueue(q, message(domain.PriorityMedium, "retry later"))
		d := r.dequeueOne(q)
		r.is.NoErr(r.Release(ctx, q.ID, d.Receipt(), time.Second))
		r.is.Equal(len(r.dequeue(q, 1)), 0)         // not before its delay
		r.is.Equal(r.counts(q), counts{delayed: 1}) // counted as delayed
		deliveries, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 1, Wait: 5 * time.Second})
		r.is.NoErr(err)
		r.is.Equal(ids(deliveries), []domain.ID{d.MessageID}) // and back once it ended, waking the waiting dequeue
	}},

	{"Release_DelayOutOfRange_InvalidDelay", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityHigh, "x"))
		d := r.dequeueOne(q)
		for _, delay := range []time.Duration{-time.Second, domain.MaxReleaseDelay + time.Second} {
			r.is.Equal(codeOf(r.Release(ctx, q.ID, d.Receipt(), delay)), domain.CodeInvalidDelay) // 0 to 12 h
		}
	}},
}
