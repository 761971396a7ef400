package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/test/history"
)

// limits are those of every hand-made history: leases of 2 s, three attempts, and a clock
// margin of 10 ms.
var limits = history.Limits{VisibilityTimeout: 2 * time.Second, MaxDeliveryAttempts: 3, ClockMargin: 10 * time.Millisecond}

var start = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// at returns the time ms milliseconds into a run.
func at(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }

// oneAttempt are the limits of the hand-made histories of redrives: a queue that allows one
// attempt, as the redrive scenario's.
var oneAttempt = history.Limits{VisibilityTimeout: 2 * time.Second, MaxDeliveryAttempts: 1, ClockMargin: 10 * time.Millisecond}

// run builds a history by hand. Every operation is sent at the given millisecond and answered
// 5 ms later.
type run struct {
	h      *history.History
	final  history.Final
	limits history.Limits
}

func newRun() *run {
	return &run{h: &history.History{}, final: history.Final{Queued: map[string]history.Stored{}, DeadLetters: map[string]history.Stored{}},
		limits: limits}
}

func (r *run) enqueue(payload, id string, outcome history.Outcome, ms int) {
	r.h.AddEnqueue(history.Enqueue{Payload: payload, MessageID: id, Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

func (r *run) deliver(id, payload, handle string, attempts, ms int) {
	r.h.AddDequeue(history.Dequeue{Start: at(ms), End: at(ms + 5), Outcome: history.OK,
		Delivery: &history.Delivery{MessageID: id, Payload: payload, ReceiptHandle: handle, Attempts: attempts}})
}

func (r *run) acknowledge(id, handle string, outcome history.Outcome, ms int) {
	r.h.AddAcknowledge(history.Acknowledge{MessageID: id, ReceiptHandle: handle, Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

// keyed records an enqueue with an idempotency key; replayed marks its 201 as a replay.
func (r *run) keyed(payload, id, key string, outcome history.Outcome, replayed bool, ms int) {
	r.h.AddEnqueue(history.Enqueue{Payload: payload, Key: key, MessageID: id, Replayed: replayed, Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

// batch records a batch enqueue; ids are nil unless its outcome is OK.
func (r *run) batch(payloads, ids []string, key string, outcome history.Outcome, replayed bool, ms int) {
	r.h.AddBatchEnqueue(history.BatchEnqueue{Payloads: payloads, MessageIDs: ids, Key: key, Replayed: replayed,
		Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

// deliverBatch records a batch dequeue that answered the deliveries.
func (r *run) deliverBatch(ms int, deliveries ...history.Delivery) {
	r.h.AddDequeue(history.Dequeue{Start: at(ms), End: at(ms + 5), Outcome: history.OK, Deliveries: deliveries})
}

// acknowledgeEntry records an entry of a batch acknowledgement that answered removed.
func (r *run) acknowledgeEntry(id, handle string, removed bool, ms int) {
	outcome := history.Failed
	if removed {
		outcome = history.OK
	}
	r.h.AddAcknowledge(history.Acknowledge{MessageID: id, ReceiptHandle: handle, Start: at(ms), End: at(ms + 5), Outcome: outcome, Removed: removed})
}

func (r *run) extend(id, handle string, seconds int, outcome history.Outcome, ms int) {
	r.h.AddExtend(history.Extend{MessageID: id, ReceiptHandle: handle, Timeout: time.Duration(seconds) * time.Second,
		Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

func (r *run) release(id, handle string, delaySeconds int, outcome history.Outcome, ms int) {
	r.h.AddRelease(history.Release{MessageID: id, ReceiptHandle: handle, Delay: time.Duration(delaySeconds) * time.Second,
		Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

// redrive records a redrive of the dead letters asked (nil: by limit) that answered redriven.
func (r *run) redrive(asked, redriven []string, outcome history.Outcome, ms int) {
	r.h.AddRedrive(history.Redrive{IDs: asked, Redriven: redriven, Start: at(ms), End: at(ms + 5), Outcome: outcome})
}

func (r *run) queued(id, payload string, attempts int) {
	r.final.Queued[id] = history.Stored{Payload: payload, Attempts: attempts}
}

func (r *run) deadLettered(id, payload string, attempts int) {
	r.final.DeadLetters[id] = history.Stored{Payload: payload, Attempts: attempts}
}

var kinds = []history.Kind{
	history.Lost, history.Unexpected, history.Overlap, history.StaleAcknowledgement,
	history.Resurrected, history.TwoPlaces, history.AttemptLimit, history.BatchSplit, history.DuplicateEnqueue,
}

// violationCase is a hand-made history and the violations it must be found to have.
type violationCase struct {
	name  string
	build func(r *run)
	want  map[history.Kind]int // the violations expected; none when empty
}

// checkCases checks each history and requires exactly its violations, each as often.
func checkCases(t *testing.T, tests []violationCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			r := newRun()
			tc.build(r)

			report := history.Check(r.h, r.final, r.limits)

			for _, k := range kinds {
				if report.Count(k) != tc.want[k] {
					t.Log(report)
				}
				is.Equal(report.Count(k) != 0, tc.want[k] != 0) // the checker finds exactly the broken promises
				is.Equal(report.Count(k), tc.want[k])           // once each
			}
			is.Equal(report.OK(), len(tc.want) == 0) // and passes a history only when it keeps them all
		})
	}
}

func TestCheck_Violations(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"acknowledged in time", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
		}, nil},
		{"still queued, never delivered", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.queued("A", "a", 0)
		}, nil},
		{"redelivered after the visibility timeout, then acknowledged", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2100)
			r.acknowledge("A", "h2", history.OK, 2200)
		}, nil},
		{"dead-lettered after its attempts", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.deliver("A", "a", "h3", 3, 4300)
			r.deadLettered("A", "a", 3)
		}, nil},
		{"enqueue of unknown outcome never seen", func(r *run) {
			r.enqueue("a", "", history.Unknown, 0)
		}, nil},
		{"enqueue of unknown outcome delivered and acknowledged", func(r *run) {
			r.enqueue("a", "", history.Unknown, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
		}, nil},
		{"acknowledgement of unknown outcome within the lease", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.Unknown, 2000)
		}, nil},
		{"stale acknowledgement of a message still queued", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.acknowledge("A", "h1", history.OK, 2300)
			r.queued("A", "a", 2)
		}, nil},
		{"redelivered within the clock margin of the lease's end", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2090) // answered at 2095, 5 ms before 100 + 2000
			r.acknowledge("A", "h2", history.OK, 2200)
		}, nil},

		{"201 but never delivered nor stored", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
		}, map[history.Kind]int{history.Lost: 1}},
		{"delivered, never acknowledged, not stored", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
		}, map[history.Kind]int{history.Lost: 1}},
		{"acknowledged only after the lease certainly ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 2120) // after 105 + 2000 + 10
		}, map[history.Kind]int{history.Lost: 1}},
		{"acknowledgement refused", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.Failed, 200)
		}, map[history.Kind]int{history.Lost: 1}},
		{"delivered a payload never enqueued", func(r *run) {
			r.deliver("X", "x", "h1", 1, 100)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"delivered the payload of a failed enqueue", func(r *run) {
			r.enqueue("a", "", history.Failed, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"delivered under another ID than the 201 named", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("B", "a", "h1", 1, 100)
			r.queued("A", "a", 0)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"two messages from one enqueue of unknown outcome", func(r *run) {
			r.enqueue("a", "", history.Unknown, 0)
			r.deliver("B", "a", "h1", 1, 100)
			r.acknowledge("B", "h1", history.OK, 200)
			r.queued("A", "a", 0)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"delivered with the payload of another attempt", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.enqueue("u", "", history.Unknown, 0)
			r.deliver("A", "u", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"dead letter never enqueued", func(r *run) {
			r.deadLettered("X", "x", 3)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"second delivery within the visibility timeout", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 1500)
			r.acknowledge("A", "h2", history.OK, 1600)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"two deliveries of the same attempt", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 1, 5000)
			r.queued("A", "a", 1)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"a stale acknowledgement removed the newer delivery", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.acknowledge("A", "h1", history.OK, 2300)
		}, map[history.Kind]int{history.StaleAcknowledgement: 1}},
		{"a receipt handle used for two deliveries", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h1", 2, 2200)
			r.queued("A", "a", 2)
		}, map[history.Kind]int{history.StaleAcknowledgement: 1}},
		{"a receipt handle reused within the lease", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h1", 2, 500)
			r.queued("A", "a", 2)
		}, map[history.Kind]int{history.Overlap: 1, history.StaleAcknowledgement: 1}},
		{"delivered again after an acknowledgement in time", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
			r.deliver("A", "a", "h2", 2, 2500)
			r.acknowledge("A", "h2", history.OK, 2600)
		}, map[history.Kind]int{history.Resurrected: 1}},
		{"still queued after an acknowledgement in time", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
			r.queued("A", "a", 1)
		}, map[history.Kind]int{history.Resurrected: 1}},
		{"both queued and dead-lettered", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.queued("A", "a", 3)
			r.deadLettered("A", "a", 3)
		}, map[history.Kind]int{history.TwoPlaces: 1}},
		{"delivered after it was dead-lettered", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.deadLettered("A", "a", 1)
		}, map[history.Kind]int{history.TwoPlaces: 1, history.AttemptLimit: 1}},
		{"delivered beyond the attempt limit", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h4", 4, 100)
			r.queued("A", "a", 4)
		}, map[history.Kind]int{history.AttemptLimit: 1}},
		{"dead-lettered before the attempt limit", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deadLettered("A", "a", 2)
		}, map[history.Kind]int{history.AttemptLimit: 1}},
	})
}

