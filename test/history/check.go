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
	// neither queued nor dead-lettered at the end, and no acknowledgement explains its
	// removal: one of its latest delivery, sent while that delivery's lease could still run
	// (extended, or ended early by a release), or one that said it removed the message. A
	// released or redriven message that vanished is lost.
	Lost Kind = "lost"
	// Unexpected: a message came out that no enqueue attempted, whose enqueue failed, under
	// another ID than its 201 named, or with another payload; or a redrive named an ID that
	// no message has, or a 201 was marked a replay with no earlier request to repeat.
	Unexpected Kind = "unexpected"
	// Overlap: a dequeue returned a message while an earlier delivery of it was certainly
	// still running (its visibility timeout, or the new end of an extend, or before the delay
	// of a release), or two deliveries carry the same attempt number with no redrive
	// between them.
	Overlap Kind = "overlapping leases"
	// StaleAcknowledgement: a message disappeared although only handles of earlier
	// deliveries were acknowledged after a newer delivery began; or an acknowledgement said
	// it removed the message with a handle that a newer delivery had replaced, or whose lease
	// had certainly ended.
	StaleAcknowledgement Kind = "stale acknowledgement removed a newer delivery"
	// Resurrected: an acknowledgement removed the message (it certainly completed within
	// its delivery's lease, or its answer said so), yet the message was delivered or
	// redriven again, or is still stored.
	Resurrected Kind = "acknowledged message came back"
	// TwoPlaces: an exhausted message is both queued and dead-lettered, or was delivered in
	// its last life after it was dead-lettered, or a redrive answered it moved from the dead
	// letters while a delivery certainly held it in its queue.
	TwoPlaces Kind = "exhausted message in two places"
	// AttemptLimit: a message was delivered more often than its limit allows, or
	// dead-lettered before it used its attempts.
	AttemptLimit Kind = "attempt limit broken"
	// BatchSplit: some but not all of a batch's messages exist, whether its 201 came or its
	// outcome was unknown.
	BatchSplit Kind = "batch split"
	// DuplicateEnqueue: a request with an idempotency key, or its retries, stored a payload
	// under two IDs, or were answered with two different IDs for it.
	DuplicateEnqueue Kind = "duplicate enqueue"
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
	// Dequeues counts single and batch dequeues; Acknowledges, single acknowledgements and
	// the entries of batch ones.
	Enqueues, Dequeues, Acknowledges Counts
	// The operations of Part 2. A failed Extend or Release is mostly a 409 lease_lost.
	BatchEnqueues, Extends, Releases, Redrives Counts
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
	// Replays counts the 201s marked Idempotent-Replayed; RetriedUnknown, the enqueue
	// requests of unknown outcome that a retry with the same key followed.
	Replays, RetriedUnknown int
	// Redriven counts the moves that redrives answered.
	Redriven   int
	Violations []Violation
	// part2 is set when the history holds an operation of Part 2, whose figures String
	// then shows.
	part2 bool
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
	return r.Enqueues.Unknown + r.Dequeues.Unknown + r.Acknowledges.Unknown +
		r.BatchEnqueues.Unknown + r.Extends.Unknown + r.Releases.Unknown + r.Redrives.Unknown
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
	if r.part2 {
		fmt.Fprintf(&b, " batch-splits=%d duplicate-enqueues=%d | batch-enqueues=%d extends=%d (lease lost %d) releases=%d (lease lost %d) "+
			"redrives=%d redriven=%d replays=%d unknown-retried=%d unknown(batch-enqueue=%d extend=%d release=%d redrive=%d)",
			r.Count(BatchSplit), r.Count(DuplicateEnqueue), r.BatchEnqueues.OK+r.BatchEnqueues.Failed+r.BatchEnqueues.Unknown,
			r.Extends.OK+r.Extends.Failed+r.Extends.Unknown, r.Extends.Failed, r.Releases.OK+r.Releases.Failed+r.Releases.Unknown,
			r.Releases.Failed, r.Redrives.OK+r.Redrives.Failed+r.Redrives.Unknown, r.Redriven, r.Replays, r.RetriedUnknown,
			r.BatchEnqueues.Unknown, r.Extends.Unknown, r.Releases.Unknown, r.Redrives.Unknown)
	}
	for i, v := range r.Violations {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(r.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s", v)
	}
	return b.String()
}

