package history

import (
	"cmp"
	"slices"
	"time"
)

// checkMessage applies every rule to one message and adds it to the figures.
func (c *checker) checkMessage(m *message) {
	slices.SortStableFunc(m.deliveries, func(a, b observed) int { return cmp.Compare(a.Attempts, b.Attempts) })
	queued, isQueued := c.final.Queued[m.id]
	deadLetter, isDeadLettered := c.final.DeadLetters[m.id]
	c.count(m, queued, isQueued, deadLetter, isDeadLettered)
	c.checkLeases(m)
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
	if m.attempt != nil && m.attempt.Outcome == Unknown {
		c.report.UnknownEnqueuesApplied++
	}
	c.report.HiddenDeliveries += hiddenDeliveries(m, max(queued.Attempts, deadLetter.Attempts))
}

// hiddenDeliveries counts the attempt numbers up to the highest known that no observed
// delivery carries: each is a delivery that happened without its client learning of it.
func hiddenDeliveries(m *message, storedAttempts int) int {
	seen := map[int]bool{}
	highest := storedAttempts
	for _, d := range m.deliveries {
		seen[d.Attempts] = true
		highest = max(highest, d.Attempts)
	}
	return max(highest-len(seen), 0)
}

// checkLeases finds deliveries that began while an earlier one certainly still ran. A lease
// certainly runs until the earlier dequeue's send time plus the visibility timeout, and a
// later dequeue certainly claimed the message before its answer arrived. Attempt numbers
// order the claims of one message.
func (c *checker) checkLeases(m *message) {
	for i, earlier := range m.deliveries {
		for _, later := range m.deliveries[i+1:] {
			switch {
			case earlier.Attempts == later.Attempts:
				c.violation(Overlap, m.id, "two deliveries carry attempt %d", later.Attempts)
			case c.certainlyBefore(later.end, earlier.start.Add(c.limits.VisibilityTimeout)):
				c.violation(Overlap, m.id, "attempt %d was answered %v after attempt %d was requested, within the visibility timeout of %v",
					later.Attempts, later.end.Sub(earlier.start).Round(time.Millisecond), earlier.Attempts, c.limits.VisibilityTimeout)
			}
			if earlier.ReceiptHandle == later.ReceiptHandle {
				c.violation(StaleAcknowledgement, m.id, "attempts %d and %d share the receipt handle %s", earlier.Attempts, later.Attempts, later.ReceiptHandle)
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

func (c *checker) checkOnePlace(m *message, deadLetter Stored, isQueued, isDeadLettered bool) {
	if !isDeadLettered {
		return
	}
	if isQueued {
		c.violation(TwoPlaces, m.id, "both queued and dead-lettered")
	}
	if n := len(m.deliveries); n > 0 && m.deliveries[n-1].Attempts > deadLetter.Attempts {
		c.violation(TwoPlaces, m.id, "delivered at attempt %d after it was dead-lettered at attempt %d", m.deliveries[n-1].Attempts, deadLetter.Attempts)
	}
}

// checkAcknowledged finds messages that came back after an acknowledgement that certainly
// reached the server within its delivery's visibility timeout, and so removed the message.
func (c *checker) checkAcknowledged(m *message, stored bool) {
	for _, a := range m.acknowledges {
		if a.Outcome != OK {
			continue
		}
		i := slices.IndexFunc(m.deliveries, func(d observed) bool { return d.ReceiptHandle == a.ReceiptHandle })
		if i < 0 || !c.certainlyBefore(a.End, m.deliveries[i].start.Add(c.limits.VisibilityTimeout)) {
			continue
		}
		if last := m.deliveries[len(m.deliveries)-1]; last.Attempts > m.deliveries[i].Attempts {
			c.violation(Resurrected, m.id, "delivered at attempt %d after attempt %d was acknowledged in time", last.Attempts, m.deliveries[i].Attempts)
			return
		}
		if stored {
			c.violation(Resurrected, m.id, "still stored after attempt %d was acknowledged in time", m.deliveries[i].Attempts)
			return
		}
	}
}

// checkRemoval explains the absence from storage of a message that existed: an
// acknowledgement of its latest delivery, sent before that delivery could have ended.
func (c *checker) checkRemoval(m *message) {
	if len(m.deliveries) == 0 {
		c.violation(Lost, m.id, "never delivered, and neither queued nor dead-lettered")
		return
	}
	latest := m.deliveries[len(m.deliveries)-1]
	leaseEnd := latest.end.Add(c.limits.VisibilityTimeout)
	for _, a := range m.acknowledges {
		if a.ReceiptHandle == latest.ReceiptHandle && !c.certainlyBefore(leaseEnd, a.Start) {
			c.report.Acknowledged++
			return
		}
	}
	for _, a := range m.acknowledges {
		if a.ReceiptHandle != latest.ReceiptHandle {
			c.violation(StaleAcknowledgement, m.id, "gone, although only earlier deliveries than attempt %d were acknowledged", latest.Attempts)
			return
		}
	}
	c.violation(Lost, m.id, "delivered up to attempt %d, never acknowledged in time, and neither queued nor dead-lettered", latest.Attempts)
}
