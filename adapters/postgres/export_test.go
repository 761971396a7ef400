package postgres

import (
	"context"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// The round behind the coalescer, for tests that need a batch of known content.

// Operation is one request as the coalescer carries it.
type Operation = operation

// Enqueueing is the operation of Enqueue(e).
func Enqueueing(e domain.Enqueue) Operation { return operation{kind: enqueueOperation, enqueue: e} }

// Dequeueing is the operation of Dequeue(queueID).
func Dequeueing(queueID domain.ID) Operation {
	return operation{kind: dequeueOperation, queueID: queueID}
}

// Acknowledging is the operation of an Acknowledge of delivery d of queue queueID.
func Acknowledging(queueID domain.ID, d domain.Delivery) Operation {
	return operation{kind: acknowledgeOperation, acknowledgement: acknowledgement{queueID, d.MessageID, d.ReceiptHandle}}
}

// Round carries out batch as one round and returns what Dequeue and Acknowledge would have
// returned for each of its operations.
func Round(s *MessageStore, ctx context.Context, batch []Operation) ([]ports.Dequeued, []bool, error) {
	outcomes := make([]outcome, len(batch))
	if err := s.runRound(ctx, batch, outcomes); err != nil {
		return nil, nil, err
	}
	dequeued, removed := make([]ports.Dequeued, len(batch)), make([]bool, len(batch))
	for i, o := range outcomes {
		dequeued[i], removed[i] = o.dequeued, o.removed
	}
	return dequeued, removed, nil
}
