package domain_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// now is the instant every delivery rule is evaluated at; the rules never read a clock.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Receipt handles of two deliveries of the same message.
var (
	firstHandle  = domain.ID{0xa1}
	secondHandle = domain.ID{0xb2}
)

// enqueuedAt is when the messages of these tests were stored, and firstDeliveredAt when
// the delivered ones were first delivered.
var (
	enqueuedAt       = now.Add(-time.Hour)
	firstDeliveredAt = now.Add(-time.Minute)
)

// waiting returns a never-delivered message that expires at expiresAt, deliverable since
// its enqueue.
func waiting(expiresAt time.Time) domain.Message {
	return domain.Message{
		QueueID:             domain.ID{1},
		ID:                  domain.ID{2},
		Seq:                 7,
		Priority:            domain.PriorityMedium,
		Payload:             "send welcome email",
		Attributes:          domain.Attributes{"trace": {DataType: "String", StringValue: "abc"}},
		EnqueuedAt:          enqueuedAt,
		ExpiresAt:           expiresAt,
		VisibleAt:           enqueuedAt,
		MaxDeliveryAttempts: 5,
		VisibilityTimeout:   30 * time.Second,
	}
}

// delayed returns a never-delivered message that expires at expiresAt and waits for a delay
// that ends at visibleAt.
func delayed(expiresAt, visibleAt time.Time) domain.Message {
	m := waiting(expiresAt)
	m.VisibleAt = visibleAt
	return m
}

// delivered returns a message whose latest delivery, under firstHandle, ends at visibleAt.
func delivered(expiresAt, visibleAt time.Time) domain.Message {
	m := waiting(expiresAt)
	m.DeliveryAttempts = 1
	m.ReceiptHandle = firstHandle
	m.VisibleAt = visibleAt
	m.FirstDeliveredAt = firstDeliveredAt
	return m
}

// released returns a message whose delivery was released, deliverable again at visibleAt.
func released(expiresAt, visibleAt time.Time) domain.Message {
	m := delivered(expiresAt, visibleAt)
	m.ReceiptHandle = domain.ID{}
	return m
}

func TestMessage_IsExpired_AtExpiresAt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		expiresAt time.Time
		want      bool
	}{
		{name: "1ns before ExpiresAt", expiresAt: now.Add(time.Nanosecond), want: false},
		{name: "exactly at ExpiresAt", expiresAt: now, want: true},
		{name: "1ns after ExpiresAt", expiresAt: now.Add(-time.Nanosecond), want: true},
		{name: "an hour before", expiresAt: now.Add(time.Hour), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(waiting(tc.expiresAt).IsExpired(now), tc.want) // the lifetime ends at ExpiresAt itself
		})
	}
}

func TestMessage_IsLeased_UntilVisibleAt(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	neverDeliveredWithVisibleAt := waiting(future)
	neverDeliveredWithVisibleAt.VisibleAt = now.Add(time.Minute)
	cases := []struct {
		name    string
		message domain.Message
		want    bool
	}{
		{name: "never delivered", message: waiting(future), want: false},
		{name: "never delivered, VisibleAt in the future", message: neverDeliveredWithVisibleAt, want: false},
		{name: "1ns before VisibleAt", message: delivered(future, now.Add(time.Nanosecond)), want: true},
		{name: "exactly at VisibleAt", message: delivered(future, now), want: false},
		{name: "after VisibleAt", message: delivered(future, now.Add(-time.Second)), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsLeased(now), tc.want) // a delivery hides the message until, not including, VisibleAt
		})
	}
}

