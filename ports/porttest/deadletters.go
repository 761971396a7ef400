package porttest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestDeadLetterStore runs the DeadLetterStore contract over the harness's Store, which
// makes the dead letters, and its DeadLetters. newHarness may share one store between
// tests: each test works in queues of its own.
func TestDeadLetterStore(t *testing.T, newHarness func(t *testing.T) MessageHarness) {
	runMessageTests(t, newHarness, deadLetterTests)
}

// poison returns a message that a single delivery exhausts.
func (m *messageTest) poison(p domain.Priority, payload string, options ...func(*domain.Enqueue)) domain.Enqueue {
	return m.message(p, payload, append([]func(*domain.Enqueue){withMaxDeliveryAttempts(1)}, options...)...)
}

// deadLetter enqueues the messages, which must be poison, delivers each once, waits for the
// deliveries to end and lets a dequeue move them to the dead letters. It returns their
// deliveries by message ID.
func (m *messageTest) deadLetter(messages ...domain.Enqueue) map[domain.ID]domain.Delivery {
	m.is.Helper()
	m.enqueueBatch(messages...)
	deliveries := map[domain.ID]domain.Delivery{}
	for _, d := range m.dequeueUpTo(len(messages)) {
		deliveries[d.MessageID] = d
	}
	m.is.Equal(len(deliveries), len(messages)) // each message is delivered once
	m.Wait(time.Second + margin)
	m.dequeueNothing()
	m.is.Equal(m.deadLettered(), int64(len(messages))) // and moved to the dead letters
	return deliveries
}

func (m *messageTest) deadLetters(p ports.DeadLetterPage) []domain.DeadLetter {
	m.is.Helper()
	letters, err := m.DeadLetters.DeadLetters(ctx, m.queueID, p)
	m.is.NoErr(err)
	return letters
}

func deadLetterIDs(letters []domain.DeadLetter) []domain.ID {
	out := make([]domain.ID, len(letters))
	for i, d := range letters {
		out[i] = d.MessageID
	}
	return out
}

// ascendingIDs returns n fresh IDs in ascending order.
func ascendingIDs(n int) []domain.ID {
	out := make([]domain.ID, n)
	for i := range out {
		out[i] = newID()
	}
	slices.SortFunc(out, func(a, b domain.ID) int { return slices.Compare(a[:], b[:]) })
	return out
}

func (m *messageTest) redrive(q domain.Queue, r domain.Redrive) []domain.ID {
	m.is.Helper()
	moved, err := m.DeadLetters.Redrive(ctx, q, r)
	m.is.NoErr(err)
	return moved
}

