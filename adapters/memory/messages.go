package memory

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var (
	_ ports.MessageStore    = (*MessageStore)(nil)
	_ ports.DeadLetterStore = (*MessageStore)(nil)
	_ ports.Cleaning        = (*MessageStore)(nil)
	_ ports.Wakeups         = (*MessageStore)(nil)
)

// MessageStore keeps messages, dead letters and idempotency keys in memory, on the time of
// its clock, and tells its subscribers (ports.Wakeups) when messages may have become
// deliverable. It is the dead-letter store and the cleaners' store too.
type MessageStore struct {
	clock ports.Clock
	// deletions, when set, says which queues were deleted: their messages are refused.
	deletions *QueueStore

	mu     sync.Mutex
	seq    int64
	queues map[domain.ID]*messageQueue
	// passes are the starts of the cleaners' last passes (StartPass).
	passes map[string]time.Time
	wakeups
}

// messageQueue holds one queue's messages. Every stored message is in messages. The line
// holds those that a dequeue may take as soon as they are unexpired, in delivery order; the
// schedule holds the others (delayed, or held by a delivery) by the moment they may be
// delivered, when a dequeue moves them to the line, or to the dead letters once they have
// used their attempts. Entries of messages that were removed or changed since they were
// pushed are skipped when they surface.
type messageQueue struct {
	messages    map[domain.ID]*stored
	line        lineHeap
	schedule    scheduleHeap
	deadLetters map[domain.ID]domain.DeadLetter
	keys        map[string]idempotencyRecord
}

// stored is a message with the version of its state, which every change increments.
type stored struct {
	domain.Message
	version uint64
}

// entry names a message at one version of its state; at is, in the schedule, the moment the
// message may be delivered at that version.
type entry struct {
	message *stored
	version uint64
	at      time.Time
}

// idempotencyRecord is a key's first request.
type idempotencyRecord struct {
	fingerprint domain.Fingerprint
	ids         []domain.ID
	// expiresAt is the store time plus the retention of the request that stored the key,
	// as in the PostgreSQL store: later requests' retention does not move it.
	expiresAt time.Time
}

// expired says whether the record no longer replays at now.
func (r idempotencyRecord) expired(now time.Time) bool { return !now.Before(r.expiresAt) }

// MessageStoreOptions tune a MessageStore; the zero value runs on the system clock.
type MessageStoreOptions struct {
	// Clock takes every time decision of the store; nil is the system clock.
	Clock ports.Clock
	// Queues, when set, is the QueueStore whose deletions the store honours: it stores and
	// delivers no message of a deleted queue, as the PostgreSQL store does.
	Queues *QueueStore
}

// NewMessageStore returns an empty MessageStore.
func NewMessageStore(o MessageStoreOptions) *MessageStore {
	return &MessageStore{clock: clockOr(o.Clock), deletions: o.Queues, queues: map[domain.ID]*messageQueue{}}
}

// Enqueue stores the messages, or replays the request that first used the key.
func (s *MessageStore) Enqueue(_ context.Context, p ports.EnqueueParams) (ports.Enqueued, error) {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	if s.deleted(p.QueueID) {
		return ports.Enqueued{}, domain.ErrQueueNotFound
	}
	now := s.clock.Now()
	q := s.queue(p.QueueID)
	if p.Key != nil {
		if record, ok := q.keys[p.Key.Key]; ok && !record.expired(now) {
			if record.fingerprint != p.Key.Fingerprint {
				return ports.Enqueued{}, domain.ErrIdempotencyKeyReused
			}
			return ports.Enqueued{IDs: record.ids, Replayed: true}, nil
		}
	}
	ids := make([]domain.ID, len(p.Messages))
	ready, firstDelay := 0, time.Duration(0)
	for i, e := range p.Messages {
		s.seq++
		m := &stored{Message: domain.NewStoredMessage(e, s.seq, now)}
		q.messages[m.ID] = m
		q.place(m, now)
		ids[i] = m.ID
		switch {
		case e.Delay == 0:
			ready++
		case firstDelay == 0 || e.Delay < firstDelay:
			firstDelay = e.Delay
		}
	}
	if p.Key != nil {
		q.keys[p.Key.Key] = idempotencyRecord{fingerprint: p.Key.Fingerprint, ids: ids, expiresAt: now.Add(p.Key.Retention)}
	}
	s.wake(p.QueueID, 0, ready)
	if firstDelay > 0 {
		s.wake(p.QueueID, firstDelay, 1)
	}
	return ports.Enqueued{IDs: ids}, nil
}