func TestMessage_IsDeliverable(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name    string
		message domain.Message
		want    bool
	}{
		{name: "waiting and unexpired", message: waiting(future), want: true},
		{name: "waiting, expires 1ns later", message: waiting(now.Add(time.Nanosecond)), want: true},
		{name: "waiting, expires now", message: waiting(now), want: false},
		{name: "leased", message: delivered(future, now.Add(time.Second)), want: false},
		{name: "lease ended now", message: delivered(future, now), want: true},
		{name: "lease ended, expired", message: delivered(now, now.Add(-time.Second)), want: false},
		{name: "leased and expired", message: delivered(now, now.Add(time.Second)), want: false},
		{name: "delayed", message: delayed(future, now.Add(time.Second)), want: false},
		{name: "delay ends 1ns later", message: delayed(future, now.Add(time.Nanosecond)), want: false},
		{name: "delay ended now", message: delayed(future, now), want: true},
		{name: "delay ended, expired", message: delayed(now, now.Add(-time.Second)), want: false},
		{name: "released with a delay", message: released(future, now.Add(time.Second)), want: false},
		{name: "released, delay ended now", message: released(future, now), want: true},
		{name: "released without delay", message: released(future, now.Add(-time.Second)), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsDeliverable(now), tc.want) // deliverable means neither leased, nor delayed, nor expired
		})
	}
}

func TestMessage_IsExhausted_AtMaxDeliveryAttempts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		attempts int
		max      int
		want     bool
	}{
		{name: "never delivered, limit 1", attempts: 0, max: 1, want: false},
		{name: "one attempt, limit 1", attempts: 1, max: 1, want: true},
		{name: "one below the limit", attempts: 4, max: 5, want: false},
		{name: "at the limit", attempts: 5, max: 5, want: true},
		{name: "beyond the limit", attempts: 6, max: 5, want: true},
		{name: "at the highest limit", attempts: 100, max: 100, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := domain.Message{DeliveryAttempts: tc.attempts, MaxDeliveryAttempts: tc.max}
			is.Equal(m.IsExhausted(), tc.want) // attempts == max uses up the last delivery
		})
	}
}

func TestMessage_IsRemovable_WaitsForRunningDelivery(t *testing.T) {
	t.Parallel()
	past := now.Add(-time.Minute)
	future := now.Add(time.Minute)
	cases := []struct {
		name    string
		message domain.Message
		want    bool
	}{
		{name: "expired and waiting", message: waiting(past), want: true},
		{name: "expired exactly now and waiting", message: waiting(now), want: true},
		{name: "expired but leased", message: delivered(past, future), want: false},
		{name: "expired, lease ends 1ns later", message: delivered(past, now.Add(time.Nanosecond)), want: false},
		{name: "expired and lease ended now", message: delivered(past, now), want: true},
		{name: "expired and lease ended earlier", message: delivered(past, past), want: true},
		{name: "not expired and waiting", message: waiting(future), want: false},
		{name: "not expired and leased", message: delivered(future, future), want: false},
		{name: "not expired, lease ended", message: delivered(future, past), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsRemovable(now), tc.want) // expired, and no delivery of it is running
		})
	}
}

func TestMessage_Acknowledges_OnlyCurrentUnexpiredHandle(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	visibleAt := now.Add(30 * time.Second)
	cases := []struct {
		name    string
		message domain.Message
		handle  domain.ID
		at      time.Time
		want    bool
	}{
		{name: "current handle during the delivery", message: delivered(future, visibleAt), handle: firstHandle, at: now, want: true},
		{name: "current handle 1ns before VisibleAt", message: delivered(future, visibleAt), handle: firstHandle, at: visibleAt.Add(-time.Nanosecond), want: true},
		{name: "current handle at VisibleAt", message: delivered(future, visibleAt), handle: firstHandle, at: visibleAt, want: false},
		{name: "current handle after VisibleAt", message: delivered(future, visibleAt), handle: firstHandle, at: visibleAt.Add(time.Second), want: false},
		{name: "other handle during the delivery", message: delivered(future, visibleAt), handle: secondHandle, at: now, want: false},
		{name: "zero handle during the delivery", message: delivered(future, visibleAt), handle: domain.ID{}, at: now, want: false},
		{name: "never delivered, zero handle", message: waiting(future), handle: domain.ID{}, at: now, want: false},
		{name: "never delivered, zero handle, VisibleAt ahead", message: func() domain.Message {
			m := waiting(future)
			m.VisibleAt = visibleAt
			return m
		}(), handle: domain.ID{}, at: now, want: false},
		{name: "lifetime ended while the delivery runs", message: delivered(now.Add(-time.Second), visibleAt), handle: firstHandle, at: now, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.Acknowledges(tc.handle, tc.at), tc.want) // only the current handle, before its visibility timeout ends
		})
	}
}

