package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// operation is one request to the MessageStore, as it waits in the coalescer.
type operation struct {
	kind    operationKind
	queueID domain.ID
	enqueue ports.EnqueueParams // of an enqueue
	dequeue ports.DequeueParams // of a dequeue
	// receipts are those of an acknowledgement or an undelivery; receipt and seconds those of
	// an extend or a release.
	receipts []domain.Receipt
	receipt  domain.Receipt
	seconds  int32
}

type operationKind uint8

const (
	enqueueOperation operationKind = iota
	dequeueOperation
	acknowledgeOperation
	extendOperation
	releaseOperation
	undeliverOperation
)

// outcome is the answer to one operation.
type outcome struct {
	enqueued ports.Enqueued // of an enqueue
	dequeued ports.Dequeued // of a dequeue
	removed  []bool         // of an acknowledgement
	held     bool           // of an extend or a release
	// err is the operation's own refusal (an enqueue to a deleted queue, a reused key), which
	// does not fail the round.
	err error
	// failed is the error of the round that carried the operation, when the round leader
	// carried it (forward.go): the rounds of one forwarded batch may fail apart.
	failed error
	// record is the idempotency record that an enqueue found, which decides the repeats of
	// its key in the round.
	record *keyRecord
}

// keyRecord is what an idempotency key's record holds.
type keyRecord struct {
	fingerprint domain.Fingerprint
	ids         []domain.ID
}

// cost weighs an operation against a round's budget: the messages it may carry, an enqueue's
// by their payloads.
func (op operation) cost() int {
	switch op.kind {
	case enqueueOperation:
		cost := 0
		for _, e := range op.enqueue.Messages {
			cost += 1 + len(e.Payload)/payloadBytesPerCost
		}
		return cost
	case dequeueOperation:
		return op.dequeue.Max
	case acknowledgeOperation, undeliverOperation:
		return len(op.receipts)
	}
	return 1
}

// round is the database work of a batch of operations: its enqueues in one insert, its
// dequeues in one claim per queue, and its acknowledgements, extends, releases and
// undeliveries in one statement each, sent in one round trip and committed together (a pgx
// batch is one implicit transaction), so that a round costs one commit however many
// requests it carries, and a batch request is one statement's worth of work.
type round struct {
	// enqueues are the positions of the enqueues that the insert carries; repeats are those
	// whose idempotency key an earlier enqueue of the round carries, by the position of that
	// one, which decides them once its outcome is known.
	enqueues []int
	repeats  map[int]int
	claims   []queueClaim
	// The receipts of the statements that lock rows by primary key, sorted by message so
	// that concurrent rounds lock them in one order, then by handle, each receipt's entries
	// in arrival order.
	acknowledgements, extends, releases, undeliveries []receiptEntry
}

// queueClaim is the part of a round that dequeues from one queue: the positions in the batch
// of its dequeues, in arrival order, how many messages they take together, and whether one
// of them is about to wait.
type queueClaim struct {
	queueID   domain.ID
	positions []int
	total     int
	next      bool
}

// receiptEntry is one receipt of a round's statement: its operation's position in the batch,
// its place in that operation, and what the statement needs.
type receiptEntry struct {
	position, index int
	queueID         domain.ID
	receipt         domain.Receipt
	seconds         int32
}

// newRound sorts a batch of operations by kind.
func newRound(batch []operation) round {
	r := round{repeats: map[int]int{}}
	claimOf := map[domain.ID]int{}
	keyOf := map[keyOfQueue]int{}
	for position, op := range batch {
		switch op.kind {
		case enqueueOperation:
			if key := op.enqueue.Key; key != nil {
				k := keyOfQueue{op.queueID, key.Key}
				if first, ok := keyOf[k]; ok {
					r.repeats[position] = first
					continue
				}
				keyOf[k] = position
			}
			r.enqueues = append(r.enqueues, position)
		case dequeueOperation:
			i, ok := claimOf[op.queueID]
			if !ok {
				i = len(r.claims)
				claimOf[op.queueID] = i
				r.claims = append(r.claims, queueClaim{queueID: op.queueID})
			}
			c := &r.claims[i]
			c.positions = append(c.positions, position)
			c.total += op.dequeue.Max
			c.next = c.next || op.dequeue.Next
		case acknowledgeOperation:
			r.acknowledgements = appendReceipts(r.acknowledgements, position, op)
		case undeliverOperation:
			r.undeliveries = appendReceipts(r.undeliveries, position, op)
		case extendOperation:
			r.extends = append(r.extends, receiptEntry{position: position, queueID: op.queueID, receipt: op.receipt, seconds: op.seconds})
		case releaseOperation:
			r.releases = append(r.releases, receiptEntry{position: position, queueID: op.queueID, receipt: op.receipt, seconds: op.seconds})
		}
	}
	for _, entries := range [][]receiptEntry{r.acknowledgements, r.extends, r.releases, r.undeliveries} {
		slices.SortStableFunc(entries, func(a, b receiptEntry) int {
			return cmp.Or(slices.Compare(a.queueID[:], b.queueID[:]), slices.Compare(a.receipt.MessageID[:], b.receipt.MessageID[:]),
				slices.Compare(a.receipt.ReceiptHandle[:], b.receipt.ReceiptHandle[:]))
		})
	}
	return r
}