// observed is a delivery with the times of the dequeue that returned it, and the bounds of
// when its lease ended, from its claim and the extends and releases of its handle.
type observed struct {
	Delivery
	start, end time.Time
	// low is when the lease certainly still ran: no other claim of the message came before
	// it. high is when the lease had certainly ended: no acknowledgement sent after it
	// removed the message.
	low, high time.Time
}

// leaseOp is a claim, an extend or a release that may have set when a lease ends, with the
// bounds of the end it set.
type leaseOp struct {
	start, end time.Time
	outcome    Outcome
	low, high  time.Time
	release    bool
}

// request is one enqueue request, single or batch.
type request struct {
	payloads, ids []string
	key           string
	replayed      bool
	batch         bool
	start, end    time.Time
	outcome       Outcome
}

// group is an enqueue request with the retries that repeated it under its idempotency key;
// a request without a key is a group of its own.
type group struct {
	requests []*request // in the order they were sent
	payloads []string
	key      string
	batch    bool
	// outcome is the best of the requests': OK if one was, else Unknown if one was.
	outcome Outcome
	// ids are those of the first 201; nil if none came.
	ids []string
}

// attempt is one payload of a group: what a delivered or stored message carrying it came
// from.
type attempt struct {
	group *group
	index int
}

func (a *attempt) outcome() Outcome { return a.group.outcome }

// message is everything the history and the final state say about one message.
type message struct {
	id      string
	payload string
	// attempt is the enqueue whose payload the message carries; nil if none did.
	attempt      *attempt
	deliveries   []observed // sorted by attempt number before the checks
	acknowledges []Acknowledge
	// redriven are the redrives whose 200 named the message; redrives, those that may have
	// moved it, these and the ones of unknown outcome that asked for it by ID.
	redriven, redrives []*Redrive
}

// handle names one delivery's lease.
type handle struct{ messageID, receiptHandle string }

// checker holds the indexes of one Check.
type checker struct {
	limits   Limits
	final    Final
	attempts map[string]*attempt // by payload
	groups   []*group
	messages map[string]*message // by message ID
	// idOf is the ID under which each payload was first seen.
	idOf map[string]string
	// seen holds the payloads delivered or stored; sighted, the IDs, those of messages that
	// could not have existed included.
	seen, sighted map[string]bool
	// leaseOps are the extends and releases that may have changed each lease.
	leaseOps map[handle][]leaseOp
	// anyRedrives are the redrives by limit of unknown outcome, which may have moved any
	// message.
	anyRedrives []*Redrive
	report      Report
}

// Check returns the verdict on h, given what storage held at the end of the run. Every
// payload must be unique to one enqueue request and its retries under one idempotency key,
// which repeat it exactly; Check panics otherwise.
func Check(h *History, final Final, limits Limits) Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &checker{
		limits: limits, final: final,
		attempts: map[string]*attempt{}, messages: map[string]*message{}, idOf: map[string]string{},
		seen: map[string]bool{}, sighted: map[string]bool{}, leaseOps: map[handle][]leaseOp{},
	}
	c.report.part2 = len(h.batchEnqueues)+len(h.extends)+len(h.releases)+len(h.redrives) > 0 ||
		slices.ContainsFunc(h.enqueues, func(e Enqueue) bool { return e.Key != "" }) ||
		slices.ContainsFunc(h.dequeues, func(d Dequeue) bool { return len(d.Deliveries) > 0 })
	c.indexEnqueues(h.enqueues, h.batchEnqueues)
	c.indexDeliveries(h.dequeues)
	c.indexStored(final.Queued)
	c.indexStored(final.DeadLetters)
	c.checkBatches()
	c.indexAcknowledges(h.acknowledges)
	c.indexLeaseOps(h.extends, h.releases)
	c.indexRedrives(h.redrives)
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

