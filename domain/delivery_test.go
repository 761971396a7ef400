package domain_test

import (
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

// waiting returns a never-delivered message that expires at expiresAt.
func waiting(expiresAt time.Time) domain.Message {
	return domain.Message{
		QueueID:             domain.ID{1},
		ID:                  domain.ID{2},
		Seq:                 7,
		Priority:            domain.PriorityMedium,
		Payload:             "send welcome email",
		EnqueuedAt:          now.Add(-time.Hour),
		ExpiresAt:           expiresAt,
		MaxDeliveryAttempts: 5,
		VisibilityTimeout:   30 * time.Second,
	}
}

// delivered returns a message whose latest delivery, under firstHandle, ends at visibleAt.
func delivered(expiresAt, visibleAt time.Time) domain.Message {
	m := waiting(expiresAt)
	m.DeliveryAttempts = 1
	m.ReceiptHandle = firstHandle
	m.VisibleAt = visibleAt
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.message.IsDeliverable(now), tc.want) // ready means neither leased nor expired
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
		name         string
		message      domain.Message
		handle       domain.ID
		wantAttempts int
	}{
		{name: "first delivery", message: waiting(future), handle: firstHandle, wantAttempts: 1},
		{name: "redelivery after the lease ended", message: delivered(future, now.Add(-time.Second)), handle: secondHandle, wantAttempts: 2},
		{name: "last allowed delivery", message: func() domain.Message {
			m := delivered(future, now.Add(-time.Second))
			m.DeliveryAttempts = 4
			return m
		}(), handle: secondHandle, wantAttempts: 5},
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
			}) // the consumer receives the message, its new handle and the new attempt count
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
		DeliveryAttempts: 5,
		EnqueuedAt:       now.Add(-time.Hour),
		DeadLetteredAt:   now,
	}) // ID, queue, payload, priority, attempts, enqueue time and dead-letter time
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