func TestCheck_Figures(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.enqueue("a", "A", history.OK, 0)
	r.enqueue("b", "B", history.OK, 0)
	r.enqueue("c", "", history.Unknown, 0)
	r.enqueue("d", "", history.Failed, 0)
	r.enqueue("e", "", history.Unknown, 0)
	r.deliver("A", "a", "a1", 1, 100)
	r.deliver("A", "a", "a3", 3, 4500) // attempt 2 went to a dequeue whose answer was lost
	r.acknowledge("A", "a3", history.OK, 4600)
	r.h.AddDequeue(history.Dequeue{Start: at(2200), End: at(2300), Outcome: history.Unknown})
	r.h.AddDequeue(history.Dequeue{Start: at(5000), End: at(5005), Outcome: history.OK})
	r.deliver("C", "c", "c1", 1, 100)
	r.acknowledge("C", "c1", history.Unknown, 200)
	r.queued("B", "b", 0)

	report := history.Check(r.h, r.final, limits)

	is.True(report.OK())                                                    // the history keeps every promise
	is.Equal(report.Enqueues, history.Counts{OK: 2, Failed: 1, Unknown: 2}) // enqueue outcomes
	is.Equal(report.Dequeues, history.Counts{OK: 4, Unknown: 1})            // dequeue outcomes
	is.Equal(report.Acknowledges, history.Counts{OK: 1, Unknown: 1})        // acknowledgement outcomes
	is.Equal(report.Unknown(), 4)                                           // every operation of unknown outcome
	is.Equal(report.Empty, 1)                                               // one dequeue found nothing
	is.Equal(report.Messages, 3)                                            // A, B, and C of an unknown enqueue
	is.Equal(report.Deliveries, 3)                                          // three dequeues returned a message
	is.Equal(report.Delivered, 2)                                           // of two messages
	is.Equal(report.Duplicates, 1)                                          // one of them twice
	is.Equal(report.Acknowledged, 2)                                        // A and C were acknowledged
	is.Equal(report.Remaining, 1)                                           // B is still queued
	is.Equal(report.UnknownEnqueuesApplied, 1)                              // C exists although its enqueue's outcome was unknown
	is.Equal(report.HiddenDeliveries, 1)                                    // A's attempt 2 was never seen
}

