package history

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind names the promise that a violation breaks.
type Kind string

// The kinds of violation.
const (
	// Lost: a message that existed (its enqueue was answered 201, or it was seen) is
	// neither queued nor dead-lettered at the end, and no acknowledgement of its latest
	// delivery, sent while that delivery could still run, explains its removal.
	Lost Kind = "lost"
	// Unexpected: a message came out that no enqueue attempted, whose enqueue failed, under
	// another ID than its 201 named, or with another payload.
	Unexpected Kind = "unexpected"
	// Overlap: a dequeue returned a message while an earlier delivery of it was certainly
	// still running, or two deliveries carry the same attempt number.
	Overlap Kind = "overlapping leases"
	// StaleAcknowledgement: a message disappeared although only handles of earlier
	// deliveries were acknowledged after a newer delivery began.
	StaleAcknowledgement Kind = "stale acknowledgement removed a newer delivery"
	// Resurrected: an acknowledgement certainly completed within its delivery's visibility
	// timeout, yet the message was delivered again or is still stored.
	Resurrected Kind = "acknowledged message came back"
	// TwoPlaces: an exhausted message is both queued and dead-lettered, or was delivered
	// again after it was dead-lettered.
	TwoPlaces Kind = "exhausted message in two places"
	// AttemptLimit: a message was delivered more often than its limit allows, or
	// dead-lettered before it used its attempts.
	AttemptLimit Kind = "attempt limit broken"
)

// Violation is one broken promise.
type Violation struct {
	Kind      Kind
	MessageID string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: message %s: %s", v.Kind, v.MessageID, v.Detail)
}

// Counts tallies the outcomes of one kind of operation.
type Counts struct {
	OK, Failed, Unknown int
}

func (c *Counts) add(o Outcome) {
	switch o {
	case OK:
		c.OK++
	case Failed:
		c.Failed++
	default:
		c.Unknown++
	}
}

// Report is the verdict on a history, with the figures of the run.
type Report struct {
	Enqueues, Dequeues, Acknowledges Counts
	// Empty counts the dequeues answered 204.
	Empty int
	// Messages counts the distinct messages known to have existed.
	Messages int
	// Deliveries counts the dequeues that returned a message; Delivered, the distinct
	// messages among them; Duplicates, the deliveries beyond the first of each message.
	Deliveries, Delivered, Duplicates int
	// Acknowledged counts the messages removed by an acknowledgement of their latest
	// delivery.
	Acknowledged int
	// Remaining, Expired and DeadLettered count the messages in storage at the end.
	Remaining, Expired, DeadLettered int
	// UnknownEnqueuesApplied counts the enqueues of unknown outcome whose message exists.
	UnknownEnqueuesApplied int
	// HiddenDeliveries counts the deliveries that happened but that no client saw, from
	// the gaps in the attempt numbers.
	HiddenDeliveries int
	Violations       []Violation
}

// OK reports whether the history keeps every promise.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Count returns the number of violations of kind k.
func (r Report) Count(k Kind) int {
	n := 0
	for _, v := range r.Violations {
		if v.Kind == k {
			n++
		}
	}
	return n
}

// Unknown counts the operations of unknown outcome.
func (r Report) Unknown() int {
	return r.Enqueues.Unknown + r.Dequeues.Unknown + r.Acknowledges.Unknown
}

// String summarises the figures on one line, followed by up to ten violations.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "messages=%d deliveries=%d duplicates=%d acknowledged=%d dead-lettered=%d remaining=%d expired=%d "+
		"lost=%d unexpected=%d overlaps=%d stale-acks=%d resurrected=%d two-places=%d attempt-limit=%d "+
		"unknown(enqueue=%d dequeue=%d acknowledge=%d) unknown-enqueues-applied=%d hidden-deliveries=%d",
		r.Messages, r.Deliveries, r.Duplicates, r.Acknowledged, r.DeadLettered, r.Remaining, r.Expired,
		r.Count(Lost), r.Count(Unexpected), r.Count(Overlap), r.Count(StaleAcknowledgement), r.Count(Resurrected),
		r.Count(TwoPlaces), r.Count(AttemptLimit),
		r.Enqueues.Unknown, r.Dequeues.Unknown, r.Acknowledges.Unknown, r.UnknownEnqueuesApplied, r.HiddenDeliveries)
	for i, v := range r.Violations {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(r.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s", v)
	}
	return b.String()
}

