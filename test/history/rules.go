package history

import (
	"cmp"
	"slices"
	"time"
)

// checkMessage applies every rule to one message and adds it to the figures.
func (c *checker) checkMessage(m *message) {
	for i := range m.deliveries {
		c.boundLease(m, &m.deliveries[i])
	}
	slices.SortStableFunc(m.deliveries, func(a, b observed) int {
		return cmp.Or(cmp.Compare(a.Attempts, b.Attempts), a.start.Compare(b.start))
	})
	queued, isQueued := c.final.Queued[m.id]
	deadLetter, isDeadLettered := c.final.DeadLetters[m.id]
	c.count(m, queued, isQueued, deadLetter, isDeadLettered)
	c.checkLeases(m)
	c.checkRedrives(m)
	c.checkAttemptLimit(m, deadLetter, isDeadLettered)
	c.checkOnePlace(m, deadLetter, isQueued, isDeadLettered)
	c.checkAcknowledged(m, isQueued || isDeadLettered)
	if !isQueued && !isDeadLettered {
		c.checkRemoval(m)
	}
}

// certainlyBefore reports whether a is before b by more than the clock margin.
func (c *checker) certainlyBefore(a, b time.Time) bool {
	return a.Add(c.limits.ClockMargin).Before(b)
}

// boundLease sets when a delivery's lease certainly still ran and when it had certainly
// ended. The claim, each extend and each release of the handle set the lease's end when
// they took effect, and the last to take effect decides it: any of them may be that one,
// unless it certainly happened before an operation that certainly took effect (an OK one:
// the claim always comes before the extends and releases of its handle). The lease ran
// at least until the earliest end that one of the possible last ones may have set, and had
// ended by the latest. Without extends and releases: from the dequeue's send time plus the
// visibility timeout (the database claimed the message later) to its answer's time plus the
// timeout.
func (c *checker) boundLease(m *message, d *observed) {
	ops := c.leaseOps[handle{m.id, d.ReceiptHandle}]
	tookEffect := func(q leaseOp) bool { return q.outcome == OK }
	var last []leaseOp
	if !slices.ContainsFunc(ops, tookEffect) {
		last = append(last, leaseOp{start: d.start, end: d.end, outcome: OK,
			low: d.start.Add(c.limits.VisibilityTimeout), high: d.end.Add(c.limits.VisibilityTimeout)})
	}
	for _, op := range ops {
		if !slices.ContainsFunc(ops, func(q leaseOp) bool { return tookEffect(q) && op.end.Before(q.start) }) {
			last = append(last, op)
		}
	}
	d.low, d.high = last[0].low, last[0].high
	for _, op := range last[1:] {
		if op.low.Before(d.low) {
			d.low = op.low
		}
		if op.high.After(d.high) {
			d.high = op.high
		}
	}
}

// mayPrecede reports whether delivery a may have claimed the message before delivery b did.
// Not when b was answered before a's lease could have ended; and within one life of the
// message attempt numbers order its claims, so not when a's is not lower either, unless a
// redrive, which starts the attempts again, may have come between them.
func (c *checker) mayPrecede(m *message, a, b *observed) bool {
	if c.certainlyBefore(b.end, a.low) {
		return false
	}
	return a.Attempts < b.Attempts || c.mayRedriveBetween(m, a.start, b.end)
}

// certainlyAfter reports whether delivery b claimed the message after delivery a did: it may
// have, and a may not have after it. Of two deliveries that overlap, neither is after the
// other.
func (c *checker) certainlyAfter(m *message, b, a *observed) bool {
	return !c.mayPrecede(m, b, a) && c.mayPrecede(m, a, b)
}

// mayRedriveBetween reports whether a redrive may have moved the message between from and to.
func (c *checker) mayRedriveBetween(m *message, from, to time.Time) bool {
	between := func(r *Redrive) bool { return r.End.After(from) && r.Start.Before(to) }
	return slices.ContainsFunc(m.redrives, between) || slices.ContainsFunc(c.anyRedrives, between)
}

// lastRedriveEnd returns when the last redrive that may have moved the message ended: the
// deliveries sent after it are of the message's last life.
func (c *checker) lastRedriveEnd(m *message) time.Time {
	var last time.Time
	for _, r := range slices.Concat(m.redrives, c.anyRedrives) {
		if r.End.After(last) {
			last = r.End
		}
	}
	return last
}

// lastLife returns the deliveries certainly of the message's last life: those sent after
// the last redrive that may have moved it.
func (c *checker) lastLife(m *message) []observed {
	since := c.lastRedriveEnd(m)
	return slices.DeleteFunc(slices.Clone(m.deliveries), func(d observed) bool { return !d.start.After(since) })
}