// Replay answers a repeat of a request stored with key, storing nothing.
func (s *MessageStore) Replay(_ context.Context, queueID domain.ID, key ports.IdempotencyKey) (ports.Enqueued, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[queueID]
	if !ok {
		return ports.Enqueued{}, nil
	}
	record, ok := q.keys[key.Key]
	if !ok || record.expired(s.clock.Now()) {
		return ports.Enqueued{}, nil
	}
	if record.fingerprint != key.Fingerprint {
		return ports.Enqueued{}, domain.ErrIdempotencyKeyReused
	}
	return ports.Enqueued{IDs: record.ids, Replayed: true}, nil
}

// Dequeue moves the messages whose moment came to the line or to the dead letters, then
// delivers the best of the line.
func (s *MessageStore) Dequeue(_ context.Context, p ports.DequeueParams) (ports.Dequeued, error) {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	var result ports.Dequeued
	if s.deleted(p.QueueID) {
		result.Gone = true
		return result, nil
	}
	now := s.clock.Now()
	q := s.queue(p.QueueID)
	result.DeadLettered = q.advance(now)
	var leaseEnds time.Duration
	for len(result.Deliveries) < p.Max && q.line.Len() > 0 {
		m, ok := q.pop(&q.line)
		if !ok || m.IsExpired(now) {
			continue // the expired-message cleaner deletes it
		}
		result.Deliveries = append(result.Deliveries, m.Deliver(domain.ID(uuid.New()), now))
		if leaseEnds == 0 || m.VisibilityTimeout < leaseEnds {
			leaseEnds = m.VisibilityTimeout
		}
		q.touch(m)
		q.place(m, now)
	}
	if len(result.Deliveries) > 0 {
		s.wake(p.QueueID, leaseEnds, len(result.Deliveries))
	}
	if p.Next {
		result.Next, result.HasNext = q.next(now)
	}
	return result, nil
}

// Acknowledge removes each message whose receipt holds its lease, in order.
func (s *MessageStore) Acknowledge(_ context.Context, queueID domain.ID, receipts []domain.Receipt) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	removed := make([]bool, len(receipts))
	for i, r := range receipts {
		if m, ok := q.holder(r, now); ok {
			delete(q.messages, m.ID)
			removed[i] = true
		}
	}
	return removed, nil
}

// Extend makes the lease of receipt end timeout from now.
func (s *MessageStore) Extend(_ context.Context, queueID domain.ID, r domain.Receipt, timeout time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	m, ok := q.holder(r, now)
	if !ok {
		return false, nil
	}
	m.Extend(timeout, now)
	q.touch(m)
	q.place(m, now)
	s.wake(queueID, timeout, 1) // the lease may now end sooner than waiters were told
	return true, nil
}

// Release ends the lease of receipt; the message is deliverable again after delay.
func (s *MessageStore) Release(_ context.Context, queueID domain.ID, r domain.Receipt, delay time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	m, ok := q.holder(r, now)
	if !ok {
		return false, nil
	}
	m.Release(delay, now)
	q.touch(m)
	q.place(m, now)
	s.wake(queueID, delay, 1)
	return true, nil
}

// Undeliver takes back deliveries that never reached their consumer.
func (s *MessageStore) Undeliver(_ context.Context, queueID domain.ID, receipts []domain.Receipt) error {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	n := 0
	for _, r := range receipts {
		if m, ok := q.holder(r, now); ok {
			m.Undeliver(now)
			q.touch(m)
			q.place(m, now)
			n++
		}
	}
	s.wake(queueID, 0, n)
	return nil
}

// Purge removes every message of the queue.
func (s *MessageStore) Purge(_ context.Context, queueID domain.ID) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue(queueID)
	n := len(q.messages)
	q.messages, q.line, q.schedule = map[domain.ID]*stored{}, nil, nil
	return n, nil
}

