// Package history records what the clients of a Retsu queue saw, one operation at a time,
// and checks that record against the queue's promises in the style of Jepsen's queue
// checkers: no message lost, none unexpected, no two deliveries of a message at once, no
// stale acknowledgement that removes a newer delivery, and an exhausted message in exactly
// one place. Part 2 of the contract adds its own: a batch enqueue is all or nothing, an
// extended lease holds until its new end, a released message comes back, a redriven one is
// still in exactly one place, and a retry with an idempotency key never stores twice.
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
// the checker tell which attempt a delivered message came from; only the retries of a
// request with an idempotency key share it, and they share the Key too.
type Enqueue struct {
	Payload string
	// Key is the Idempotency-Key the request carried; empty for none.
	Key string
	// MessageID is the ID that a 201 answered; empty otherwise.
	MessageID string
	// Replayed is set when the 201 said Idempotent-Replayed: true.
	Replayed   bool
	Start, End time.Time
	Outcome    Outcome
}

// BatchEnqueue is one attempt to add messages in one request, all or nothing. Its payloads
// are unique to the attempt, as an Enqueue's; only the retries of a batch with an
// idempotency key share them (the same ones in the same order), and they share the Key.
type BatchEnqueue struct {
	Payloads []string
	Key      string
	// MessageIDs are the IDs that a 201 answered, one per payload; nil otherwise.
	MessageIDs []string
	Replayed   bool
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

// Dequeue is one attempt to take a message, or a batch of them.
type Dequeue struct {
	Start, End time.Time
	Outcome    Outcome
	// Delivery is the message answered with 200; nil for a 204 and for every outcome but OK.
	Delivery *Delivery
	// Deliveries are the messages that a batch dequeue answered, in its order; a batch's
	// empty answer leaves both this and Delivery empty.
	Deliveries []Delivery
}

// Acknowledge is one attempt to complete a delivery: a request of its own, or an entry of a
// batch. A single acknowledgement answers 204 whether or not it removed the message, so its
// Outcome is OK for any 204; a batch entry's answer says: OK with Removed for
// "acknowledged": true, Failed for false (it certainly removed nothing).
type Acknowledge struct {
	MessageID     string
	ReceiptHandle string
	Start, End    time.Time
	Outcome       Outcome
	// Removed is set when the answer said that this acknowledgement removed the message.
	Removed bool
}

// Extend is one attempt to make a delivery's lease end Timeout after the request. A 409
// lease_lost is Failed: nothing changed.
type Extend struct {
	MessageID     string
	ReceiptHandle string
	Timeout       time.Duration
	Start, End    time.Time
	Outcome       Outcome
}

// Release is one attempt to end a delivery's lease at once, the message to be deliverable
// again after Delay. A 409 lease_lost is Failed: nothing changed.
type Release struct {
	MessageID     string
	ReceiptHandle string
	Delay         time.Duration
	Start, End    time.Time
	Outcome       Outcome
}

// Redrive is one attempt to send dead letters back to their queue.
type Redrive struct {
	// IDs are the dead letters asked for; nil for a redrive of the oldest, by limit, which
	// may have moved any of them.
	IDs []string
	// Redriven are the IDs that a 200 named as moved.
	Redriven   []string
	Start, End time.Time
	Outcome    Outcome
}

// History is the record of a run. It is safe for concurrent use.
type History struct {
	mu            sync.Mutex
	enqueues      []Enqueue
	batchEnqueues []BatchEnqueue
	dequeues      []Dequeue
	acknowledges  []Acknowledge
	extends       []Extend
	releases      []Release
	redrives      []Redrive
}

// AddEnqueue records an enqueue.
func (h *History) AddEnqueue(e Enqueue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.enqueues = append(h.enqueues, e)
}

// AddBatchEnqueue records a batch enqueue.
func (h *History) AddBatchEnqueue(e BatchEnqueue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batchEnqueues = append(h.batchEnqueues, e)
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

// AddExtend records an extend.
func (h *History) AddExtend(e Extend) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.extends = append(h.extends, e)
}

// AddRelease records a release.
func (h *History) AddRelease(r Release) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releases = append(h.releases, r)
}

// AddRedrive records a redrive.
func (h *History) AddRedrive(r Redrive) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.redrives = append(h.redrives, r)
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