func TestMessage_Acknowledges_StaleHandleNeverRemovesNewerDelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := waiting(now.Add(time.Hour))
	m.Deliver(firstHandle, now)
	redeliveredAt := now.Add(m.VisibilityTimeout)

	m.Deliver(secondHandle, redeliveredAt)

	is.True(!m.Acknowledges(firstHandle, redeliveredAt)) // the first delivery's handle is stale
	is.True(m.Acknowledges(secondHandle, redeliveredAt)) // the new delivery's handle is current
}

func TestMessage_Deliver(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name                 string
		message              domain.Message
		handle               domain.ID
		wantAttempts         int
		wantFirstDeliveredAt time.Time
	}{
		{name: "first delivery", message: waiting(future), handle: firstHandle, wantAttempts: 1, wantFirstDeliveredAt: now},
		{name: "first delivery after a delay", message: delayed(future, now.Add(-time.Second)), handle: firstHandle, wantAttempts: 1, wantFirstDeliveredAt: now},
		{name: "redelivery after the lease ended", message: delivered(future, now.Add(-time.Second)), handle: secondHandle, wantAttempts: 2, wantFirstDeliveredAt: firstDeliveredAt},
		{name: "redelivery after a release", message: released(future, now.Add(-time.Second)), handle: secondHandle, wantAttempts: 2, wantFirstDeliveredAt: firstDeliveredAt},
		{name: "last allowed delivery", message: func() domain.Message {
			m := delivered(future, now.Add(-time.Second))
			m.DeliveryAttempts = 4
			return m
		}(), handle: secondHandle, wantAttempts: 5, wantFirstDeliveredAt: firstDeliveredAt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := tc.message
			before := tc.message

			got := m.Deliver(tc.handle, now)

			is.Equal(got, domain.Delivery{
				MessageID:        before.ID,
				Payload:          before.Payload,
				Priority:         before.Priority,
				ReceiptHandle:    tc.handle,
				DeliveryAttempts: tc.wantAttempts,
				Attributes:       before.Attributes,
				EnqueuedAt:       enqueuedAt,
				FirstDeliveredAt: tc.wantFirstDeliveredAt,
			}) // the consumer receives the message, its new handle, the new attempt count and its times
			is.Equal(m.ReceiptHandle, tc.handle)           // the new handle becomes the current one
			is.Equal(m.DeliveryAttempts, tc.wantAttempts)  // each delivery counts one attempt
			is.Equal(m.VisibleAt, now.Add(30*time.Second)) // hidden until now + the message's visibility timeout
			is.Equal(m.Seq, before.Seq)                    // a redelivery keeps its place in the queue
			is.Equal(m.ExpiresAt, before.ExpiresAt)        // and its lifetime
			is.Equal(m.EnqueuedAt, before.EnqueuedAt)      // and its enqueue time
			is.True(m.IsLeased(now))                       // the delivered message is hidden
			is.True(m.Acknowledges(tc.handle, now))        // and its new handle acknowledges it
		})
	}
}

func TestMessage_Deliver_UsesTheMessagesOwnVisibilityTimeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := waiting(now.Add(time.Hour))
	m.VisibilityTimeout = 6 * time.Hour

	m.Deliver(firstHandle, now)

	is.Equal(m.VisibleAt, now.Add(6*time.Hour))                 // the timeout stored with the message, not a default
	is.True(m.IsLeased(now.Add(6*time.Hour - time.Nanosecond))) // still hidden 1ns before it ends
	is.True(!m.IsLeased(now.Add(6 * time.Hour)))                // visible again when it ends
}

func TestMessage_DeadLetter_KeepsWhatRedriveNeeds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := delivered(now.Add(time.Hour), now.Add(-time.Second))
	m.DeliveryAttempts = 5

	got := m.DeadLetter(now)

	is.Equal(got, domain.DeadLetter{
		QueueID:          domain.ID{1},
		MessageID:        domain.ID{2},
		Priority:         domain.PriorityMedium,
		Payload:          "send welcome email",
		Attributes:       domain.Attributes{"trace": {DataType: "String", StringValue: "abc"}},
		DeliveryAttempts: 5,
		EnqueuedAt:       now.Add(-time.Hour),
		DeadLetteredAt:   now,
	}) // ID, queue, payload, priority, attributes, attempts, enqueue time and dead-letter time
}