// Stats counts the queue's messages and dead letters by priority.
func (s *MessageStore) Stats(_ context.Context, queueID domain.ID) (domain.QueueStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	var stats domain.QueueStats
	for i, p := range domain.Priorities {
		stats.Priorities[i].Priority = p
	}
	for _, m := range q.messages {
		ps := &stats.Priorities[m.Priority-domain.PriorityHigh]
		switch {
		case m.IsLeased(now):
			ps.InFlight++
		case m.IsExpired(now):
		case m.IsDelayed(now):
			ps.Delayed++
		default:
			ps.Ready++
			ps.OldestReadyAge = max(ps.OldestReadyAge, now.Sub(m.EnqueuedAt))
		}
	}
	for _, d := range q.deadLetters {
		stats.Priorities[d.Priority-domain.PriorityHigh].DeadLettered++
	}
	return stats, nil
}

// deleted reports whether the queue was deleted. Called with mu held.
func (s *MessageStore) deleted(queueID domain.ID) bool {
	return s.deletions != nil && s.deletions.isDeleted(queueID)
}

// queue returns the queue's messages, creating the holder on first use. Called with mu held.
func (s *MessageStore) queue(id domain.ID) *messageQueue {
	q, ok := s.queues[id]
	if !ok {
		q = &messageQueue{
			messages:    map[domain.ID]*stored{},
			deadLetters: map[domain.ID]domain.DeadLetter{},
			keys:        map[string]idempotencyRecord{},
		}
		s.queues[id] = q
	}
	return q
}

// place puts m in the line when a dequeue may take it at now, and in the schedule
// otherwise. An exhausted message goes to the schedule, so that it reaches the dead
// letters, never a delivery.
func (q *messageQueue) place(m *stored, now time.Time) {
	if m.IsDeliverable(now) && !m.IsExhausted() {
		heap.Push(&q.line, entry{message: m, version: m.version})
		return
	}
	heap.Push(&q.schedule, entry{message: m, version: m.version, at: m.VisibleAt})
}

// touch records a change of m's state: the entries pushed before it are stale.
func (q *messageQueue) touch(m *stored) { m.version++ }

// pop pops the top of h, and returns its message unless the entry is stale.
func (q *messageQueue) pop(h heap.Interface) (*stored, bool) {
	e := heap.Pop(h).(entry)
	m, ok := q.messages[e.message.ID]
	return m, ok && m == e.message && m.version == e.version
}

// advance moves the scheduled messages whose moment came: an exhausted, unexpired one to the
// dead letters, any other to the line. It returns how many it moved to the dead letters.
func (q *messageQueue) advance(now time.Time) int {
	deadLettered := 0
	for q.schedule.Len() > 0 && !now.Before(q.schedule[0].at) {
		m, ok := q.pop(&q.schedule)
		switch {
		case !ok || m.IsLeased(now):
			// Stale, or extended since: another entry stands for it.
		case m.IsExhausted() && !m.IsExpired(now):
			q.deadLetters[m.ID] = m.DeadLetter(now)
			delete(q.messages, m.ID)
			deadLettered++
		case !m.IsExhausted():
			heap.Push(&q.line, entry{message: m, version: m.version})
		}
	}
	return deadLettered
}

// next returns how long until the first scheduled message may be delivered.
func (q *messageQueue) next(now time.Time) (time.Duration, bool) {
	for q.schedule.Len() > 0 {
		e := q.schedule[0]
		if m, ok := q.messages[e.message.ID]; ok && m == e.message && m.version == e.version {
			return max(e.at.Sub(now), 0), true
		}
		heap.Pop(&q.schedule)
	}
	return 0, false
}

// holder returns the message whose lease receipt holds at now.
func (q *messageQueue) holder(r domain.Receipt, now time.Time) (*stored, bool) {
	m, ok := q.messages[r.MessageID]
	if !ok || !m.HoldsLease(r.ReceiptHandle, now) {
		return nil, false
	}
	return m, true
}

// lineHeap orders the line for delivery (domain.Message.DeliversBefore). A message keeps its
// place through redeliveries: its priority and enqueue order never change.
type lineHeap []entry

func (h lineHeap) Len() int           { return len(h) }
func (h lineHeap) Less(i, j int) bool { return h[i].message.DeliversBefore(h[j].message.Message) }
func (h lineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *lineHeap) Pop() any          { return popLast((*[]entry)(h)) }

// scheduleHeap orders the schedule by the moment each message may be delivered, as it was
// when its entry was pushed; a changed message gets a new entry, and the stale one is
// skipped when it surfaces.
type scheduleHeap []entry

func (h scheduleHeap) Len() int           { return len(h) }
func (h scheduleHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h scheduleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scheduleHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *scheduleHeap) Pop() any          { return popLast((*[]entry)(h)) }

func popLast(h *[]entry) any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