func TestCheck_HiddenDeliveries_CountedFromStorage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.enqueue("a", "A", history.OK, 0)
	r.deliver("A", "a", "h1", 1, 100)
	r.deadLettered("A", "a", 3)

	report := history.Check(r.h, r.final, limits)

	is.True(report.OK())                 // a dead letter after three attempts is no violation
	is.Equal(report.DeadLettered, 1)     // it is counted
	is.Equal(report.HiddenDeliveries, 2) // attempts 2 and 3 went to dequeues whose answers were lost
}

func TestCheck_PayloadAttemptedTwice_Panics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.enqueue("a", "A", history.OK, 0)
	r.enqueue("a", "B", history.OK, 0)
	defer func() {
		is.True(recover() != nil) // a history that cannot tell two attempts apart is refused
	}()

	history.Check(r.h, r.final, limits)
}

func TestReport_String_NamesTheViolations(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.enqueue("a", "A", history.OK, 0)

	report := history.Check(r.h, r.final, limits)

	is.Equal(report.String(), "messages=1 deliveries=0 duplicates=0 acknowledged=0 dead-lettered=0 remaining=0 expired=0 "+
		"lost=1 unexpected=0 overlaps=0 stale-acks=0 resurrected=0 two-places=0 attempt-limit=0 "+
		"unknown(enqueue=0 dequeue=0 acknowledge=0) unknown-enqueues-applied=0 hidden-deliveries=0\n"+
		"  lost: message A: never delivered, and neither queued nor dead-lettered") // the figures, then each violation
}