func TestDeadLetter_IsRetained_UntilRetentionEnds(t *testing.T) {
	t.Parallel()
	const retention = 14 * day
	movedAt := now
	cases := []struct {
		name      string
		retention time.Duration
		at        time.Time
		want      bool
	}{
		{name: "when moved", retention: retention, at: movedAt, want: true},
		{name: "1ns before retention ends", retention: retention, at: movedAt.Add(retention - time.Nanosecond), want: true},
		{name: "exactly when retention ends", retention: retention, at: movedAt.Add(retention), want: false},
		{name: "a day after retention ends", retention: retention, at: movedAt.Add(retention + day), want: false},
		{name: "zero retention", retention: 0, at: movedAt, want: false},
		{name: "short retention, 1ns before", retention: time.Second, at: movedAt.Add(time.Second - time.Nanosecond), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			d := domain.DeadLetter{DeadLetteredAt: movedAt}
			is.Equal(d.IsRetained(tc.retention, tc.at), tc.want) // kept for the retention period, deleted when it ends
		})
	}
}

func TestMessage_IsDelayed_UntilVisibleAtWithoutDelivery(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name    string
		message domain.Message
		want    bool
	}{
		{name: "enqueued without delay", message: waiting(future), want: false},
		{name: "delay ends 1ns later", message: delayed(future, now.Add(time.Nanosecond)), want: true},
		{name: "delay ends in a minute", message: delayed(future, now.Add(time.Minute)), want: true},
		{name: "delay ended now", message: delayed(future, now), want: false},
		{name: "delay ended earlier", message: delayed(future, now.Add(-time.Second)), want: false},
		{name: "leased", message: delivered(future, now.Add(time.Second)), want: false},
		{name: "lease ended", message: delivered(future, now.Add(-time.Second)), want: false},
		{name: "released with a delay", message: released(future, now.Add(time.Second)), want: true},
		{name: "released, delay ended now", message: released(future, now), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsDelayed(now), tc.want) // delayed until VisibleAt when no delivery holds the message
		})
	}
}

func TestMessage_IsRemovable_DelayedMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		message domain.Message
		want    bool
	}{
		{name: "delayed, expired", message: delayed(now, now.Add(time.Minute)), want: true},
		{name: "delayed, not expired", message: delayed(now.Add(time.Hour), now.Add(time.Minute)), want: false},
		{name: "released with a delay, expired", message: released(now, now.Add(time.Minute)), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsRemovable(now), tc.want) // a delay holds no delivery: an expired delayed message goes
		})
	}
}

func TestMessage_HoldsLease_OnlyCurrentRunningDelivery(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	visibleAt := now.Add(30 * time.Second)
	cases := []struct {
		name    string
		message domain.Message
		handle  domain.ID
		at      time.Time
		want    bool
	}{
		{name: "current handle during the delivery", message: delivered(future, visibleAt), handle: firstHandle, at: now, want: true},
		{name: "current handle 1ns before the lease ends", message: delivered(future, visibleAt), handle: firstHandle, at: visibleAt.Add(-time.Nanosecond), want: true},
		{name: "current handle when the lease ends", message: delivered(future, visibleAt), handle: firstHandle, at: visibleAt, want: false},
		{name: "other handle", message: delivered(future, visibleAt), handle: secondHandle, at: now, want: false},
		{name: "zero handle", message: delivered(future, visibleAt), handle: domain.ID{}, at: now, want: false},
		{name: "handle of a released delivery", message: released(future, visibleAt), handle: firstHandle, at: now, want: false},
		{name: "zero handle, released with a delay", message: released(future, visibleAt), handle: domain.ID{}, at: now, want: false},
		{name: "zero handle, delayed", message: delayed(future, visibleAt), handle: domain.ID{}, at: now, want: false},
		{name: "lifetime ended while the delivery runs", message: delivered(now, visibleAt), handle: firstHandle, at: now, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.HoldsLease(tc.handle, tc.at), tc.want) // only the latest, running, unreleased delivery holds the lease
		})
	}
}

