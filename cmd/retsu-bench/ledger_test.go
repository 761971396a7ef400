package main

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestLedger_CountsAMessageOnceAndOnlyWhenAcknowledgedInTime(t *testing.T) {
	t.Parallel()
	start := time.Now()
	first := delivery{ID: "m1", Payload: "p1-7 send", ReceiptHandle: "h1"}
	second := delivery{ID: "m1", Payload: "p1-7 send", ReceiptHandle: "h2"}
	for _, tc := range []struct {
		name string
		run  func(is *is.I, l *ledger)
	}{
		{"timely acknowledgement completes the message", func(is *is.I, l *ledger) {
			is.Equal(l.delivered(first, start, start), deliveryExpected)
			is.True(l.acknowledged(first, start.Add(time.Second)))    // acknowledged within the timeout: a lifecycle
			is.True(!l.acknowledged(first, start.Add(2*time.Second))) // and only once
		}},
		{"late acknowledgement does not count", func(is *is.I, l *ledger) {
			l.delivered(first, start, start)
			is.True(!l.acknowledged(first, start.Add(time.Minute))) // the delivery may have ended before it arrived
		}},
		{"acknowledgement of an earlier delivery does not count", func(is *is.I, l *ledger) {
			l.delivered(first, start, start)
			is.Equal(l.delivered(second, start.Add(time.Minute), start.Add(time.Minute)), deliveryExpected) // redelivered after the timeout
			is.True(!l.acknowledged(first, start.Add(time.Minute+time.Second)))                             // the stale handle removes nothing
			is.True(l.acknowledged(second, start.Add(time.Minute+time.Second)))                             // the current one does
		}},
		{"delivery during a running delivery is a duplicate", func(is *is.I, l *ledger) {
			l.delivered(first, start, start)
			is.Equal(l.delivered(second, start, start.Add(time.Second)), deliveryDuplicate)
		}},
		{"delivery after completion is unknown", func(is *is.I, l *ledger) {
			l.delivered(first, start, start)
			l.acknowledged(first, start.Add(time.Second))
			is.Equal(l.delivered(second, start, start.Add(time.Minute)), deliveryUnknown)
		}},
		{"delivery of a payload never sent is unknown", func(is *is.I, l *ledger) {
			is.Equal(l.delivered(delivery{ID: "x", Payload: "someone else's"}, start, start), deliveryUnknown)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLedger(30 * time.Second)
			l.sending("p1-7")
			tc.run(is.New(t), l)
		})
	}
}
