package main

import (
	"strings"
	"sync"
	"time"
)

// ledger tracks the messages a run enqueued, by the token in their payload, from the moment
// the enqueue is sent (a consumer may see a message before its producer has the answer)
// until a timely acknowledgement completes it. It is what makes the lifecycle count correct
// by construction: a message counts once, only if this run sent it, and only if its
// acknowledgement surely came within its visibility timeout.
type ledger struct {
	visibilityTimeout time.Duration

	mu      sync.Mutex
	pending map[string]*ledgerEntry
}

// ledgerEntry is one message not yet completed.
type ledgerEntry struct {
	// receiptHandle names the current delivery; only its acknowledgement completes the message.
	receiptHandle string
	// leasedUntil is the earliest moment the current delivery may end: the time its dequeue
	// was sent plus the visibility timeout. Zero while not delivered.
	leasedUntil time.Time
}

// deliveryVerdict is the ledger's judgement of a delivery.
type deliveryVerdict int

const (
	deliveryExpected deliveryVerdict = iota
	// deliveryUnknown: the payload is not one this run sent, or its message was already
	// completed: delivered after its acknowledgement.
	deliveryUnknown
	// deliveryDuplicate: the message was delivered again while an earlier delivery was
	// surely still running.
	deliveryDuplicate
)

func newLedger(visibilityTimeout time.Duration) *ledger {
	return &ledger{visibilityTimeout: visibilityTimeout, pending: map[string]*ledgerEntry{}}
}

// sending records that the message with token is about to be enqueued.
func (l *ledger) sending(token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[token] = &ledgerEntry{}
}

// delivered judges the delivery of d by a dequeue sent at sent.
func (l *ledger) delivered(d delivery, sent, now time.Time) deliveryVerdict {
	token := tokenOf(d.Payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.pending[token]
	switch {
	case !ok:
		return deliveryUnknown
	case now.Before(e.leasedUntil):
		return deliveryDuplicate
	}
	e.receiptHandle, e.leasedUntil = d.ReceiptHandle, sent.Add(l.visibilityTimeout)
	return deliveryExpected
}

// acknowledged records an acknowledgement of d whose answer came at now, and reports
// whether it completed the message: d is the message's current delivery, the answer came
// before that delivery could have ended, and the message was not completed before.
func (l *ledger) acknowledged(d delivery, now time.Time) bool {
	token := tokenOf(d.Payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.pending[token]
	if !ok || e.receiptHandle != d.ReceiptHandle || !now.Before(e.leasedUntil) {
		return false
	}
	delete(l.pending, token)
	return true
}

// tokenOf returns the token at the start of a payload, up to its first space.
func tokenOf(payload string) string {
	token, _, _ := strings.Cut(payload, " ")
	return token
}