func TestCheck_Batches(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"an OK batch, every message delivered in a batch and removed", func(r *run) {
			r.batch([]string{"a", "b"}, []string{"A", "B"}, "", history.OK, false, 0)
			r.deliverBatch(100, history.Delivery{MessageID: "A", Payload: "a", ReceiptHandle: "h1", Attempts: 1},
				history.Delivery{MessageID: "B", Payload: "b", ReceiptHandle: "h2", Attempts: 1})
			r.acknowledgeEntry("A", "h1", true, 200)
			r.acknowledgeEntry("B", "h2", true, 200)
		}, nil},
		{"a batch of unknown outcome of which nothing exists", func(r *run) {
			r.batch([]string{"a", "b"}, nil, "", history.Unknown, false, 0)
		}, nil},
		{"a batch of unknown outcome stored whole", func(r *run) {
			r.batch([]string{"a", "b"}, nil, "", history.Unknown, false, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
			r.queued("B", "b", 0)
		}, nil},
		{"an OK batch with a message missing", func(r *run) {
			r.batch([]string{"a", "b"}, []string{"A", "B"}, "", history.OK, false, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
		}, map[history.Kind]int{history.BatchSplit: 1, history.Lost: 1}},
		{"a batch of unknown outcome stored in part", func(r *run) {
			r.batch([]string{"a", "b", "c"}, nil, "", history.Unknown, false, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
			r.queued("B", "b", 0)
		}, map[history.Kind]int{history.BatchSplit: 1}},
	})
}

func TestCheck_Extends(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"redelivered once the extended lease ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.OK, 1000) // the lease now ends 4 s after 1000
			r.deliver("A", "a", "h2", 2, 5100)
			r.acknowledge("A", "h2", history.OK, 5200)
		}, nil},
		{"an extend answered lease_lost changes nothing", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.extend("A", "h1", 4, history.Failed, 2500)
			r.acknowledge("A", "h2", history.OK, 2600)
		}, nil},
		{"an extend of unknown outcome may not have happened", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.Unknown, 1000)
			r.deliver("A", "a", "h2", 2, 2200)
			r.acknowledge("A", "h2", history.OK, 2300)
		}, nil},
		{"a shorter extend after a longer one ends the lease sooner", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.OK, 500)
			r.extend("A", "h1", 1, history.OK, 1000) // the lease now ends at 2000
			r.deliver("A", "a", "h2", 2, 2100)
			r.acknowledge("A", "h2", history.OK, 2200)
		}, nil},
		{"acknowledged within the extended lease, after the visibility timeout", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.OK, 1500)
			r.acknowledge("A", "h1", history.OK, 4000)
		}, nil},
		{"redelivered within the extended lease", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.OK, 1000)
			r.deliver("A", "a", "h2", 2, 3000) // after the visibility timeout, before 5000
			r.acknowledge("A", "h2", history.OK, 3100)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"acknowledged only after the extended lease ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.extend("A", "h1", 4, history.OK, 1500)
			r.acknowledge("A", "h1", history.OK, 5600) // after 1505 + 4000 + 10
		}, map[history.Kind]int{history.Lost: 1}},
	})
}

