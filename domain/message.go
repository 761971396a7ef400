package domain

import (
	"fmt"
	"time"
)

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

// The range of an enqueue's delay.
const (
	MaxDelay = 2591999 * time.Second
)

// NewMessage is a request to enqueue a message.
type NewMessage struct {
	Payload  string
	Priority Priority
	// TTL is the message's lifetime; nil takes the queue's DefaultMessageTTL.
	TTL *time.Duration
	// Delay holds the message back that long after its enqueue; nil is no delay. Its
	// lifetime still counts from the enqueue.
	Delay *time.Duration
	// Attributes travel with the message (see Attribute); nil has none.
	Attributes Attributes
}

// ValidateTTL checks a message lifetime: 1 s to 30 days in whole seconds. It returns an
// *Error with invalid_ttl.
func ValidateTTL(d time.Duration) error {
	return wholeSecondsIn(d, MinMessageTTL, MaxMessageTTL, CodeInvalidTTL, "ttl_seconds")
}

// ValidateDelay checks an enqueue's delay: 0 to 2,591,999 s in whole seconds. It returns an
// *Error with invalid_delay.
func ValidateDelay(d time.Duration) error {
	return wholeSecondsIn(d, 0, MaxDelay, CodeInvalidDelay, "delay_seconds")
}

// errDelayNotShorterThanLifetime answers a delay that would let the message expire before it
// could be delivered.
var errDelayNotShorterThanLifetime = invalid(CodeInvalidDelay,
	"delay_seconds must be shorter than the message's lifetime (ttl_seconds, or the queue's default_message_ttl_seconds)")

// Enqueue is a message ready to be stored: everything the store needs, resolved from the
// request and the queue's settings, so that storing it reads nothing else.
type Enqueue struct {
	QueueID             ID
	MessageID           ID
	Priority            Priority
	Payload             string
	Attributes          Attributes
	TTL                 time.Duration
	Delay               time.Duration
	VisibilityTimeout   time.Duration
	MaxDeliveryAttempts int
}

// Validate checks what the request decides alone: the priority, the lifetime, the delay,
// and, when the request gives its lifetime, that the delay is shorter. It returns an
// *Error with invalid_priority, invalid_ttl or invalid_delay.
func (n NewMessage) Validate() error {
	if !n.Priority.Valid() {
		return invalid(CodeInvalidPriority, "priority must be HIGH, MEDIUM or LOW")
	}
	if n.TTL != nil {
		if err := ValidateTTL(*n.TTL); err != nil {
			return err
		}
	}
	if n.Delay != nil {
		if err := ValidateDelay(*n.Delay); err != nil {
			return err
		}
		if n.TTL != nil && *n.Delay >= *n.TTL {
			return errDelayNotShorterThanLifetime
		}
	}
	return nil
}

// Resolve completes a request that Validate accepted with the queue's settings. The
// service validates a request before it looks its queue up, so that a bad value is
// reported before a missing queue, and resolves it after. It returns invalid_delay when the
// delay is not shorter than the queue's default lifetime that the message takes.
func (n NewMessage) Resolve(q Queue, messageID ID) (Enqueue, error) {
	ttl := q.DefaultMessageTTL
	if n.TTL != nil {
		ttl = *n.TTL
	}
	var delay time.Duration
	if n.Delay != nil {
		delay = *n.Delay
	}
	if delay >= ttl {
		return Enqueue{}, errDelayNotShorterThanLifetime
	}
	return Enqueue{
		QueueID:             q.ID,
		MessageID:           messageID,
		Priority:            n.Priority,
		Payload:             n.Payload,
		Attributes:          n.Attributes,
		TTL:                 ttl,
		Delay:               delay,
		VisibilityTimeout:   q.VisibilityTimeout,
		MaxDeliveryAttempts: q.MaxDeliveryAttempts,
	}, nil
}

// The size of an enqueue batch.
const MaxEnqueueBatch = 1000

// ValidateNewMessages checks a request of one or more messages: 1 to MaxEnqueueBatch of
// them (invalid_batch_size), each valid (see Validate), the first invalid one reported as
// an *EntryError.
func ValidateNewMessages(messages []NewMessage) error {
	if len(messages) == 0 || len(messages) > MaxEnqueueBatch {
		return invalid(CodeInvalidBatchSize, fmt.Sprintf("messages must hold 1 to %d entries", MaxEnqueueBatch))
	}
	for i, n := range messages {
		if err := n.Validate(); err != nil {
			return atEntry(i, err)
		}
	}
	return nil
}

// Message is a stored message with its delivery state.
type Message struct {
	QueueID ID
	ID      ID
	// Seq is the enqueue order, shared by every instance; a redelivery keeps it.
	Seq        int64
	Priority   Priority
	Payload    string
	Attributes Attributes
	EnqueuedAt time.Time
	ExpiresAt  time.Time
	// VisibleAt is the earliest moment a dequeue may take the message: its enqueue, the end
	// of its delay, or the end of its current delivery's visibility timeout.
	VisibleAt time.Time
	// ReceiptHandle names the latest delivery; zero before the first, and after a release
	// or an undelivery, when no delivery holds the message.
	ReceiptHandle    ID
	DeliveryAttempts int
	// FirstDeliveredAt is the moment of the first delivery; zero before it.
	FirstDeliveredAt    time.Time
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
		Attributes:          e.Attributes,
		EnqueuedAt:          now,
		ExpiresAt:           now.Add(e.TTL),
		VisibleAt:           now.Add(e.Delay),
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