func TestMessage_Extend(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name      string
		leaseEnds time.Time
		timeout   time.Duration
	}{
		{name: "longer than what is left", leaseEnds: now.Add(10 * time.Second), timeout: time.Minute},
		{name: "shorter than what is left", leaseEnds: now.Add(20 * time.Second), timeout: time.Second},
		{name: "the longest extension", leaseEnds: now.Add(time.Nanosecond), timeout: 12 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := delivered(future, tc.leaseEnds)
			before := m

			m.Extend(tc.timeout, now)

			is.Equal(m.VisibleAt, now.Add(tc.timeout))                // the lease ends timeout after the call, not after its old end
			is.Equal(m.ReceiptHandle, before.ReceiptHandle)           // the same handle
			is.Equal(m.DeliveryAttempts, before.DeliveryAttempts)     // the same attempts
			is.Equal(m.VisibilityTimeout, before.VisibilityTimeout)   // later deliveries keep the message's own timeout
			is.Equal(m.Seq, before.Seq)                               // and its place in line
			is.True(m.HoldsLease(firstHandle, now.Add(tc.timeout-1))) // the handle holds the lease until the new end
			is.True(!m.HoldsLease(firstHandle, now.Add(tc.timeout)))  // and not at it
		})
	}
}

func TestMessage_Release(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name  string
		delay time.Duration
	}{
		{name: "without delay", delay: 0},
		{name: "with a delay", delay: 10 * time.Second},
		{name: "with the longest delay", delay: 12 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := delivered(future.Add(tc.delay), now.Add(30*time.Second))
			before := m

			m.Release(tc.delay, now)

			is.True(!m.HoldsLease(firstHandle, now))              // the handle no longer holds the lease
			is.True(!m.IsLeased(now))                             // no delivery holds the message
			is.Equal(m.VisibleAt, now.Add(tc.delay))              // deliverable again after the delay
			is.Equal(m.IsDelayed(now), tc.delay > 0)              // delayed meanwhile, when there is a delay
			is.Equal(m.IsDeliverable(now), tc.delay == 0)         // deliverable at once without one
			is.True(m.IsDeliverable(now.Add(tc.delay)))           // and when the delay ends
			is.Equal(m.DeliveryAttempts, before.DeliveryAttempts) // the attempts are unchanged
			is.Equal(m.Seq, before.Seq)                           // the message keeps its place in line
			is.Equal(m.FirstDeliveredAt, before.FirstDeliveredAt) // and its first delivery
		})
	}
}

func TestMessage_Release_LastAttemptStaysExhausted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := delivered(now.Add(time.Hour), now.Add(30*time.Second))
	m.DeliveryAttempts = m.MaxDeliveryAttempts

	m.Release(0, now)

	is.True(m.IsExhausted()) // a release gives no attempt back: a later dequeue dead-letters it
}

func TestMessage_Undeliver(t *testing.T) {
	t.Parallel()
	future := now.Add(time.Hour)
	cases := []struct {
		name                 string
		message              domain.Message
		wantAttempts         int
		wantFirstDeliveredAt time.Time
	}{
		{name: "first delivery", message: func() domain.Message {
			m := waiting(future)
			m.Deliver(firstHandle, now.Add(-time.Second))
			return m
		}(), wantAttempts: 0, wantFirstDeliveredAt: time.Time{}},
		{name: "redelivery", message: func() domain.Message {
			m := delivered(future, now.Add(-time.Second))
			m.Deliver(secondHandle, now.Add(-time.Second))
			return m
		}(), wantAttempts: 1, wantFirstDeliveredAt: firstDeliveredAt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := tc.message
			before := m
			handle := m.ReceiptHandle

			m.Undeliver(now)

			is.Equal(m.DeliveryAttempts, tc.wantAttempts)           // the attempt does not count
			is.Equal(m.FirstDeliveredAt, tc.wantFirstDeliveredAt)   // a first delivery taken back was never made
			is.True(!m.HoldsLease(handle, now))                     // the taken-back handle holds nothing
			is.True(m.IsDeliverable(now))                           // the message is deliverable at once
			is.True(!m.IsDelayed(now))                              // without a delay
			is.Equal(m.Seq, before.Seq)                             // in its place in line
			is.Equal(m.ExpiresAt, before.ExpiresAt)                 // with its lifetime
			is.Equal(m.VisibilityTimeout, before.VisibilityTimeout) // and its settings
		})
	}
}