// finalRun returns, for the figures, the deliveries of a message's last life as far as its
// attempt numbers tell: of a message that no redrive may have moved, all; else, in the order
// their answers came, the last ones whose attempt numbers rise, since a redrive starts them
// again.
func (c *checker) finalRun(m *message) []observed {
	if len(m.redrives) == 0 && len(c.anyRedrives) == 0 {
		return m.deliveries
	}
	byAnswer := slices.SortedStableFunc(slices.Values(m.deliveries), func(a, b observed) int { return a.end.Compare(b.end) })
	first := len(byAnswer) - 1
	for first > 0 && byAnswer[first-1].Attempts < byAnswer[first].Attempts {
		first--
	}
	return byAnswer[max(first, 0):]
}

func (c *checker) count(m *message, queued Stored, isQueued bool, deadLetter Stored, isDeadLettered bool) {
	if n := len(m.deliveries); n > 0 {
		c.report.Delivered++
		c.report.Duplicates += n - 1
	}
	switch {
	case isQueued && queued.Expired:
		c.report.Expired++
	case isQueued:
		c.report.Remaining++
	}
	if isDeadLettered {
		c.report.DeadLettered++
	}
	if m.attempt != nil && m.attempt.outcome() == Unknown {
		c.report.UnknownEnqueuesApplied++
	}
	c.report.HiddenDeliveries += hiddenDeliveries(c.finalRun(m), max(queued.Attempts, deadLetter.Attempts))
}

// hiddenDeliveries counts the attempt numbers up to the highest known that no observed
// delivery carries: each is a delivery that happened without its client learning of it.
// Only the message's last life counts (finalRun), since a redrive starts its attempts again.
func hiddenDeliveries(deliveries []observed, storedAttempts int) int {
	seen := map[int]bool{}
	highest := storedAttempts
	for _, d := range deliveries {
		seen[d.Attempts] = true
		highest = max(highest, d.Attempts)
	}
	return max(highest-len(seen), 0)
}

// checkLeases finds deliveries that began while another certainly still ran: two of which
// neither may have claimed the message first. A lease certainly runs until its low bound
// (see boundLease), and a later dequeue certainly claimed the message before its answer
// arrived.
func (c *checker) checkLeases(m *message) {
	for i := range m.deliveries {
		earlier := &m.deliveries[i]
		for j := i + 1; j < len(m.deliveries); j++ {
			later := &m.deliveries[j]
			switch {
			case c.mayPrecede(m, earlier, later) || c.mayPrecede(m, later, earlier):
			case earlier.Attempts == later.Attempts:
				c.violation(Overlap, m.id, "two deliveries carry attempt %d", later.Attempts)
			default:
				c.violation(Overlap, m.id, "attempt %d was answered %v after attempt %d was requested, within its lease of at least %v",
					later.Attempts, later.end.Sub(earlier.start).Round(time.Millisecond), earlier.Attempts,
					earlier.low.Sub(earlier.start).Round(time.Millisecond))
			}
			if earlier.ReceiptHandle == later.ReceiptHandle {
				c.violation(StaleAcknowledgement, m.id, "attempts %d and %d share the receipt handle %s", earlier.Attempts, later.Attempts, later.ReceiptHandle)
			}
		}
	}
}

// checkRedrives finds redrives that answered a message as moved from the dead letters while
// a delivery certainly held it in its queue.
func (c *checker) checkRedrives(m *message) {
	for _, r := range m.redriven {
		for _, d := range m.deliveries {
			if d.end.Before(r.Start) && c.certainlyBefore(r.End, d.low) {
				c.violation(TwoPlaces, m.id, "redriven while attempt %d certainly held its lease in the queue", d.Attempts)
				return
			}
		}
	}
}

func (c *checker) checkAttemptLimit(m *message, deadLetter Stored, isDeadLettered bool) {
	limit := c.limits.MaxDeliveryAttempts
	if limit == 0 {
		return
	}
	if n := len(m.deliveries); n > 0 && m.deliveries[n-1].Attempts > limit {
		c.violation(AttemptLimit, m.id, "delivered at attempt %d, beyond the limit of %d", m.deliveries[n-1].Attempts, limit)
	}
	if isDeadLettered && deadLetter.Attempts < limit {
		c.violation(AttemptLimit, m.id, "dead-lettered after %d attempts, before the limit of %d", deadLetter.Attempts, limit)
	}
}

// checkOnePlace finds messages both queued and dead-lettered, and dead letters delivered in
// their last life at a later attempt than they were dead-lettered at.
func (c *checker) checkOnePlace(m *message, deadLetter Stored, isQueued, isDeadLettered bool) {
	if !isDeadLettered {
		return
	}
	if isQueued {
		c.violation(TwoPlaces, m.id, "both queued and dead-lettered")
	}
	if life := c.lastLife(m); len(life) > 0 && life[len(life)-1].Attempts > deadLetter.Attempts {
		c.violation(TwoPlaces, m.id, "delivered at attempt %d after it was dead-lettered at attempt %d", life[len(life)-1].Attempts, deadLetter.Attempts)
	}
}