func TestCheck_Releases(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"redelivered right after a release", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 0, history.OK, 500)
			r.deliver("A", "a", "h2", 2, 600)
			r.acknowledge("A", "h2", history.OK, 700)
		}, nil},
		{"released, and still queued", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 0, history.OK, 500)
			r.queued("A", "a", 1)
		}, nil},
		{"redelivered once a release's delay ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 1, history.OK, 500)
			r.deliver("A", "a", "h2", 2, 1600)
			r.acknowledge("A", "h2", history.OK, 1700)
		}, nil},
		{"released, then neither redelivered nor stored", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 0, history.OK, 500)
		}, map[history.Kind]int{history.Lost: 1}},
		{"released, then acknowledged with the released handle, and gone", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 0, history.OK, 500)
			r.acknowledge("A", "h1", history.OK, 700) // the handle was no longer current
		}, map[history.Kind]int{history.Lost: 1}},
		{"redelivered before a release's delay ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 1, history.OK, 500)
			r.deliver("A", "a", "h2", 2, 1000)
			r.acknowledge("A", "h2", history.OK, 1100)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"a release answered lease_lost leaves the lease to run", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.release("A", "h1", 0, history.Failed, 500)
			r.deliver("A", "a", "h2", 2, 1000)
			r.acknowledge("A", "h2", history.OK, 1100)
		}, map[history.Kind]int{history.Overlap: 1}},
	})
}

func TestCheck_Redrives(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"delivered again after a redrive", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100) // dead-lettered once its lease ended
			r.redrive(nil, []string{"A"}, history.OK, 3000)
			r.deliver("A", "a", "h2", 1, 3100)
			r.acknowledge("A", "h2", history.OK, 3200)
		}, nil},
		{"a redrive by limit of unknown outcome may have moved it", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, nil, history.Unknown, 3000)
			r.deliver("A", "a", "h2", 1, 3100)
			r.acknowledge("A", "h2", history.OK, 3200)
		}, nil},
		{"redriven, delivered, and dead-lettered again", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, []string{"A"}, history.OK, 3000)
			r.deliver("A", "a", "h2", 1, 3100)
			r.deadLettered("A", "a", 1)
		}, nil},
		{"redriven, and still queued", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, []string{"A"}, history.OK, 3000)
			r.queued("A", "a", 0)
		}, nil},
		{"delivered at attempt 1 again without a redrive", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 1, 3100)
			r.acknowledge("A", "h2", history.OK, 3200)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"a redrive of unknown outcome of other dead letters did not move it", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive([]string{"B"}, nil, history.Unknown, 3000)
			r.deliver("A", "a", "h2", 1, 3100)
			r.acknowledge("A", "h2", history.OK, 3200)
		}, map[history.Kind]int{history.Overlap: 1}},
		{"redriven, then both queued and dead-lettered", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, []string{"A"}, history.OK, 3000)
			r.queued("A", "a", 0)
			r.deadLettered("A", "a", 1)
		}, map[history.Kind]int{history.TwoPlaces: 1}},
		{"redriven, then in neither place", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, []string{"A"}, history.OK, 3000)
		}, map[history.Kind]int{history.Lost: 1}},
		{"redriven while its delivery certainly held it", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.redrive(nil, []string{"A"}, history.OK, 500)
			r.queued("A", "a", 0)
		}, map[history.Kind]int{history.TwoPlaces: 1}},
		{"redriven after it was acknowledged in time", func(r *run) {
			r.limits = oneAttempt
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledge("A", "h1", history.OK, 200)
			r.redrive(nil, []string{"A"}, history.OK, 3000)
		}, map[history.Kind]int{history.Resurrected: 1}},
		{"a redrive answered an ID that no message has", func(r *run) {
			r.redrive(nil, []string{"X"}, history.OK, 100)
		}, map[history.Kind]int{history.Unexpected: 1}},
		{"delivered in its last life beyond the attempt it was dead-lettered at", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.deliver("A", "a", "h3", 3, 4300)
			r.redrive(nil, []string{"A"}, history.OK, 7000)
			r.deliver("A", "a", "h4", 1, 7100)
			r.deliver("A", "a", "h5", 2, 9200)
			r.deadLettered("A", "a", 1)
		}, map[history.Kind]int{history.TwoPlaces: 1, history.AttemptLimit: 1}},
	})
}

