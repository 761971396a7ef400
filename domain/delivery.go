package domain

import (
	"fmt"
	"time"
)

// Delivery is what a dequeue hands to a consumer.
type Delivery struct {
	MessageID        ID
	Payload          string
	Priority         Priority
	ReceiptHandle    ID
	DeliveryAttempts int
	// Attributes are the message's attributes (see Attribute).
	Attributes Attributes
	// EnqueuedAt and FirstDeliveredAt are for the SQS endpoint's SentTimestamp and
	// ApproximateFirstReceiveTimestamp; the native API does not show them.
	EnqueuedAt       time.Time
	FirstDeliveredAt time.Time
}

// Receipt names one delivery of a message: what acknowledge, extend and release take.
type Receipt struct {
	MessageID     ID
	ReceiptHandle ID
}

// Receipt returns the receipt of the delivery.
func (d Delivery) Receipt() Receipt {
	return Receipt{MessageID: d.MessageID, ReceiptHandle: d.ReceiptHandle}
}

// IsExpired reports whether the message's lifetime has ended at now.
func (m Message) IsExpired(now time.Time) bool { return !now.Before(m.ExpiresAt) }

// IsLeased reports whether a delivery's visibility timeout is still running at now, which
// hides the message from every dequeue.
func (m Message) IsLeased(now time.Time) bool {
	return !m.ReceiptHandle.IsZero() && now.Before(m.VisibleAt)
}

// IsDelayed reports whether the message waits, at now, for a delay to end: one given at its
// enqueue, or at the release of its last delivery.
func (m Message) IsDelayed(now time.Time) bool {
	return m.ReceiptHandle.IsZero() && now.Before(m.VisibleAt)
}

// IsDeliverable reports whether a dequeue at now may consider the message: it is neither
// leased, nor delayed, nor expired.
func (m Message) IsDeliverable(now time.Time) bool {
	return !now.Before(m.VisibleAt) && !m.IsExpired(now)
}

// IsExhausted reports whether the message has used all its delivery attempts. A dequeue
// moves an exhausted message to dead-letter storage once no delivery holds it.
func (m Message) IsExhausted() bool { return m.DeliveryAttempts >= m.MaxDeliveryAttempts }

// IsRemovable reports whether the expired-message cleaner may delete the message at now: it
// has expired and no delivery of it is running, so an active delivery is never cut short.
func (m Message) IsRemovable(now time.Time) bool {
	return m.IsExpired(now) && !m.IsLeased(now)
}

// HoldsLease reports whether receiptHandle names the message's current delivery at now: the
// handle of its latest delivery, whose visibility timeout has not ended, and which no release
// gave up. Only such a handle acknowledges, extends or releases the message; a stale or late
// one changes nothing, so it never touches a newer delivery.
func (m Message) HoldsLease(receiptHandle ID, now time.Time) bool {
	return m.IsLeased(now) && m.ReceiptHandle == receiptHandle
}

// Acknowledges reports whether receiptHandle acknowledges the message at now (see
// HoldsLease).
func (m Message) Acknowledges(receiptHandle ID, now time.Time) bool {
	return m.HoldsLease(receiptHandle, now)
}

// Deliver starts a new delivery at now under receiptHandle and returns what the consumer
// receives.
func (m *Message) Deliver(receiptHandle ID, now time.Time) Delivery {
	m.ReceiptHandle = receiptHandle
	m.DeliveryAttempts++
	m.VisibleAt = now.Add(m.VisibilityTimeout)
	if m.FirstDeliveredAt.IsZero() {
		m.FirstDeliveredAt = now
	}
	return m.delivery()
}

func (m *Message) delivery() Delivery {
	return Delivery{
		MessageID:        m.ID,
		Payload:          m.Payload,
		Priority:         m.Priority,
		ReceiptHandle:    m.ReceiptHandle,
		DeliveryAttempts: m.DeliveryAttempts,
		Attributes:       m.Attributes,
		EnqueuedAt:       m.EnqueuedAt,
		FirstDeliveredAt: m.FirstDeliveredAt,
	}
}

// Extend makes the current delivery's visibility timeout end timeout after now, not after
// its old end. The handle and the attempts stay; later deliveries keep the message's own
// visibility timeout. The caller has checked HoldsLease.
func (m *Message) Extend(timeout time.Duration, now time.Time) {
	m.VisibleAt = now.Add(timeout)
}

// Release ends the current delivery at now: the message may be delivered again once delay
// has passed, in its original place in line, with its attempts unchanged, and the handle is
// no longer current. The caller has checked HoldsLease.
func (m *Message) Release(delay time.Duration, now time.Time) {
	m.ReceiptHandle = ID{}
	m.VisibleAt = now.Add(delay)
}

// Undeliver takes back a delivery that never reached its consumer (its requester went away
// before the answer): the attempt does not count and the message is deliverable at now again,
// in its place. The caller has checked HoldsLease.
func (m *Message) Undeliver(now time.Time) {
	m.ReceiptHandle = ID{}
	m.DeliveryAttempts--
	m.VisibleAt = now
	if m.DeliveryAttempts == 0 {
		m.FirstDeliveredAt = time.Time{}
	}
}

// The ranges of the lease operations.
const (
	MinLeaseExtension = time.Second
	MaxLeaseExtension = 12 * time.Hour
	MaxReleaseDelay   = 12 * time.Hour
)

// ValidateLeaseExtension checks the visibility timeout of an extend: 1 s to 12 h in whole
// seconds. It returns an *Error with invalid_visibility_timeout.
func ValidateLeaseExtension(d time.Duration) error {
	return wholeSecondsIn(d, MinLeaseExtension, MaxLeaseExtension, CodeInvalidVisibilityTimeout, "visibility_timeout_seconds")
}

// ValidateReleaseDelay checks the delay of a release: 0 to 12 h in whole seconds. It
// returns an *Error with invalid_delay.
func ValidateReleaseDelay(d time.Duration) error {
	return wholeSecondsIn(d, 0, MaxReleaseDelay, CodeInvalidDelay, "delay_seconds")
}

// The ranges of a dequeue.
const (
	MaxDequeueBatch     = 100
	DefaultDequeueBatch = 10
	MaxWait             = 20 * time.Second
)

// ValidateMaxMessages checks how many messages a dequeue may take: 1 to 100. It returns an
// *Error with invalid_max_messages.
func ValidateMaxMessages(n int) error {
	if n < 1 || n > MaxDequeueBatch {
		return invalid(CodeInvalidMaxMessages, fmt.Sprintf("max_messages must be a whole number from 1 to %d", MaxDequeueBatch))
	}
	return nil
}

// ValidateWait checks how long a dequeue may wait for a message: 0 to 20 s in whole
// seconds. It returns an *Error with invalid_wait.
func ValidateWait(d time.Duration) error {
	return wholeSecondsIn(d, 0, MaxWait, CodeInvalidWait, "wait_seconds")
}

// The size of an acknowledgement batch.
const MaxAcknowledgeBatch = 1000

// ValidateReceipts checks the size of an acknowledgement batch: 1 to 1,000. It returns an
// *Error with invalid_batch_size.
func ValidateReceipts(receipts []Receipt) error {
	if len(receipts) == 0 || len(receipts) > MaxAcknowledgeBatch {
		return invalid(CodeInvalidBatchSize, fmt.Sprintf("messages must hold 1 to %d entries", MaxAcknowledgeBatch))
	}
	return nil
}