type keyOfQueue struct {
	queueID domain.ID
	key     string
}

func appendReceipts(entries []receiptEntry, position int, op operation) []receiptEntry {
	for i, receipt := range op.receipts {
		entries = append(entries, receiptEntry{position: position, index: i, queueID: op.queueID, receipt: receipt})
	}
	return entries
}

// roundRetries bounds how many times a round that PostgreSQL rolled back for a deadlock or a
// serialization failure runs again, after a pause of roundRetryPause times the attempt
// (jittered), so that the transaction it collided with can finish first.
const (
	roundRetries    = 3
	roundRetryPause = 20 * time.Millisecond
)

// runRound carries out a batch of operations as one round, in the round slot slot of this
// instance, and answers each. A round that fails with a deadlock or a serialization failure
// was rolled back whole (a batch is one transaction), so it runs again, up to roundRetries
// times, rather than failing every request it carries for a collision that is usually gone
// a moment later: a deadlock with a cleaner or an operator's statement, say.
func (s *MessageStore) runRound(ctx context.Context, slot int, batch []operation, outcomes []outcome) error {
	g := &s.gates[slot]
	err := s.runRoundAt(ctx, g, slot, batch, outcomes)
	if s.peers != nil {
		contended := g.contended()
		if contended && !s.contended.Load() {
			s.sampled.Store(time.Now().UnixNano()) // this round found it: the first sample
		}
		s.contended.Store(contended)
	}
	return err
}

// runRoundAt runs a round under the round lock of slot, through gate g (gate.go).
func (s *MessageStore) runRoundAt(ctx context.Context, g *roundGate, slot int, batch []operation, outcomes []outcome) error {
	for attempt := 0; ; attempt++ {
		err := s.tryRound(ctx, g, slot, batch, outcomes)
		if err == nil || attempt == roundRetries || !isTransient(err) {
			return err
		}
		clear(outcomes)
		pause := roundRetryPause * time.Duration(attempt+1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause/2 + rand.N(pause/2+1)):
		}
	}
}

// tryRound makes one attempt at runRoundAt. The first attempt of a gated slot runs in the
// transaction prepareRound opened, which holds the lock already; any other takes the lock
// itself, first.
func (s *MessageStore) tryRound(ctx context.Context, g *roundGate, slot int, batch []operation, outcomes []outcome) error {
	if g.conn != nil {
		s.roundsGated.Add(1) // before roundsRun, which the tests watch
	}
	s.roundsRun.Add(1)
	r := newRound(batch)
	statements := r.statements(batch)
	if conn := g.conn; conn != nil {
		g.conn = nil
		statements.Queue("COMMIT")
		results := conn.SendBatch(ctx, statements)
		err := r.read(results, batch, outcomes)
		if err == nil {
			if _, commitErr := results.Exec(); commitErr != nil {
				err = fmt.Errorf("postgres: commit round: %w", translate(commitErr))
			}
		}
		if closeErr := results.Close(); err == nil && closeErr != nil {
			err = fmt.Errorf("postgres: commit round: %w", translate(closeErr))
		}
		releaseRolledBack(conn)
		if err == nil {
			r.answerRepeats(batch, outcomes)
		}
		return err
	}
	statements.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: lockRoundSlot, Arguments: []any{advisoryLockClass, roundLockKey(slot)}}},
		statements.QueuedQueries...)
	results := s.pool.SendBatch(ctx, statements)
	var wait float64
	if err := results.QueryRow().Scan(&wait); err != nil {
		_ = results.Close()
		return fmt.Errorf("postgres: lock round slot: %w", translate(err))
	}
	g.waited(wait)
	err := r.read(results, batch, outcomes)
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("postgres: commit round: %w", translate(closeErr))
	}
	if err == nil {
		r.answerRepeats(batch, outcomes)
	}
	return err
}