func TestCheck_IdempotentEnqueues(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"an unknown outcome retried with its key, the retry replayed", func(r *run) {
			r.keyed("a", "", "k1", history.Unknown, false, 0)
			r.keyed("a", "A", "k1", history.OK, true, 100)
			r.deliver("A", "a", "h1", 1, 200)
			r.acknowledge("A", "h1", history.OK, 300)
		}, nil},
		{"a retry refused while the key was in use, then replayed", func(r *run) {
			r.keyed("a", "", "k1", history.Unknown, false, 0)
			r.keyed("a", "", "k1", history.Failed, false, 50)
			r.keyed("a", "A", "k1", history.OK, true, 100)
			r.queued("A", "a", 0)
		}, nil},
		{"a keyed batch retried and replayed", func(r *run) {
			r.batch([]string{"a", "b"}, nil, "k1", history.Unknown, false, 0)
			r.batch([]string{"a", "b"}, []string{"A", "B"}, "k1", history.OK, true, 100)
			r.deliver("A", "a", "h1", 1, 200)
			r.acknowledge("A", "h1", history.OK, 300)
			r.queued("B", "b", 0)
		}, nil},
		{"a keyed payload stored under two IDs", func(r *run) {
			r.keyed("a", "", "k1", history.Unknown, false, 0)
			r.keyed("a", "A", "k1", history.OK, false, 100)
			r.deliver("A", "a", "h1", 1, 200)
			r.acknowledge("A", "h1", history.OK, 300)
			r.deliver("B", "a", "h2", 1, 400)
			r.acknowledge("B", "h2", history.OK, 500)
		}, map[history.Kind]int{history.DuplicateEnqueue: 1}},
		{"a keyed batch stored twice", func(r *run) {
			r.batch([]string{"a", "b"}, nil, "k1", history.Unknown, false, 0)
			r.batch([]string{"a", "b"}, []string{"A", "B"}, "k1", history.OK, false, 100)
			r.queued("A", "a", 0)
			r.queued("B", "b", 0)
			r.queued("C", "a", 0)
			r.queued("D", "b", 0)
		}, map[history.Kind]int{history.DuplicateEnqueue: 2}},
		{"a replay that named another ID than the first 201", func(r *run) {
			r.keyed("a", "A", "k1", history.OK, false, 0)
			r.keyed("a", "B", "k1", history.OK, true, 100)
			r.queued("A", "a", 0)
		}, map[history.Kind]int{history.DuplicateEnqueue: 1}},
		{"a replay with no earlier request to repeat", func(r *run) {
			r.keyed("a", "A", "k1", history.OK, true, 0)
			r.queued("A", "a", 0)
		}, map[history.Kind]int{history.Unexpected: 1}},
	})
}

func TestCheck_BatchAcknowledgements(t *testing.T) {
	t.Parallel()
	checkCases(t, []violationCase{
		{"an entry that removed nothing, the message back and removed later", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledgeEntry("A", "h1", false, 200)
			r.deliver("A", "a", "h2", 2, 2200)
			r.acknowledgeEntry("A", "h2", true, 2300)
		}, nil},
		{"delivered again after an entry removed it", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledgeEntry("A", "h1", true, 200)
			r.deliver("A", "a", "h2", 2, 2500)
			r.acknowledgeEntry("A", "h2", true, 2600)
		}, map[history.Kind]int{history.Resurrected: 1}},
		{"still stored after an entry removed it", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledgeEntry("A", "h1", true, 2050) // within the clock margin of the lease's end
			r.queued("A", "a", 1)
		}, map[history.Kind]int{history.Resurrected: 1}},
		{"an entry removed the message with a replaced handle", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.deliver("A", "a", "h2", 2, 2200)
			r.acknowledgeEntry("A", "h1", true, 2300)
		}, map[history.Kind]int{history.StaleAcknowledgement: 1}},
		{"an entry removed the message after its lease ended", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledgeEntry("A", "h1", true, 2200) // after 105 + 2000 + 10
		}, map[history.Kind]int{history.StaleAcknowledgement: 1}},
		{"entries that removed nothing, and the message gone", func(r *run) {
			r.enqueue("a", "A", history.OK, 0)
			r.deliver("A", "a", "h1", 1, 100)
			r.acknowledgeEntry("A", "h1", false, 200)
		}, map[history.Kind]int{history.Lost: 1}},
	})
}

