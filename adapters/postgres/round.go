package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// operation is one request to the MessageStore, as it waits in the coalescer.
type operation struct {
	kind            operationKind
	enqueue         domain.Enqueue  // of an enqueue
	queueID         domain.ID       // of a dequeue
	acknowledgement acknowledgement // of an acknowledgement
}

type operationKind uint8

const (
	enqueueOperation operationKind = iota
	dequeueOperation
	acknowledgeOperation
)

// acknowledgement names one delivery to complete.
type acknowledgement struct {
	queueID, messageID, receiptHandle domain.ID
}

// outcome is the answer to one operation.
type outcome struct {
	dequeued ports.Dequeued // of a dequeue
	// searchOn marks a dequeue left unserved by a claim that moved exhausted messages to
	// dead-letter storage in place of delivering them: a later round may find it a message.
	searchOn bool
	removed  bool // of an acknowledgement
}

// cost weighs an operation against a round's budget: an enqueue by its payload.
func (op operation) cost() int {
	if op.kind != enqueueOperation {
		return 1
	}
	return 1 + len(op.enqueue.Payload)/payloadBytesPerCost
}

// round is the database work of a batch of operations: its enqueues in one insert, its
// dequeues in one claim per queue, and its acknowledgements in one delete, sent in one round
// trip and committed together (a pgx batch is one implicit transaction), so that a round
// costs one commit however many requests it carries.
type round struct {
	enqueues []domain.Enqueue
	claims   []queueClaim
	// acknowledgements are sorted by message, so that concurrent rounds lock the rows they
	// delete in one order and cannot deadlock; ackPositions[i] is the position of
	// acknowledgements[i] in the batch.
	acknowledgements []acknowledgement
	ackPositions     []int
}

// queueClaim is the part of a round that dequeues from one queue: the positions in the
// batch of its dequeues still to be served, in arrival order.
type queueClaim struct {
	queueID   domain.ID
	positions []int
}

// newRound sorts a batch of operations by kind.
func newRound(batch []operation) round {
	var r round
	claimOf := map[domain.ID]int{}
	for position, op := range batch {
		switch op.kind {
		case enqueueOperation:
			r.enqueues = append(r.enqueues, op.enqueue)
		case dequeueOperation:
			i, ok := claimOf[op.queueID]
			if !ok {
				i = len(r.claims)
				claimOf[op.queueID] = i
				r.claims = append(r.claims, queueClaim{queueID: op.queueID})
			}
			r.claims[i].positions = append(r.claims[i].positions, position)
		case acknowledgeOperation:
			r.ackPositions = append(r.ackPositions, position)
		}
	}
	slices.SortStableFunc(r.ackPositions, func(a, b int) int {
		x, y := batch[a].acknowledgement, batch[b].acknowledgement
		return cmp.Or(slices.Compare(x.queueID[:], y.queueID[:]), slices.Compare(x.messageID[:], y.messageID[:]))
	})
	for _, position := range r.ackPositions {
		r.acknowledgements = append(r.acknowledgements, batch[position].acknowledgement)
	}
	return r
}

// runRound carries out a batch of operations as one round and answers each.
func (s *MessageStore) runRound(ctx context.Context, batch []operation, outcomes []outcome) error {
	r := newRound(batch)
	results := s.pool.SendBatch(ctx, r.statements())
	err := r.read(results, outcomes)
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("postgres: commit round: %w", translate(closeErr))
	}
	return err
}

// statements queues the round's statements: the insert first, so that a dequeue may get a
// message enqueued in the same round.
func (r *round) statements() *pgx.Batch {
	batch := &pgx.Batch{}
	if len(r.enqueues) > 0 {
		batch.Queue(insertMessages, insertArguments(r.enqueues)...)
	}
	for _, c := range r.claims {
		batch.Queue(claimMessages, c.queueID, len(c.positions))
	}
	if len(r.acknowledgements) > 0 {
		batch.Queue(deleteAcknowledged, deleteArguments(r.acknowledgements)...)
	}
	return batch
}

// read reads the results of the round's statements, in their order, into outcomes.
func (r *round) read(results pgx.BatchResults, outcomes []outcome) error {
	if len(r.enqueues) > 0 {
		if _, err := results.Exec(); err != nil {
			return fmt.Errorf("postgres: insert messages: %w", translate(err))
		}
	}
	for _, c := range r.claims {
		got, err := readClaimed(results)
		if err != nil {
			return err
		}
		c.serve(got, outcomes)
	}
	if len(r.acknowledgements) > 0 {
		deleted, err := readAcknowledged(results)
		if err != nil {
			return err
		}
		r.markRemoved(deleted, outcomes)
	}
	return nil
}