// indexEnqueues gathers the requests into groups by idempotency key, settles what each group
// stored, and registers the messages that its 201 named.
func (c *checker) indexEnqueues(enqueues []Enqueue, batches []BatchEnqueue) {
	var requests []*request
	for _, e := range enqueues {
		c.report.Enqueues.add(e.Outcome)
		r := &request{payloads: []string{e.Payload}, key: e.Key, replayed: e.Replayed, start: e.Start, end: e.End, outcome: e.Outcome}
		if e.Outcome == OK {
			r.ids = []string{e.MessageID}
		}
		requests = append(requests, r)
	}
	for _, b := range batches {
		c.report.BatchEnqueues.add(b.Outcome)
		r := &request{payloads: b.Payloads, key: b.Key, replayed: b.Replayed, batch: true, start: b.Start, end: b.End, outcome: b.Outcome}
		if b.Outcome == OK {
			if len(b.MessageIDs) != len(b.Payloads) {
				panic(fmt.Sprintf("history: a batch of %d payloads recorded with %d IDs", len(b.Payloads), len(b.MessageIDs)))
			}
			r.ids = b.MessageIDs
		}
		requests = append(requests, r)
	}
	slices.SortStableFunc(requests, func(a, b *request) int { return a.start.Compare(b.start) })
	byKey := map[string]*group{}
	for _, r := range requests {
		if g := byKey[r.key]; r.key != "" && g != nil {
			if g.batch != r.batch || !slices.Equal(g.payloads, r.payloads) {
				panic(fmt.Sprintf("history: the requests with the key %q carry different payloads; a retry must repeat its request", r.key))
			}
			g.requests = append(g.requests, r)
			continue
		}
		g := &group{requests: []*request{r}, payloads: r.payloads, key: r.key, batch: r.batch}
		if r.key != "" {
			byKey[r.key] = g
		}
		c.groups = append(c.groups, g)
		for i, payload := range r.payloads {
			if _, twice := c.attempts[payload]; twice {
				panic(fmt.Sprintf("history: payload %q was attempted twice; payloads must be unique", payload))
			}
			c.attempts[payload] = &attempt{group: g, index: i}
		}
	}
	for _, g := range c.groups {
		c.settle(g)
	}
}

// settle finds what a group's answers say: its outcome, the IDs of its first 201, which
// every other 201 must repeat, and replays that had a request to repeat.
func (c *checker) settle(g *group) {
	g.outcome = Failed
	for i, r := range g.requests {
		switch {
		case r.outcome == OK:
			g.outcome = OK
		case r.outcome == Unknown && g.outcome != OK:
			g.outcome = Unknown
		}
		if r.outcome == Unknown && g.key != "" && i < len(g.requests)-1 {
			c.report.RetriedUnknown++
		}
		if r.outcome != OK {
			continue
		}
		if r.replayed {
			c.report.Replays++
			if !slices.ContainsFunc(g.requests, func(q *request) bool { return q != r && q.outcome != Failed && q.start.Before(r.end) }) {
				c.violation(Unexpected, r.ids[0], "answered as a replay of the key %q, which no earlier request may have stored", g.key)
			}
		}
		if g.ids == nil {
			g.ids = r.ids
			continue
		}
		for j, id := range r.ids {
			if id != g.ids[j] {
				c.violation(DuplicateEnqueue, id, "answered for the payload %.40q, which an earlier 201 with the key %q named %s", g.payloads[j], g.key, g.ids[j])
			}
		}
	}
	for i, id := range g.ids {
		payload := g.payloads[i]
		c.messages[id] = &message{id: id, payload: payload, attempt: c.attempts[payload]}
		c.idOf[payload] = id
	}
}

func (c *checker) indexDeliveries(dequeues []Dequeue) {
	for _, d := range dequeues {
		c.report.Dequeues.add(d.Outcome)
		if d.Outcome != OK {
			continue
		}
		deliveries := d.Deliveries
		if d.Delivery != nil {
			deliveries = append(slices.Clip(deliveries), *d.Delivery)
		}
		if len(deliveries) == 0 {
			c.report.Empty++
		}
		for _, delivery := range deliveries {
			c.report.Deliveries++
			if m := c.sighting(delivery.MessageID, delivery.Payload, "delivered"); m != nil {
				m.deliveries = append(m.deliveries, observed{Delivery: delivery, start: d.Start, end: d.End})
			}
		}
	}
}

func (c *checker) indexStored(stored map[string]Stored) {
	for id, s := range stored {
		c.sighting(id, s.Payload, "stored")
	}
}