func TestCheck_Part2Figures(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.keyed("a", "", "k1", history.Unknown, false, 0)
	r.keyed("a", "A", "k1", history.OK, true, 100)
	r.batch([]string{"b", "c"}, []string{"B", "C"}, "", history.OK, false, 0)
	r.batch([]string{"d", "e"}, nil, "", history.Unknown, false, 0)
	r.deliverBatch(200, history.Delivery{MessageID: "A", Payload: "a", ReceiptHandle: "a1", Attempts: 1},
		history.Delivery{MessageID: "B", Payload: "b", ReceiptHandle: "b1", Attempts: 1})
	r.deliverBatch(300)
	r.extend("A", "a1", 4, history.OK, 1000)
	r.extend("A", "a1", 4, history.Failed, 9000) // lease_lost, long after
	r.release("B", "b1", 0, history.OK, 400)
	r.deliver("B", "b", "b2", 2, 500)
	r.acknowledgeEntry("A", "a1", true, 3000)
	r.acknowledgeEntry("B", "b2", true, 600)
	r.queued("C", "c", 0)
	r.redrive(nil, nil, history.Unknown, 4000)
	r.redrive(nil, []string{}, history.OK, 4100)

	report := history.Check(r.h, r.final, limits)

	t.Log(report)
	is.True(report.OK())                                              // the history keeps every promise
	is.Equal(report.Enqueues, history.Counts{OK: 1, Unknown: 1})      // single enqueues
	is.Equal(report.BatchEnqueues, history.Counts{OK: 1, Unknown: 1}) // batch enqueues
	is.Equal(report.Dequeues, history.Counts{OK: 3})                  // two batch dequeues and a single one
	is.Equal(report.Empty, 1)                                         // one batch came back empty
	is.Equal(report.Deliveries, 3)                                    // A once, B twice
	is.Equal(report.Extends, history.Counts{OK: 1, Failed: 1})        // one extend, one lease_lost
	is.Equal(report.Releases, history.Counts{OK: 1})                  // one release
	is.Equal(report.Redrives, history.Counts{OK: 1, Unknown: 1})      // two redrives
	is.Equal(report.Redriven, 0)                                      // that moved nothing known
	is.Equal(report.Replays, 1)                                       // A's retry was a replay
	is.Equal(report.RetriedUnknown, 1)                                // of a request of unknown outcome
	is.Equal(report.Acknowledged, 2)                                  // A and B
	is.Equal(report.Remaining, 1)                                     // C
	is.Equal(report.Unknown(), 3)                                     // A's first try, the second batch, a redrive
	is.True(strings.Contains(report.String(), " batch-splits=0 duplicate-enqueues=0 | batch-enqueues=2 extends=2 (lease lost 1) "+
		"releases=1 (lease lost 0) redrives=2 redriven=0 replays=1 unknown-retried=1")) // the figures of Part 2 follow the others
}

func TestCheck_KeyedRetryWithAnotherPayload_Panics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.keyed("a", "", "k1", history.Unknown, false, 0)
	r.keyed("b", "B", "k1", history.OK, false, 100)
	defer func() {
		is.True(recover() != nil) // a retry must repeat its request
	}()

	history.Check(r.h, r.final, limits)
}

func TestCheck_HiddenDeliveries_OfTheLastLifeOnly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.enqueue("a", "A", history.OK, 0)
	r.deliver("A", "a", "h1", 1, 100)
	r.deliver("A", "a", "h2", 2, 2200)
	r.deliver("A", "a", "h3", 3, 4300) // dead-lettered once its lease ended
	r.redrive(nil, []string{"A"}, history.OK, 7000)
	// A long poll sent before the redrive, woken by it.
	r.h.AddDequeue(history.Dequeue{Start: at(6500), End: at(7010), Outcome: history.OK,
		Delivery: &history.Delivery{MessageID: "A", Payload: "a", ReceiptHandle: "h4", Attempts: 1}})
	r.deadLettered("A", "a", 3)

	report := history.Check(r.h, r.final, limits)

	is.True(report.OK())                 // a redriven message may start its attempts again
	is.Equal(report.HiddenDeliveries, 2) // attempts 2 and 3 of its second life went to no client; its first life had none hidden
}

func TestCheck_RedriveOfADuplicate_ReportedOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newRun()
	r.limits = oneAttempt
	r.keyed("a", "A", "k1", history.OK, false, 0)
	r.deliver("A", "a", "h1", 1, 100)
	r.acknowledge("A", "h1", history.OK, 200)
	r.deliver("B", "a", "h2", 1, 300) // the key stored its payload twice
	r.redrive(nil, []string{"B"}, history.OK, 3000)
	r.queued("B", "a", 0)

	report := history.Check(r.h, r.final, r.limits)

	is.Equal(report.Count(history.DuplicateEnqueue), 2) // the delivery and the stored row of the second message
	is.Equal(report.Count(history.Unexpected), 0)       // whose redrive is not reported again
}
