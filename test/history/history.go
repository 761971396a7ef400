// Package history records what the clients of a Retsu queue saw, one operation at a time,
// and checks that record against the queue's promises in the style of Jepsen's queue
// checkers: no message lost, none unexpected, no two deliveries of a message at once, no
// stale acknowledgement that removes a newer delivery, and an exhausted message in exactly
// one place.
//
// Every operation is recorded with the times its client sent it and received the answer,
// and an Outcome. An operation whose outcome is Unknown (a timeout, a 5xx answer, a
// connection lost after sending) may or may not have happened, and the checker allows both.
package history

import (
	"sync"
	"time"
)

// Outcome is what a client knows about an operation once it returned.
type Outcome int

// The outcomes.
const (
	// OK operations happened: the server answered with success.
	OK Outcome = iota + 1
	// Failed operations certainly did not happen: the server refused them (4xx), or no
	// connection could be made to send them.
	Failed
	// Unknown operations may or may not have happened: the client timed out, the server
	// answered 5xx, or the connection broke after the request was sent.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return "invalid"
}

// Enqueue is one attempt to add a message. Its Payload is unique to the attempt, which lets
// the checker tell which attempt a delivered message came from.
type Enqueue struct {
	Payload string
	// MessageID is the ID that a 201 answered; empty otherwise.
	MessageID  string
	Start, End time.Time
	Outcome    Outcome
}

// Delivery is a message as a dequeue returned it.
type Delivery struct {
	MessageID     string
	Payload       string
	ReceiptHandle string
	Attempts      int
}

// Dequeue is one attempt to take a message.
type Dequeue struct {
	Start, End time.Time
	Outcome    Outcome
	// Delivery is the message answered with 200; nil for a 204 and for every outcome but OK.
	Delivery *Delivery
}

// Acknowledge is one attempt to complete a delivery.
type Acknowledge struct {
	MessageID     string
	ReceiptHandle string
	Start, End    time.Time
	Outcome       Outcome
}

// History is the record of a run. It is safe for concurrent use.
type History struct {
	mu           sync.Mutex
	enqueues     []Enqueue
	dequeues     []Dequeue
	acknowledges []Acknowledge
}

// AddEnqueue records an enqueue.
func (h *History) AddEnqueue(e Enqueue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.enqueues = append(h.enqueues, e)
}

// AddDequeue records a dequeue.
func (h *History) AddDequeue(d Dequeue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dequeues = append(h.dequeues, d)
}

// AddAcknowledge records an acknowledgement.
func (h *History) AddAcknowledge(a Acknowledge) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.acknowledges = append(h.acknowledges, a)
}

// Stored is a message found in storage at the end of a run.
type Stored struct {
	Payload  string
	Attempts int
	// Expired is set for a queued message whose lifetime has ended.
	Expired bool
}

// Final is what storage holds for the queue at the end of a run, by message ID: the
// messages still queued and the dead letters.
type Final struct {
	Queued      map[string]Stored
	DeadLetters map[string]Stored
}

// Limits are the queue's settings that the checker needs.
type Limits struct {
	VisibilityTimeout   time.Duration
	MaxDeliveryAttempts int
	// ClockMargin is how far the clients' clock and the database's may disagree; the
	// checker reports a violation only when it holds by more than this margin.
	ClockMargin time.Duration
}