// observed is a delivery with the times of the dequeue that returned it.
type observed struct {
	Delivery
	start, end time.Time
}

// message is everything the history and the final state say about one message.
type message struct {
	id      string
	payload string
	// attempt is the enqueue whose payload the message carries; nil if none did.
	attempt      *Enqueue
	deliveries   []observed // sorted by attempt number before the checks
	acknowledges []Acknowledge
}

// checker holds the indexes of one Check.
type checker struct {
	limits   Limits
	final    Final
	attempts map[string]*Enqueue // by payload
	messages map[string]*message // by message ID
	// idOf is the ID under which each payload was first seen.
	idOf   map[string]string
	report Report
}

// Check returns the verdict on h, given what storage held at the end of the run. Every
// payload must be unique to one enqueue attempt; Check panics otherwise.
func Check(h *History, final Final, limits Limits) Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &checker{
		limits: limits, final: final,
		attempts: map[string]*Enqueue{}, messages: map[string]*message{}, idOf: map[string]string{},
	}
	c.indexEnqueues(h.enqueues)
	c.indexDeliveries(h.dequeues)
	c.indexStored(final.Queued)
	c.indexStored(final.DeadLetters)
	c.indexAcknowledges(h.acknowledges)
	ids := make([]string, 0, len(c.messages))
	for id := range c.messages {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a stable order of violations
	for _, id := range ids {
		c.checkMessage(c.messages[id])
	}
	c.report.Messages = len(c.messages)
	return c.report
}

func (c *checker) violation(k Kind, id, format string, args ...any) {
	c.report.Violations = append(c.report.Violations, Violation{Kind: k, MessageID: id, Detail: fmt.Sprintf(format, args...)})
}

func (c *checker) indexEnqueues(enqueues []Enqueue) {
	for i := range enqueues {
		e := &enqueues[i]
		c.report.Enqueues.add(e.Outcome)
		if _, twice := c.attempts[e.Payload]; twice {
			panic(fmt.Sprintf("history: payload %q was attempted twice; payloads must be unique", e.Payload))
		}
		c.attempts[e.Payload] = e
		if e.Outcome == OK {
			c.messages[e.MessageID] = &message{id: e.MessageID, payload: e.Payload, attempt: e}
			c.idOf[e.Payload] = e.MessageID
		}
	}
}

func (c *checker) indexDeliveries(dequeues []Dequeue) {
	for _, d := range dequeues {
		c.report.Dequeues.add(d.Outcome)
		switch {
		case d.Outcome != OK:
		case d.Delivery == nil:
			c.report.Empty++
		default:
			c.report.Deliveries++
			if m := c.sighting(d.Delivery.MessageID, d.Delivery.Payload, "delivered"); m != nil {
				m.deliveries = append(m.deliveries, observed{*d.Delivery, d.Start, d.End})
			}
		}
	}
}

func (c *checker) indexStored(stored map[string]Stored) {
	for id, s := range stored {
		c.sighting(id, s.Payload, "stored")
	}
}

func (c *checker) indexAcknowledges(acknowledges []Acknowledge) {
	for _, a := range acknowledges {
		c.report.Acknowledges.add(a.Outcome)
		if m, ok := c.messages[a.MessageID]; ok && a.Outcome != Failed {
			m.acknowledges = append(m.acknowledges, a)
		}
	}
}

// sighting checks a message seen in a delivery or in storage against the enqueue attempts
// and returns its record, or nil when it could not have existed.
func (c *checker) sighting(id, payload, how string) *message {
	attempt, attempted := c.attempts[payload]
	switch {
	case !attempted:
		c.violation(Unexpected, id, "%s a payload that no enqueue attempted (%.40q)", how, payload)
		return nil
	case attempt.Outcome == Failed:
		c.violation(Unexpected, id, "%s the payload of an enqueue that failed (%.40q)", how, payload)
		return nil
	case c.idOf[payload] != "" && c.idOf[payload] != id:
		c.violation(Unexpected, id, "%s with the payload %.40q, which message %s carries", how, payload, c.idOf[payload])
		return nil
	}
	c.idOf[payload] = id
	m, known := c.messages[id]
	if !known {
		m = &message{id: id, payload: payload, attempt: attempt}
		c.messages[id] = m
	}
	if m.payload != payload {
		c.violation(Unexpected, id, "%s with the payload %.40q, enqueued as %.40q", how, payload, m.payload)
	}
	return m
}