// statements queues the round's statements: the insert first, so that a dequeue may get a
// message enqueued in the same round.
func (r *round) statements(batch []operation) *pgx.Batch {
	b := &pgx.Batch{}
	if len(r.enqueues) > 0 {
		b.Queue(insertMessages, insertArguments(batch, r.enqueues)...)
	}
	for _, c := range r.claims {
		b.Queue(claimMessages, c.queueID, c.total, c.next)
	}
	if len(r.acknowledgements) > 0 {
		b.Queue(deleteAcknowledged, receiptArguments(r.acknowledgements, false)...)
	}
	if len(r.extends) > 0 {
		b.Queue(extendLeases, receiptArguments(onePerReceipt(r.extends, true), true)...)
	}
	if len(r.releases) > 0 {
		b.Queue(releaseLeases, receiptArguments(onePerReceipt(r.releases, false), true)...)
	}
	if len(r.undeliveries) > 0 {
		b.Queue(undeliverLeases, receiptArguments(r.undeliveries, false)...)
	}
	return b
}

// read reads the results of the round's statements, in their order, into outcomes.
func (r *round) read(results pgx.BatchResults, batch []operation, outcomes []outcome) error {
	if len(r.enqueues) > 0 {
		if err := r.readInserted(results, batch, outcomes); err != nil {
			return err
		}
	}
	for _, c := range r.claims {
		got, err := readClaimed(results)
		if err != nil {
			return err
		}
		c.serve(got, batch, outcomes)
	}
	if len(r.acknowledgements) > 0 {
		for _, e := range r.acknowledgements {
			if outcomes[e.position].removed == nil {
				outcomes[e.position].removed = make([]bool, len(batch[e.position].receipts))
			}
		}
		if err := readHeld(results, r.acknowledgements, "delete acknowledged messages", false, func(e receiptEntry) {
			outcomes[e.position].removed[e.index] = true
		}); err != nil {
			return err
		}
	}
	// Of two extends of one lease in a round, both hold it, as they would one after the
	// other, and the later one's timeout applies; of two releases, the first ends it.
	for _, statement := range []struct {
		entries []receiptEntry
		what    string
		every   bool
	}{{r.extends, "extend leases", true}, {r.releases, "release leases", false}} {
		if len(statement.entries) == 0 {
			continue
		}
		if err := readHeld(results, statement.entries, statement.what, statement.every, func(e receiptEntry) {
			outcomes[e.position].held = true
		}); err != nil {
			return err
		}
	}
	if len(r.undeliveries) > 0 {
		if _, err := results.Exec(); err != nil {
			return fmt.Errorf("postgres: undeliver: %w", translate(err))
		}
	}
	return nil
}

// readInserted reads the result of insertMessages: the requests it did not store, each with
// why. The others were stored with the IDs they came with.
func (r *round) readInserted(results pgx.BatchResults, batch []operation, outcomes []outcome) error {
	for _, position := range r.enqueues {
		outcomes[position].enqueued = ports.Enqueued{IDs: messageIDs(batch[position].enqueue.Messages)}
	}
	rows, err := results.Query()
	if err != nil {
		return fmt.Errorf("postgres: insert messages: %w", translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			request     int64
			status      string
			fingerprint []byte
			ids         []domain.ID
		)
		if err := rows.Scan(&request, &status, &fingerprint, &ids); err != nil {
			return fmt.Errorf("postgres: insert messages: %w", err)
		}
		position := r.enqueues[request-1]
		out := outcome{}
		switch status {
		case "gone":
			out.err = domain.ErrQueueNotFound
		case "in_use":
			out.err = domain.ErrIdempotencyKeyInUse
		case "found":
			out.record = &keyRecord{ids: ids}
			copy(out.record.fingerprint[:], fingerprint)
			out.enqueued, out.err = out.record.replay(batch[position].enqueue.Key)
		}
		outcomes[position] = out
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: insert messages: %w", translate(err))
	}
	return nil
}

