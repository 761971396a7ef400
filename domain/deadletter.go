package domain

import (
	"fmt"
	"time"
)

// DeadLetter is an exhausted message moved out of its queue, with what listing and
// redriving it need.
type DeadLetter struct {
	QueueID          ID
	MessageID        ID
	Priority         Priority
	Payload          string
	Attributes       Attributes
	DeliveryAttempts int
	EnqueuedAt       time.Time
	DeadLetteredAt   time.Time
}

// DeadLetter returns the dead-letter record of m, moved at now.
func (m Message) DeadLetter(now time.Time) DeadLetter {
	return DeadLetter{
		QueueID:          m.QueueID,
		MessageID:        m.ID,
		Priority:         m.Priority,
		Payload:          m.Payload,
		Attributes:       m.Attributes,
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

// Redrive returns the message that d becomes when it is sent back to its queue q:
// the same ID, payload, priority and attributes, no delivery attempt yet, the queue's
// current settings, and a lifetime of the queue's default from the redrive. The store gives it a new
// place at the end of its priority's line.
func (d DeadLetter) Redrive(q Queue) Enqueue {
	return Enqueue{
		QueueID:             d.QueueID,
		MessageID:           d.MessageID,
		Priority:            d.Priority,
		Payload:             d.Payload,
		Attributes:          d.Attributes,
		TTL:                 q.DefaultMessageTTL,
		VisibilityTimeout:   q.VisibilityTimeout,
		MaxDeliveryAttempts: q.MaxDeliveryAttempts,
	}
}

// The bounds of the dead-letter operations.
const (
	MaxRedriveIDs   = 1000
	MaxRedriveLimit = 10000
)

// Redrive selects the dead letters to send back: exactly one of IDs (1 to 1,000 of them) or
// Limit (the lowest IDs first, 1 to 10,000).
type Redrive struct {
	IDs   []ID
	Limit int
}

// Validate checks the size of the selection. It returns an *Error with invalid_batch_size;
// a selection with both or neither is the caller's to refuse.
func (r Redrive) Validate() error {
	switch {
	case r.IDs != nil && (len(r.IDs) == 0 || len(r.IDs) > MaxRedriveIDs):
		return invalid(CodeInvalidBatchSize, fmt.Sprintf("ids must hold 1 to %d entries", MaxRedriveIDs))
	case r.IDs == nil && (r.Limit < 1 || r.Limit > MaxRedriveLimit):
		return invalid(CodeInvalidBatchSize, fmt.Sprintf("limit must be a whole number from 1 to %d", MaxRedriveLimit))
	}
	return nil
}
