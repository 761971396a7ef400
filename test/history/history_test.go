package history_test

import (
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

// run builds a history by hand. Every operation is sent at the given millisecond and answered
// 5 ms later.
type run struct {
	h     *history.History
	final history.Final
}

func newRun() *run {
	return &run{h: &history.History{}, final: history.Final{Queued: map[string]history.Stored{}, DeadLetters: map[string]history.Stored{}}}
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

func (r *run) queued(id, payload string, attempts int) {
	r.final.Queued[id] = history.Stored{Payload: payload, Attempts: attempts}
}

func (r *run) deadLettered(id, payload string, attempts int) {
	r.final.DeadLetters[id] = history.Stored{Payload: payload, Attempts: attempts}
}

var kinds = []history.Kind{
	history.Lost, history.Unexpected, history.Overlap, history.StaleAcknowledgement,
	history.Resurrected, history.TwoPlaces, history.AttemptLimit,
}

func TestCheck_Violations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(r *run)
		want  map[history.Kind]int // the violations expected; none when empty
	}{
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			r := newRun()
			tc.build(r)

			report := history.Check(r.h, r.final, limits)

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
