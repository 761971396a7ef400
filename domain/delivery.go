package domain

import "time"

// Delivery is what a dequeue hands to a consumer.
type Delivery struct {
	MessageID        ID
	Payload          string
	Priority         Priority
	ReceiptHandle    ID
	DeliveryAttempts int
}

// DeadLetter is an exhausted message moved out of its queue. It keeps what a later API needs
// to list and redrive it.
type DeadLetter struct {
	QueueID          ID
	MessageID        ID
	Priority         Priority
	Payload          string
	DeliveryAttempts int
	EnqueuedAt       time.Time
	DeadLetteredAt   time.Time
}

// IsExpired reports whether the message's lifetime has ended at now.
func (m Message) IsExpired(now time.Time) bool { return !now.Before(m.ExpiresAt) }

// IsLeased reports whether a delivery's visibility timeout is still running at now, which
// hides the message from every dequeue.
func (m Message) IsLeased(now time.Time) bool {
	return m.DeliveryAttempts > 0 && now.Before(m.VisibleAt)
}

// IsDeliverable reports whether a dequeue at now may consider the message: it is neither
// leased nor expired.
func (m Message) IsDeliverable(now time.Time) bool {
	return !m.IsLeased(now) && !m.IsExpired(now)
}

// IsExhausted reports whether the message has used all its delivery attempts. A dequeue that
// finds an exhausted message as its best candidate moves it to dead-letter storage.
func (m Message) IsExhausted() bool { return m.DeliveryAttempts >= m.MaxDeliveryAttempts }

// IsRemovable reports whether the expired-message cleaner may delete the message at now: it
// has expired and no delivery of it is running, so an active delivery is never cut short.
func (m Message) IsRemovable(now time.Time) bool {
	return m.IsExpired(now) && !m.IsLeased(now)
}

// Acknowledges reports whether receiptHandle acknowledges the message at now: it names the
// current delivery and that delivery's visibility timeout has not ended. A stale or late
// handle acknowledges nothing, so it never removes a newer delivery.
func (m Message) Acknowledges(receiptHandle ID, now time.Time) bool {
	return m.DeliveryAttempts > 0 && m.ReceiptHandle == receiptHandle && now.Before(m.VisibleAt)
}

// Deliver starts a new delivery at now under receiptHandle and returns what the consumer
// receives.
func (m *Message) Deliver(receiptHandle ID, now time.Time) Delivery {
	m.ReceiptHandle = receiptHandle
	m.DeliveryAttempts++
	m.VisibleAt = now.Add(m.VisibilityTimeout)
	return Delivery{
		MessageID:        m.ID,
		Payload:          m.Payload,
		Priority:         m.Priority,
		ReceiptHandle:    receiptHandle,
		DeliveryAttempts: m.DeliveryAttempts,
	}
}

// DeadLetter returns the dead-letter record of m, moved at now.
func (m Message) DeadLetter(now time.Time) DeadLetter {
	return DeadLetter{
		QueueID:          m.QueueID,
		MessageID:        m.ID,
		Priority:         m.Priority,
		Payload:          m.Payload,
		DeliveryAttempts: m.DeliveryAttempts,
		EnqueuedAt:       m.EnqueuedAt,
		DeadLetteredAt:   now,
	}
}

// IsRetained reports whether a dead letter is still within the retention period at now; the
// dead-letter cleaner deletes those that are not.
func (d DeadLetter) IsRetained(retention time.Duration, now time.Time) bool {
	return now.Before(d.DeadLetteredAt.Add(retention))
}
