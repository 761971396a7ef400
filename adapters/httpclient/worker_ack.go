package httpclient

import (
	"context"
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

// flush acknowledges batch in one call and reports the outcome. A batch that fails is not
// sent again by the worker (the client already retried it): its messages come back when
// their leases end.
func (a *acker) flush(batch []pendingAck) {
	if len(batch) == 0 {
		return
	}
	receipts := make([]domain.Receipt, len(batch))
	for i, p := range batch {
		receipts[i] = p.d.Receipt()
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	removed, err := a.w.retsu.AcknowledgeMessages(ctx, a.w.queueID, receipts)
	cancel()
	for _, p := range batch {
		p.settled()
	}
	if err != nil {
		a.w.emit(WorkerEvent{Kind: EventAckFailed, Count: len(batch), Err: err})
		return
	}
	acknowledged := 0
	for i, ok := range removed {
		if ok {
			acknowledged++
			continue
		}
		d := batch[i].d
		a.w.emit(WorkerEvent{Kind: EventAckLost, MessageID: d.MessageID, DeliveryAttempts: d.DeliveryAttempts})
	}
	a.w.emit(WorkerEvent{Kind: EventAcknowledged, Count: acknowledged})
}
