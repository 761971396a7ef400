package domain

import "time"

// Priority orders messages for delivery: HIGH before MEDIUM before LOW. The zero value is
// not a priority, so a Priority that was never set is caught by Valid.
type Priority uint8

// The three priorities. Their numeric order is their delivery order, which the stores use
// directly: a smaller value is delivered first.
const (
	PriorityHigh Priority = iota + 1
	PriorityMedium
	PriorityLow
)

// Priorities lists every priority in delivery order.
var Priorities = [...]Priority{PriorityHigh, PriorityMedium, PriorityLow}

// ParsePriority accepts exactly "HIGH", "MEDIUM" or "LOW" (case-sensitive). It returns an
// *Error with invalid_priority for anything else.
func ParsePriority(s string) (Priority, error) {
	switch s {
	case "HIGH":
		return PriorityHigh, nil
	case "MEDIUM":
		return PriorityMedium, nil
	case "LOW":
		return PriorityLow, nil
	}
	return 0, invalid(CodeInvalidPriority, "priority must be HIGH, MEDIUM or LOW")
}

// Valid reports whether p is one of the three priorities.
func (p Priority) Valid() bool { return p >= PriorityHigh && p <= PriorityLow }

// String returns "HIGH", "MEDIUM" or "LOW", or "" for an invalid priority.
func (p Priority) String() string {
	switch p {
	case PriorityHigh:
		return "HIGH"
	case PriorityMedium:
		return "MEDIUM"
	case PriorityLow:
		return "LOW"
	}
	return ""
}

// NewMessage is a request to enqueue a message.
type NewMessage struct {
	Payload  string
	Priority Priority
	// TTL is the message's lifetime; nil takes the queue's DefaultMessageTTL.
	TTL *time.Duration
}

// ValidateTTL checks a message lifetime: 1 s to 30 days in whole seconds. It returns an
// *Error with invalid_ttl.
func ValidateTTL(d time.Duration) error {
	return wholeSecondsIn(d, MinMessageTTL, MaxMessageTTL, CodeInvalidTTL, "ttl_seconds")
}

// Enqueue is a message ready to be stored: everything the store needs, resolved from the
// request and the queue's settings, so that storing it reads nothing else.
type Enqueue struct {
	QueueID             ID
	MessageID           ID
	Priority            Priority
	Payload             string
	TTL                 time.Duration
	VisibilityTimeout   time.Duration
	MaxDeliveryAttempts int
}

// Validate checks the priority and the lifetime. It returns an *Error with
// invalid_priority or invalid_ttl.
func (n NewMessage) Validate() error {
	if !n.Priority.Valid() {
		return invalid(CodeInvalidPriority, "priority must be HIGH, MEDIUM or LOW")
	}
	if n.TTL != nil {
		return ValidateTTL(*n.TTL)
	}
	return nil
}

// Resolve completes a request that Validate accepted with the queue's settings. The
// service validates a request before it looks its queue up, so that a bad value is
// reported before a missing queue, and resolves it after.
func (n NewMessage) Resolve(q Queue, messageID ID) Enqueue {
	ttl := q.DefaultMessageTTL
	if n.TTL != nil {
		ttl = *n.TTL
	}
	return Enqueue{
		QueueID:             q.ID,
		MessageID:           messageID,
		Priority:            n.Priority,
		Payload:             n.Payload,
		TTL:                 ttl,
		VisibilityTimeout:   q.VisibilityTimeout,
		MaxDeliveryAttempts: q.MaxDeliveryAttempts,
	}
}

// Message is a stored message with its delivery state.
type Message struct {
	QueueID ID
	ID      ID
	// Seq is the enqueue order, shared by every instance; a redelivery keeps it.
	Seq        int64
	Priority   Priority
	Payload    string
	EnqueuedAt time.Time
	ExpiresAt  time.Time
	// VisibleAt ends the current delivery's visibility timeout; meaningless before the
	// first delivery.
	VisibleAt time.Time
	// ReceiptHandle names the latest delivery; zero before the first.
	ReceiptHandle       ID
	DeliveryAttempts    int
	MaxDeliveryAttempts int
	VisibilityTimeout   time.Duration
}

// NewStoredMessage returns the message that e becomes when it is stored at now with the
// enqueue order seq.
func NewStoredMessage(e Enqueue, seq int64, now time.Time) Message {
	return Message{
		QueueID:             e.QueueID,
		ID:                  e.MessageID,
		Seq:                 seq,
		Priority:            e.Priority,
		Payload:             e.Payload,
		EnqueuedAt:          now,
		ExpiresAt:           now.Add(e.TTL),
		MaxDeliveryAttempts: e.MaxDeliveryAttempts,
		VisibilityTimeout:   e.VisibilityTimeout,
	}
}

// DeliversBefore reports whether m comes before other in delivery order: higher priority
// first, then earlier enqueue order.
func (m Message) DeliversBefore(other Message) bool {
	if m.Priority != other.Priority {
		return m.Priority < other.Priority
	}
	return m.Seq < other.Seq
}