func TestValidateLeaseExtension(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		timeout time.Duration
		want    domain.Code
	}{
		{name: "one second", timeout: time.Second},
		{name: "twelve hours", timeout: 43_200 * time.Second},
		{name: "an hour", timeout: time.Hour},
		{name: "zero", timeout: 0, want: domain.CodeInvalidVisibilityTimeout},
		{name: "negative", timeout: -time.Second, want: domain.CodeInvalidVisibilityTimeout},
		{name: "half a second", timeout: 500 * time.Millisecond, want: domain.CodeInvalidVisibilityTimeout},
		{name: "1500ms", timeout: 1500 * time.Millisecond, want: domain.CodeInvalidVisibilityTimeout},
		{name: "twelve hours and a second", timeout: 43_201 * time.Second, want: domain.CodeInvalidVisibilityTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateLeaseExtension(tc.timeout)), tc.want) // whole seconds from 1 to 43,200
		})
	}
}

func TestValidateReleaseDelay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		delay time.Duration
		want  domain.Code
	}{
		{name: "zero", delay: 0},
		{name: "one second", delay: time.Second},
		{name: "twelve hours", delay: 43_200 * time.Second},
		{name: "negative", delay: -time.Second, want: domain.CodeInvalidDelay},
		{name: "half a second", delay: 500 * time.Millisecond, want: domain.CodeInvalidDelay},
		{name: "twelve hours and a second", delay: 43_201 * time.Second, want: domain.CodeInvalidDelay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateReleaseDelay(tc.delay)), tc.want) // whole seconds from 0 to 43,200
		})
	}
}

func TestValidateMaxMessages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		max  int
		want domain.Code
	}{
		{max: -1, want: domain.CodeInvalidMaxMessages},
		{max: 0, want: domain.CodeInvalidMaxMessages},
		{max: 1},
		{max: 10},
		{max: 100},
		{max: 101, want: domain.CodeInvalidMaxMessages},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.max), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateMaxMessages(tc.max)), tc.want) // 1 to 100 messages
		})
	}
}

func TestDefaultDequeueBatch_IsValid(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(domain.DefaultDequeueBatch, 10)                         // the contract's default
	is.NoErr(domain.ValidateMaxMessages(domain.DefaultDequeueBatch)) // and within the range
}

func TestValidateWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		wait time.Duration
		want domain.Code
	}{
		{name: "zero", wait: 0},
		{name: "one second", wait: time.Second},
		{name: "twenty seconds", wait: 20 * time.Second},
		{name: "negative", wait: -time.Second, want: domain.CodeInvalidWait},
		{name: "1500ms", wait: 1500 * time.Millisecond, want: domain.CodeInvalidWait},
		{name: "twenty-one seconds", wait: 21 * time.Second, want: domain.CodeInvalidWait},
		{name: "twenty seconds and 1ns", wait: 20*time.Second + time.Nanosecond, want: domain.CodeInvalidWait},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateWait(tc.wait)), tc.want) // whole seconds from 0 to 20
		})
	}
}

func TestValidateReceipts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		size int
		want domain.Code
	}{
		{size: 0, want: domain.CodeInvalidBatchSize},
		{size: 1},
		{size: 1000},
		{size: 1001, want: domain.CodeInvalidBatchSize},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.size), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			receipts := make([]domain.Receipt, tc.size)
			is.Equal(codeOf(domain.ValidateReceipts(receipts)), tc.want) // 1 to 1,000 receipts
		})
	}
}

func TestValidateReceipts_Nil(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(codeOf(domain.ValidateReceipts(nil)), domain.CodeInvalidBatchSize) // no receipts at all is no batch
}

func TestDelivery_Receipt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	d := domain.Delivery{MessageID: domain.ID{2}, ReceiptHandle: firstHandle, Payload: "x"}
	is.Equal(d.Receipt(), domain.Receipt{MessageID: domain.ID{2}, ReceiptHandle: firstHandle}) // the message and the handle
}
