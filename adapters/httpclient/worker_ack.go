package httpclient

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/retsu/retsu/domain"
)

// acker gathers a Worker's acknowledgements into batches: a batch goes once it holds
// AckBatchSize receipts, or once its first receipt waited AckDelay. Each message's lease is
// kept until its batch was answered.
type acker struct {
	w    *Worker
	in   chan pendingAck
	done chan struct{}
}

// pendingAck is a delivery to acknowledge; settled stops keeping its lease.
type pendingAck struct {
	d       domain.Delivery
	settled func()
}

func newAcker(w *Worker) *acker {
	a := &acker{w: w, in: make(chan pendingAck, w.o.Concurrency), done: make(chan struct{})}
	go a.run()
	return a
}

// add queues d for acknowledgement.
func (a *acker) add(d domain.Delivery, settled func()) { a.in <- pendingAck{d: d, settled: settled} }

// close sends what is queued and waits for its answer. No add may follow.
func (a *acker) close() {
	close(a.in)
	<-a.done
}

func (a *acker) run() {
	defer close(a.done)
	var batch []pendingAck
	timer := time.NewTimer(a.w.o.AckDelay)
	timer.Stop()
	for {
		select {
		case p, ok := <-a.in:
			if !ok {
				a.flush(batch)
				return
			}
			batch = append(batch, p)
			if len(batch) == 1 {
				timer.Reset(a.w.o.AckDelay)
			}
			if len(batch) >= a.w.o.AckBatchSize {
				timer.Stop()
				a.flush(batch)
				batch = nil
			}
		case <-timer.C:
			a.flush(batch)
			batch = nil
		}
	}
}

// flush acknowledges batch and reports the outcome. A batch that fails is not sent again
// (the client already retried it): its messages come back when their leases end. One whose
// outcome is unknown is sent again, with the same receipts, while the leases are still
// kept; if it stays unknown, it is reported as such, neither acknowledged nor lost.
func (a *acker) flush(batch []pendingAck) {
	if len(batch) == 0 {
		return
	}
	receipts := make([]domain.Receipt, len(batch))
	for i, p := range batch {
		receipts[i] = p.d.Receipt()
	}
	removed, err := a.acknowledge(receipts)
	for _, p := range batch {
		p.settled()
	}
	switch {
	case removed == nil && errors.Is(err, ErrOutcomeUnknown):
		a.w.emit(WorkerEvent{Kind: EventAckUnknown, Count: len(batch), Err: err})
		return
	case removed == nil:
		a.w.emit(WorkerEvent{Kind: EventAckFailed, Count: len(batch), Err: err})
		return
	}
	acknowledged := 0
	for i, ok := range removed {
		d := batch[i].d
		switch {
		case ok:
			acknowledged++
		case err != nil:
			a.w.emit(WorkerEvent{Kind: EventAckUnknown, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts, Count: 1, Err: err})
		default:
			a.w.emit(WorkerEvent{Kind: EventAckLost, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts})
		}
	}
	a.w.emit(WorkerEvent{Kind: EventAcknowledged, Count: acknowledged})
}

// acknowledge sends receipts up to ackAttempts times, each within callTimeout, while the
// outcome is unknown. The results it returns come with an error matching ErrOutcomeUnknown
// when an earlier attempt's outcome was unknown and some result is false: that attempt may
// have removed the message.
func (a *acker) acknowledge(receipts []domain.Receipt) ([]bool, error) {
	earlierUnknown := false
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		removed, err := a.w.retsu.AcknowledgeMessages(ctx, a.w.queueID, receipts)
		cancel()
		if err == nil && earlierUnknown && slices.Contains(removed, false) {
			return removed, errAckUncertain
		}
		if removed != nil || !errors.Is(err, ErrOutcomeUnknown) || attempt >= ackAttempts {
			return removed, outcomeOf(err, earlierUnknown)
		}
		earlierUnknown = true
		sleep(context.Background(), backoff(pollBackoffMin, pollBackoffMax, attempt))
	}
}