var deadLetterTests = []messageTestCase{
	{"DeadLetters_ListsInIDOrder", func(t *testing.T, m *messageTest) {
		want := ascendingIDs(3)
		m.deadLetter(m.poison(domain.PriorityLow, "c", withID(want[2])), m.poison(domain.PriorityHigh, "a", withID(want[0])), m.poison(domain.PriorityMedium, "b", withID(want[1])))
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{Limit: 10})), want) // ordered by ID, whatever the enqueue order or priority
	}},

	{"DeadLetters_Pages", func(t *testing.T, m *messageTest) {
		want := ascendingIDs(5)
		var messages []domain.Enqueue
		for _, id := range want {
			messages = append(messages, m.poison(domain.PriorityLow, "x", withID(id)))
		}
		m.deadLetter(messages...)
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{Limit: 2})), want[:2])                  // the first page holds Limit dead letters
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{After: want[1], Limit: 2})), want[2:4]) // the next starts after the cursor, which it excludes
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{After: want[3], Limit: 2})), want[4:])  // the last may be short
		m.is.Equal(len(m.deadLetters(ports.DeadLetterPage{After: want[4], Limit: 2})), 0)                   // and after it there is nothing
	}},

	{"DeadLetters_AfterAnAbsentID", func(t *testing.T, m *messageTest) {
		want := ascendingIDs(3)
		m.deadLetter(m.poison(domain.PriorityLow, "x", withID(want[0])), m.poison(domain.PriorityLow, "x", withID(want[2])))
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{After: want[1], Limit: 10})), want[2:]) // the cursor need not be a dead letter
	}},

	{"DeadLetters_EmptyQueue_ReturnsNone", func(t *testing.T, m *messageTest) {
		m.is.Equal(len(m.deadLetters(ports.DeadLetterPage{Limit: 10})), 0) // no dead letter, an empty page
	}},

	{"DeadLetters_OtherQueue_NotListed", func(t *testing.T, m *messageTest) {
		m.deadLetter(m.poison(domain.PriorityLow, "mine"))
		letters, err := m.DeadLetters.DeadLetters(ctx, newID(), ports.DeadLetterPage{Limit: 10})
		m.is.NoErr(err)
		m.is.Equal(len(letters), 0) // a queue lists only its own dead letters
	}},

	{"DeadLetter_KeepsTheMessagesDetails", func(t *testing.T, m *messageTest) {
		attributes := domain.Attributes{"kind": {DataType: "String", StringValue: "poison"}}
		e := m.poison(domain.PriorityMedium, "payload \x00 kept", withAttributes(attributes))
		d := m.deadLetter(e)[e.MessageID]
		got, err := m.DeadLetters.DeadLetter(ctx, m.queueID, e.MessageID)
		m.is.NoErr(err)
		m.is.Equal(got.QueueID, m.queueID)                                         // the queue
		m.is.Equal(got.MessageID, e.MessageID)                                     // the message's ID
		m.is.Equal(got.Payload, e.Payload)                                         // its payload
		m.is.Equal(got.Priority, domain.PriorityMedium)                            // its priority
		m.is.True(got.Attributes.Equal(attributes))                                // its attributes
		m.is.Equal(got.DeliveryAttempts, 1)                                        // its attempts
		m.is.True(got.EnqueuedAt.Equal(d.EnqueuedAt))                              // its enqueue time
		m.is.True(!got.DeadLetteredAt.Before(d.FirstDeliveredAt.Add(time.Second))) // moved once its last delivery ended
		listed := m.deadLetters(ports.DeadLetterPage{Limit: 10})
		m.is.Equal(len(listed), 1)
		m.is.True(listed[0].DeadLetteredAt.Equal(got.DeadLetteredAt)) // the listing shows the same record
		m.is.Equal(listed[0].Payload, got.Payload)
	}},

	{"DeadLetter_Unknown_ReturnsNotFound", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "a message, not a dead letter")
		_, err := m.DeadLetters.DeadLetter(ctx, m.queueID, newID())
		m.is.True(errors.Is(err, domain.ErrDeadLetterNotFound)) // no such dead letter
		_, err = m.DeadLetters.DeadLetter(ctx, m.queueID, id)
		m.is.True(errors.Is(err, domain.ErrDeadLetterNotFound)) // a live message is no dead letter
	}},

	{"DeadLetter_OtherQueue_ReturnsNotFound", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "mine")
		m.deadLetter(e)
		_, err := m.DeadLetters.DeadLetter(ctx, newID(), e.MessageID)
		m.is.True(errors.Is(err, domain.ErrDeadLetterNotFound)) // a dead letter is found only through its queue
	}},

	{"DeleteDeadLetter_RemovesOnlyIt", func(t *testing.T, m *messageTest) {
		a, b := m.poison(domain.PriorityHigh, "a"), m.poison(domain.PriorityHigh, "b")
		m.deadLetter(a, b)
		m.is.NoErr(m.DeadLetters.DeleteDeadLetter(ctx, m.queueID, a.MessageID))
		_, err := m.DeadLetters.DeadLetter(ctx, m.queueID, a.MessageID)
		m.is.True(errors.Is(err, domain.ErrDeadLetterNotFound)) // the deleted dead letter is gone
		_, err = m.DeadLetters.DeadLetter(ctx, m.queueID, b.MessageID)
		m.is.NoErr(err) // the other stays
	}},

	{"DeleteDeadLetter_UnknownOrOtherQueue_ChangesNothing", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "a")
		m.deadLetter(e)
		m.is.NoErr(m.DeadLetters.DeleteDeadLetter(ctx, m.queueID, newID())) // no such dead letter is no error
		m.is.NoErr(m.DeadLetters.DeleteDeadLetter(ctx, newID(), e.MessageID))
		m.is.Equal(m.deadLettered(), int64(1)) // and another queue cannot delete this one's
	}},

	{"DeleteAllDeadLetters_CountsAndKeepsMessages", func(t *testing.T, m *messageTest) {
		m.deadLetter(m.poison(domain.PriorityHigh, "a"), m.poison(domain.PriorityLow, "b"))
		live := m.enqueue(domain.PriorityHigh, "live")
		deleted, err := m.DeadLetters.DeleteAllDeadLetters(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.Equal(deleted, 2)                  // every dead letter of the queue, counted
		m.is.Equal(m.deadLettered(), int64(0))  // is gone
		m.is.Equal(m.dequeue().MessageID, live) // the queue's messages stay
		deleted, err = m.DeadLetters.DeleteAllDeadLetters(ctx, m.queueID)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0) // a second call finds none
	}},

	{"Redrive_ByIDs_InGivenOrder_LeavesOutMissing", func(t *testing.T, m *messageTest) {
		a, b, c := m.poison(domain.PriorityMedium, "a"), m.poison(domain.PriorityMedium, "b"), m.poison(domain.PriorityMedium, "c")
		m.deadLetter(a, b, c)
		moved := m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{c.MessageID, newID(), a.MessageID}})
		m.is.Equal(moved, []domain.ID{c.MessageID, a.MessageID})                                            // the IDs moved, in the order given, without the one that has no dead letter
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{c.MessageID, a.MessageID})                            // they join the line in that order
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{Limit: 10})), []domain.ID{b.MessageID}) // the one not selected stays
	}},

	{"Redrive_ByLimit_LowestIDsFirst", func(t *testing.T, m *messageTest) {
		want := ascendingIDs(3)
		m.deadLetter(m.poison(domain.PriorityLow, "x", withID(want[2])), m.poison(domain.PriorityHigh, "x", withID(want[1])), m.poison(domain.PriorityLow, "x", withID(want[0])))
		moved := m.redrive(m.queue(testSettings), domain.Redrive{Limit: 2})
		m.is.Equal(moved, want[:2])                                                         // the lowest IDs, in ID order
		m.is.Equal(deadLetterIDs(m.deadLetters(ports.DeadLetterPage{Limit: 10})), want[2:]) // the others stay
		m.is.Equal(m.redrive(m.queue(testSettings), domain.Redrive{Limit: 10}), want[2:])   // a limit beyond them moves what is left
		m.is.Equal(len(m.redrive(m.queue(testSettings), domain.Redrive{Limit: 10})), 0)     // and then nothing
	}},

	{"Redrive_NoDeadLetters_MovesNothing", func(t *testing.T, m *messageTest) {
		m.is.Equal(len(m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{newID()}})), 0) // unknown IDs move nothing
		m.is.Equal(len(m.redrive(m.queue(testSettings), domain.Redrive{Limit: 5})), 0)                  // nor does a limit over no dead letter
	}},

	{"Redrive_KeepsIDPayloadPriorityAttributes_FreshAttempts", func(t *testing.T, m *messageTest) {
		attributes := domain.Attributes{"kind": {DataType: "Binary", BinaryValue: []byte{7}}}
		e := m.poison(domain.PriorityHigh, "redriven", withAttributes(attributes))
		m.deadLetter(e)
		m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		d := m.dequeue()
		m.is.Equal(d.MessageID, e.MessageID)        // the same ID
		m.is.Equal(d.Payload, "redriven")           // payload
		m.is.Equal(d.Priority, domain.PriorityHigh) // and priority
		m.is.True(d.Attributes.Equal(attributes))   // and attributes
		m.is.Equal(d.DeliveryAttempts, 1)           // starting again at no attempt used
	}},

	{"Redrive_NeverInBothPlaces", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "x")
		m.deadLetter(e)
		m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		_, err := m.DeadLetters.DeadLetter(ctx, m.queueID, e.MessageID)
		m.is.True(errors.Is(err, domain.ErrDeadLetterNotFound))                                             // the dead letter is gone
		m.is.Equal(m.deadLettered(), int64(0))                                                              // from every count
		m.is.Equal(m.total(ready), int64(1))                                                                // and the message is back in its queue, once
		m.is.Equal(len(m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{e.MessageID}})), 0) // a second redrive finds nothing to move
	}},

	{"Redrive_JoinsEndOfLine", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "redriven")
		m.deadLetter(e)
		later := m.enqueue(domain.PriorityHigh, "enqueued after it, before its redrive")
		low := m.enqueue(domain.PriorityLow, "low")
		m.redrive(m.queue(testSettings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		m.is.Equal(ids(m.dequeueUpTo(3)), []domain.ID{later, e.MessageID, low}) // at the end of its priority's line, still before lower priorities
	}},

	{"Redrive_TakesTheQueuesCurrentAttemptLimit", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "x")
		m.deadLetter(e)
		settings := testSettings
		settings.MaxDeliveryAttempts = 2
		m.redrive(m.queue(settings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		m.dequeue()
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().DeliveryAttempts, 2) // the queue's limit of two, not the message's old one
		m.Wait(time.Second + margin)
		m.dequeueNothing()
		m.is.Equal(m.deadLettered(), int64(1)) // then it is dead-lettered again
	}},

	{"Redrive_TakesTheQueuesCurrentVisibilityTimeout", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "x")
		m.deadLetter(e)
		settings := testSettings
		settings.VisibilityTimeout = 30 * time.Second
		m.redrive(m.queue(settings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		m.dequeue()
		m.Wait(time.Second + margin)
		m.dequeueNothing() // the delivery lasts the queue's timeout, not the message's old one
	}},

	{"Redrive_LifetimeIsTheQueuesDefault", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "x")
		m.deadLetter(e)
		settings := testSettings
		settings.DefaultMessageTTL = time.Second
		m.redrive(m.queue(settings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		m.Wait(time.Second + margin)
		m.dequeueNothing() // it lives the queue's default lifetime, not the message's own
	}},

	{"Redrive_LifetimeCountsFromTheRedrive", func(t *testing.T, m *messageTest) {
		e := m.poison(domain.PriorityHigh, "x", withTTL(2*time.Second))
		m.deadLetter(e)
		settings := testSettings
		settings.DefaultMessageTTL = 3 * time.Second
		m.redrive(m.queue(settings), domain.Redrive{IDs: []domain.ID{e.MessageID}})
		m.Wait(time.Second)
		m.is.Equal(m.dequeue().MessageID, e.MessageID) // alive past its first lifetime: the new one started at the redrive
	}},
}