// replay answers a request with a key whose record exists: its IDs when the request is the
// one that made the record, and idempotency_key_reused otherwise.
func (k *keyRecord) replay(key *ports.IdempotencyKey) (ports.Enqueued, error) {
	if key.Fingerprint != k.fingerprint {
		return ports.Enqueued{}, domain.ErrIdempotencyKeyReused
	}
	return ports.Enqueued{IDs: k.ids, Replayed: true}, nil
}

// answerRepeats answers the enqueues whose key an earlier enqueue of the round carried, as
// the record stands after that one: the record it found, or the one it made.
func (r *round) answerRepeats(batch []operation, outcomes []outcome) {
	for position, first := range r.repeats {
		out, key := outcomes[first], batch[position].enqueue.Key
		switch {
		case out.record != nil:
			outcomes[position].enqueued, outcomes[position].err = out.record.replay(key)
		case out.err != nil:
			outcomes[position].err = out.err
		default:
			made := keyRecord{fingerprint: batch[first].enqueue.Key.Fingerprint, ids: out.enqueued.IDs}
			outcomes[position].enqueued, outcomes[position].err = made.replay(key)
		}
	}
}

// serve gives the claimed deliveries to the claim's dequeues in arrival order, the best to
// the earliest, each up to its Max, and counts the moves to dead-letter storage and the next
// moment on the first.
func (c queueClaim) serve(got claimed, batch []operation, outcomes []outcome) {
	first := &outcomes[c.positions[0]].dequeued
	first.DeadLettered, first.Expired = got.deadLettered, got.expired
	deliveries := got.deliveries
	for _, position := range c.positions {
		n := min(batch[position].dequeue.Max, len(deliveries))
		out := &outcomes[position].dequeued
		out.Gone = got.gone
		out.Deliveries, deliveries = deliveries[:n:n], deliveries[n:]
		if batch[position].dequeue.Next {
			out.Next, out.HasNext = got.next, got.hasNext
		}
	}
}

// insertArguments are the arguments of insertMessages: the requests and their messages as
// parallel arrays, in order, so that of two requests in one round the earlier gets the
// earlier place in line.
func insertArguments(batch []operation, positions []int) []any {
	n := len(positions)
	queueIDs, keys, fingerprints := make([]domain.ID, n), make([]*string, n), make([][]byte, n)
	retentions := make([]float64, n)
	var requests []int64
	var ids []domain.ID
	var priorities []int16
	var payloads, attributes [][]byte
	var ttls, delays, visibilityTimeouts, maxAttempts []int32
	for i, position := range positions {
		p := batch[position].enqueue
		queueIDs[i] = p.QueueID
		if p.Key != nil {
			keys[i], fingerprints[i], retentions[i] = &p.Key.Key, p.Key.Fingerprint[:], p.Key.Retention.Seconds()
		}
		for _, e := range p.Messages {
			requests = append(requests, int64(i+1))
			ids = append(ids, e.MessageID)
			priorities = append(priorities, int16(e.Priority))
			payloads = append(payloads, []byte(e.Payload))
			attributes = append(attributes, encodeAttributes(e.Attributes))
			ttls, delays = append(ttls, seconds(e.TTL)), append(delays, seconds(e.Delay))
			visibilityTimeouts = append(visibilityTimeouts, seconds(e.VisibilityTimeout))
			maxAttempts = append(maxAttempts, int32(e.MaxDeliveryAttempts))
		}
	}
	return []any{queueIDs, keys, fingerprints, retentions,
		requests, ids, priorities, payloads, attributes, ttls, delays, visibilityTimeouts, maxAttempts}
}

// receiptArguments are the arguments of the statements on receipts: parallel arrays of
// queues, messages and handles, and of seconds when withSeconds.
func receiptArguments(entries []receiptEntry, withSeconds bool) []any {
	n := len(entries)
	queueIDs, ids, handles := make([]domain.ID, n), make([]domain.ID, n), make([]domain.ID, n)
	secondsOf := make([]int32, n)
	for i, e := range entries {
		queueIDs[i], ids[i], handles[i], secondsOf[i] = e.queueID, e.receipt.MessageID, e.receipt.ReceiptHandle, e.seconds
	}
	if withSeconds {
		return []any{queueIDs, ids, handles, secondsOf}
	}
	return []any{queueIDs, ids, handles}
}