// checkBatches finds the batches of which some messages exist and others do not. A message
// that existed was seen, delivered or stored, by the end of a run that drained its queue.
func (c *checker) checkBatches() {
	for _, g := range c.groups {
		if !g.batch || g.outcome == Failed {
			continue
		}
		var present, missing []int
		for i, payload := range g.payloads {
			if c.seen[payload] {
				present = append(present, i)
			} else {
				missing = append(missing, i)
			}
		}
		if len(present) == 0 || len(missing) == 0 {
			continue
		}
		id := c.idOf[g.payloads[present[0]]]
		if g.ids != nil {
			id = g.ids[missing[0]]
		}
		c.violation(BatchSplit, id, "%d of the %d messages of a batch (%s) exist; entries %v do not",
			len(present), len(g.payloads), g.outcome, missing[:min(len(missing), 10)])
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

// indexLeaseOps keeps the extends and releases that may have changed a lease, with the
// bounds of the end each set: an extend, Timeout after it took effect; a release, at once
// for an acknowledgement, and after its Delay for the next claim.
func (c *checker) indexLeaseOps(extends []Extend, releases []Release) {
	for _, e := range extends {
		c.report.Extends.add(e.Outcome)
		if e.Outcome != Failed {
			h := handle{e.MessageID, e.ReceiptHandle}
			c.leaseOps[h] = append(c.leaseOps[h], leaseOp{start: e.Start, end: e.End, outcome: e.Outcome,
				low: e.Start.Add(e.Timeout), high: e.End.Add(e.Timeout)})
		}
	}
	for _, r := range releases {
		c.report.Releases.add(r.Outcome)
		if r.Outcome != Failed {
			h := handle{r.MessageID, r.ReceiptHandle}
			c.leaseOps[h] = append(c.leaseOps[h], leaseOp{start: r.Start, end: r.End, outcome: r.Outcome,
				low: r.Start.Add(r.Delay), high: r.End, release: true})
		}
	}
}

// indexRedrives notes, for each message, the redrives that may have moved it; an ID that a
// redrive answered must be a message's, or at least one seen (and reported) elsewhere.
func (c *checker) indexRedrives(redrives []Redrive) {
	for i := range redrives {
		r := &redrives[i]
		c.report.Redrives.add(r.Outcome)
		switch {
		case r.Outcome == OK:
			c.report.Redriven += len(r.Redriven)
			for _, id := range r.Redriven {
				m, ok := c.messages[id]
				switch {
				case !ok && !c.sighted[id]:
					c.violation(Unexpected, id, "redriven, but no message has this ID")
					continue
				case !ok:
					continue // a message already reported, unexpected or a duplicate
				}
				m.redriven = append(m.redriven, r)
				m.redrives = append(m.redrives, r)
			}
		case r.Outcome == Unknown && r.IDs == nil:
			c.anyRedrives = append(c.anyRedrives, r)
		case r.Outcome == Unknown:
			for _, id := range r.IDs {
				if m, ok := c.messages[id]; ok {
					m.redrives = append(m.redrives, r)
				}
			}
		}
	}
}

// sighting checks a message seen in a delivery or in storage against the enqueue attempts
// and returns its record, or nil when it could not have existed.
func (c *checker) sighting(id, payload, how string) *message {
	c.sighted[id] = true
	attempt, attempted := c.attempts[payload]
	switch {
	case !attempted:
		c.violation(Unexpected, id, "%s a payload that no enqueue attempted (%.40q)", how, payload)
		return nil
	case attempt.outcome() == Failed:
		c.violation(Unexpected, id, "%s the payload of an enqueue that failed (%.40q)", how, payload)
		return nil
	case c.idOf[payload] != "" && c.idOf[payload] != id && attempt.group.key != "":
		c.violation(DuplicateEnqueue, id, "%s with the payload %.40q, which message %s carries: the key %q stored it twice",
			how, payload, c.idOf[payload], attempt.group.key)
		return nil
	case c.idOf[payload] != "" && c.idOf[payload] != id:
		c.violation(Unexpected, id, "%s with the payload %.40q, which message %s carries", how, payload, c.idOf[payload])
		return nil
	}
	c.idOf[payload] = id
	c.seen[payload] = true
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