// checkAcknowledged finds messages that came back after an acknowledgement removed them:
// one that said so (a batch entry's "acknowledged": true), or one that certainly reached the
// server while its delivery's lease still ran. A message removed is never delivered, redriven
// or stored again. An acknowledgement that said it removed the message must also have named
// its current lease: not one that a later claim had replaced, nor one certainly over.
func (c *checker) checkAcknowledged(m *message, stored bool) {
	for _, a := range m.acknowledges {
		if a.Outcome != OK {
			continue
		}
		i := slices.IndexFunc(m.deliveries, func(d observed) bool { return d.ReceiptHandle == a.ReceiptHandle })
		if i < 0 {
			continue
		}
		d := &m.deliveries[i]
		if a.Removed && c.staleRemoval(m, d, a) {
			return
		}
		if !a.Removed && !c.certainlyBefore(a.End, d.low) {
			continue
		}
		for j := range m.deliveries {
			if later := &m.deliveries[j]; j != i && (c.certainlyAfter(m, later, d) || later.start.After(a.End)) {
				c.violation(Resurrected, m.id, "delivered at attempt %d after attempt %d was acknowledged in time", later.Attempts, d.Attempts)
				return
			}
		}
		if slices.ContainsFunc(m.redriven, func(r *Redrive) bool { return r.Start.After(a.End) }) {
			c.violation(Resurrected, m.id, "redriven after attempt %d was acknowledged in time", d.Attempts)
			return
		}
		if stored {
			c.violation(Resurrected, m.id, "still stored after attempt %d was acknowledged in time", d.Attempts)
			return
		}
	}
}

// staleRemoval reports, as a violation, an acknowledgement that said it removed the message
// with the handle of delivery d, when another delivery had certainly replaced d before it was
// sent, or d's lease had certainly ended.
func (c *checker) staleRemoval(m *message, d *observed, a Acknowledge) bool {
	for j := range m.deliveries {
		if later := &m.deliveries[j]; later != d && later.end.Before(a.Start) && c.certainlyAfter(m, later, d) {
			c.violation(StaleAcknowledgement, m.id, "the handle of attempt %d removed the message after attempt %d had replaced it", d.Attempts, later.Attempts)
			return true
		}
	}
	if c.certainlyBefore(d.high, a.Start) {
		c.violation(StaleAcknowledgement, m.id, "the handle of attempt %d removed the message %v after its lease had ended",
			d.Attempts, a.Start.Sub(d.high).Round(time.Millisecond))
		return true
	}
	return false
}

// latest returns the deliveries that may have been the message's last: those that no other
// certainly came after. In a history that contradicts itself so that each is followed by
// another, all of them.
func (c *checker) latest(m *message) []*observed {
	var latest []*observed
	for i := range m.deliveries {
		d, followed := &m.deliveries[i], false
		for j := range m.deliveries {
			followed = followed || j != i && c.certainlyAfter(m, &m.deliveries[j], d)
		}
		if !followed {
			latest = append(latest, d)
		}
	}
	if len(latest) == 0 {
		for i := range m.deliveries {
			latest = append(latest, &m.deliveries[i])
		}
	}
	return latest
}

// checkRemoval explains the absence from storage of a message that existed: an
// acknowledgement of its last delivery, sent before that delivery's lease could have ended
// (a release ends it at once), or one that said it removed the message (whether it should
// have is checkAcknowledged's business).
func (c *checker) checkRemoval(m *message) {
	if len(m.deliveries) == 0 {
		c.violation(Lost, m.id, "never delivered, and neither queued nor dead-lettered%s", c.lastMoves(m, nil))
		return
	}
	latest := c.latest(m)
	for _, a := range m.acknowledges {
		for _, d := range latest {
			if a.Removed || a.ReceiptHandle == d.ReceiptHandle && !c.certainlyBefore(d.high, a.Start) {
				c.report.Acknowledged++
				return
			}
		}
	}
	last := latest[len(latest)-1]
	for _, a := range m.acknowledges {
		if !slices.ContainsFunc(latest, func(d *observed) bool { return d.ReceiptHandle == a.ReceiptHandle }) {
			c.violation(StaleAcknowledgement, m.id, "gone, although only earlier deliveries than attempt %d were acknowledged", last.Attempts)
			return
		}
	}
	c.violation(Lost, m.id, "delivered up to attempt %d, never acknowledged in time, and neither queued nor dead-lettered%s",
		last.Attempts, c.lastMoves(m, last))
}

// lastMoves describes, for a lost message, the releases of its last delivery and its
// redrives, which are where to look for the fault.
func (c *checker) lastMoves(m *message, last *observed) string {
	var moves string
	if last != nil && slices.ContainsFunc(c.leaseOps[handle{m.id, last.ReceiptHandle}], func(op leaseOp) bool { return op.release }) {
		moves += ", after a release"
	}
	if len(m.redriven) > 0 {
		moves += ", after a redrive"
	}
	return moves
}