func messageIDs(enqueues []domain.Enqueue) []domain.ID {
	ids := make([]domain.ID, len(enqueues))
	for i, e := range enqueues {
		ids[i] = e.MessageID
	}
	return ids
}

// claimed is the outcome of one claim statement.
type claimed struct {
	deliveries   []domain.Delivery // in delivery order
	gone         bool
	deadLettered int
	expired      int
	next         time.Duration
	hasNext      bool
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
			gone                bool
			deadLettered, done  int64
			expired             int64
			nextMilliseconds    *int64
			id, receiptHandle   *domain.ID
			payload, attributes []byte
			priority            *int16
			attempts            *int32
			enqueuedAt, firstAt *time.Time
		)
		if err := rows.Scan(&gone, &deadLettered, &expired, &nextMilliseconds, &done, &id, &payload, &priority, &receiptHandle,
			&attempts, &attributes, &enqueuedAt, &firstAt); err != nil {
			return claimed{}, fmt.Errorf("postgres: claim messages: %w", err)
		}
		c.gone, c.deadLettered, c.expired = gone, int(deadLettered), int(expired)
		if nextMilliseconds != nil {
			c.next, c.hasNext = max(time.Duration(*nextMilliseconds)*time.Millisecond, 0), true
		}
		if id == nil {
			continue
		}
		d := domain.Delivery{
			MessageID: *id, Payload: string(payload), Priority: domain.Priority(*priority),
			ReceiptHandle: *receiptHandle, DeliveryAttempts: int(*attempts),
			EnqueuedAt: enqueuedAt.UTC(), FirstDeliveredAt: firstAt.UTC(),
		}
		if d.Attributes, err = decodeAttributes(attributes); err != nil {
			return claimed{}, fmt.Errorf("postgres: claim messages: %w", err)
		}
		c.deliveries = append(c.deliveries, d)
	}
	if err := rows.Err(); err != nil {
		return claimed{}, fmt.Errorf("postgres: claim messages: %w", translate(err))
	}
	return c, nil
}

// readHeld reads the next result of a round, a statement on receipts that returns the
// receipts it applied to, and calls held with the entry of each: every entry that names an
// applied receipt when every, else only the earliest (of two acknowledgements of one
// delivery in a round, the first removed the message).
func readHeld(results pgx.BatchResults, entries []receiptEntry, what string, every bool, held func(receiptEntry)) error {
	rows, err := results.Query()
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", what, translate(err))
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (receiptKey, error) {
		var k receiptKey
		err := row.Scan(&k.queueID, &k.receipt.MessageID, &k.receipt.ReceiptHandle)
		return k, err
	})
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", what, translate(err))
	}
	applied := make(map[receiptKey]bool, len(got))
	for _, k := range got {
		applied[k] = true
	}
	for _, e := range entries {
		k := receiptKey{e.queueID, e.receipt}
		if applied[k] {
			held(e)
			applied[k] = every
		}
	}
	return nil
}

// receiptKey names one lease of a queue.
type receiptKey struct {
	queueID domain.ID
	receipt domain.Receipt
}

// onePerReceipt returns entries, sorted by message, with each receipt once: with the
// seconds of its last entry when last, else of its first. A statement that updates by a
// join applies one arbitrary row of several that name the same lease.
func onePerReceipt(entries []receiptEntry, last bool) []receiptEntry {
	unique := make([]receiptEntry, 0, len(entries))
	for _, e := range entries {
		if n := len(unique); n > 0 && unique[n-1].queueID == e.queueID && unique[n-1].receipt == e.receipt {
			if last {
				unique[n-1] = e
			}
			continue
		}
		unique = append(unique, e)
	}
	return unique
}

// encodeAttributes returns the attributes as stored: JSON, or NULL for none.
func encodeAttributes(a domain.Attributes) []byte {
	if len(a) == 0 {
		return nil
	}
	encoded, err := json.Marshal(a)
	if err != nil {
		panic(fmt.Sprintf("postgres: encode attributes: %v", err)) // a map of strings and bytes always encodes
	}
	return encoded
}

// decodeAttributes reads stored attributes.
func decodeAttributes(stored []byte) (domain.Attributes, error) {
	if stored == nil {
		return nil, nil
	}
	var a domain.Attributes
	if err := json.Unmarshal(stored, &a); err != nil {
		return nil, fmt.Errorf("decode attributes: %w", err)
	}
	return a, nil
}