// serve gives the claimed deliveries to the claim's dequeues in arrival order, the best to
// the earliest, and counts the dead-lettered messages on its first dequeue. When the claim
// moved messages to dead-letter storage, its unserved dequeues are marked to search on.
func (c queueClaim) serve(got claimed, outcomes []outcome) {
	outcomes[c.positions[0]].dequeued.DeadLettered += got.deadLettered
	for i, d := range got.deliveries {
		outcomes[c.positions[i]].dequeued.Delivery, outcomes[c.positions[i]].dequeued.OK = d, true
	}
	if got.deadLettered > 0 {
		for _, position := range c.positions[len(got.deliveries):] {
			outcomes[position].searchOn = true
		}
	}
}

// markRemoved marks the acknowledgements that removed their message. When the same
// acknowledgement comes twice in a round, the earlier one removed the message.
func (r *round) markRemoved(deleted []acknowledgement, outcomes []outcome) {
	for _, d := range deleted {
		for i, a := range r.acknowledgements {
			if a == d && !outcomes[r.ackPositions[i]].removed {
				outcomes[r.ackPositions[i]].removed = true
				break
			}
		}
	}
}

// insertArguments are the arguments of insertMessages: the messages as parallel arrays, in
// order, so that of two requests in one round the earlier gets the earlier place in line.
func insertArguments(enqueues []domain.Enqueue) []any {
	n := len(enqueues)
	queueIDs, ids := make([]domain.ID, n), make([]domain.ID, n)
	priorities := make([]int16, n)
	payloads := make([][]byte, n)
	ttls, visibilityTimeouts, maxAttempts := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, e := range enqueues {
		queueIDs[i], ids[i] = e.QueueID, e.MessageID
		priorities[i] = int16(e.Priority)
		payloads[i] = []byte(e.Payload)
		ttls[i], visibilityTimeouts[i] = seconds(e.TTL), seconds(e.VisibilityTimeout)
		maxAttempts[i] = int32(e.MaxDeliveryAttempts)
	}
	return []any{queueIDs, ids, priorities, payloads, ttls, visibilityTimeouts, maxAttempts}
}

// deleteArguments are the arguments of deleteAcknowledged: the deliveries as parallel arrays.
func deleteArguments(acknowledgements []acknowledgement) []any {
	n := len(acknowledgements)
	queueIDs, ids, handles := make([]domain.ID, n), make([]domain.ID, n), make([]domain.ID, n)
	for i, a := range acknowledgements {
		queueIDs[i], ids[i], handles[i] = a.queueID, a.messageID, a.receiptHandle
	}
	return []any{queueIDs, ids, handles}
}

// claimed is the outcome of one claim statement.
type claimed struct {
	deliveries   []domain.Delivery // in delivery order
	deadLettered int
}

// readClaimed reads the next result of a round, a claimMessages.
func readClaimed(results pgx.BatchResults) (claimed, error) {
	rows, err := results.Query()
	if err != nil {
		return claimed{}, fmt.Errorf("postgres: claim messages: %w", translate(err))
	}
	defer rows.Close()
	var c claimed
	for rows.Next() {
		var (
			deadLettered      int64
			id, receiptHandle *domain.ID
			payload           []byte
			priority          *int16
			attempts          *int32
		)
		if err := rows.Scan(&deadLettered, &id, &payload, &priority, &receiptHandle, &attempts); err != nil {
			return claimed{}, fmt.Errorf("postgres: claim messages: %w", err)
		}
		c.deadLettered = int(deadLettered)
		if id == nil {
			continue
		}
		c.deliveries = append(c.deliveries, domain.Delivery{
			MessageID: *id, Payload: string(payload), Priority: domain.Priority(*priority),
			ReceiptHandle: *receiptHandle, DeliveryAttempts: int(*attempts),
		})
	}
	if err := rows.Err(); err != nil {
		return claimed{}, fmt.Errorf("postgres: claim messages: %w", translate(err))
	}
	return c, nil
}

// readAcknowledged reads the next result of a round, a deleteAcknowledged: the
// acknowledgements that removed a message.
func readAcknowledged(results pgx.BatchResults) ([]acknowledgement, error) {
	rows, err := results.Query()
	if err != nil {
		return nil, fmt.Errorf("postgres: delete acknowledged messages: %w", translate(err))
	}
	deleted, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (acknowledgement, error) {
		var a acknowledgement
		err := row.Scan(&a.queueID, &a.messageID, &a.receiptHandle)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: delete acknowledged messages: %w", translate(err))
	}
	return deleted, nil
}
