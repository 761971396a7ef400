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

var _ ports.MessageStore = (*MessageStore)(nil)

// MessageStore keeps messages and dead letters in memory, on the time of its clock.
type MessageStore struct {
	clock  ports.Clock
	mu     sync.Mutex
	seq    int64
	queues map[domain.ID]*messageQueue
}

// messageQueue holds one queue's messages. Every stored message is in messages; the ones a
// dequeue may consider wait in candidates, a heap in delivery order
// (domain.Message.DeliversBefore), and the delivered ones wait in leases until their
// visibility timeout ends. Heap entries of messages that were removed or changed since are
// skipped when they surface.
type messageQueue struct {
	messages    map[domain.ID]*domain.Message
	candidates  candidateHeap
	leases      leaseHeap
	deadLetters map[domain.ID]domain.DeadLetter
}

// MessageStoreOptions tune a MessageStore; the zero value runs on the system clock.
type MessageStoreOptions struct {
	// Clock takes every time decision of the store; nil is the system clock.
	Clock ports.Clock
}

// NewMessageStore returns an empty MessageStore.
func NewMessageStore(o MessageStoreOptions) *MessageStore {
	return &MessageStore{clock: clockOr(o.Clock), queues: map[domain.ID]*messageQueue{}}
}

// Enqueue stores the message.
func (s *MessageStore) Enqueue(_ context.Context, e domain.Enqueue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	m := domain.NewStoredMessage(e, s.seq, s.clock.Now())
	q := s.queue(e.QueueID)
	q.messages[m.ID] = &m
	q.pushCandidate(&m)
	return nil
}

// Dequeue delivers the queue's best deliverable message, moving exhausted candidates that
// come first to dead-letter storage.
func (s *MessageStore) Dequeue(_ context.Context, queueID domain.ID) (ports.Dequeued, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	q.releaseEndedLeases(now)
	var result ports.Dequeued
	for q.candidates.Len() > 0 {
		m := q.messages[heap.Pop(&q.candidates).(*domain.Message).ID]
		switch {
		case m == nil || !m.IsDeliverable(now):
			// Removed, or expired: the expired-message cleaner deletes it.
		case m.IsExhausted():
			q.deadLetters[m.ID] = m.DeadLetter(now)
			delete(q.messages, m.ID)
			result.DeadLettered++
		default:
			result.Delivery, result.OK = m.Deliver(domain.ID(uuid.New()), now), true
			heap.Push(&q.leases, leaseEntry{id: m.ID, visibleAt: m.VisibleAt})
			return result, nil
		}
	}
	return result, nil
}

// Acknowledge removes the message when receiptHandle names its current, unexpired delivery.
func (s *MessageStore) Acknowledge(_ context.Context, queueID, messageID, receiptHandle domain.ID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue(queueID)
	m, ok := q.messages[messageID]
	if !ok || !m.Acknowledges(receiptHandle, s.clock.Now()) {
		return false, nil
	}
	delete(q.messages, messageID)
	return true, nil
}

// DeleteExpired deletes up to limit removable messages.
func (s *MessageStore) DeleteExpired(_ context.Context, queueID domain.ID, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	deleted := 0
	for id, m := range q.messages {
		if deleted == limit {
			break
		}
		if m.IsRemovable(now) {
			delete(q.messages, id)
			deleted++
		}
	}
	return deleted, nil
}

// DeleteDeadLetters deletes up to limit dead letters older than retention.
func (s *MessageStore) DeleteDeadLetters(_ context.Context, queueID domain.ID, retention time.Duration, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	deleted := 0
	for id, d := range q.deadLetters {
		if deleted == limit {
			break
		}
		if !d.IsRetained(retention, now) {
			delete(q.deadLetters, id)
			deleted++
		}
	}
	return deleted, nil
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
		case !m.IsExpired(now):
			ps.Ready++
			ps.OldestReadyAge = max(ps.OldestReadyAge, now.Sub(m.EnqueuedAt))
		}
	}
	for _, d := range q.deadLetters {
		stats.Priorities[d.Priority-domain.PriorityHigh].DeadLettered++
	}
	return stats, nil
}

// queue returns the queue's messages, creating the holder on first use.
func (s *MessageStore) queue(id domain.ID) *messageQueue {
	q, ok := s.queues[id]
	if !ok {
		q = &messageQueue{messages: map[domain.ID]*domain.Message{}, deadLetters: map[domain.ID]domain.DeadLetter{}}
		s.queues[id] = q
	}
	return q
}

func (q *messageQueue) pushCandidate(m *domain.Message) { heap.Push(&q.candidates, m) }

// releaseEndedLeases makes the messages whose visibility timeout ended candidates again, in
// their original place.
func (q *messageQueue) releaseEndedLeases(now time.Time) {
	for q.leases.Len() > 0 && !now.Before(q.leases[0].visibleAt) {
		e := heap.Pop(&q.leases).(leaseEntry)
		if m, ok := q.messages[e.id]; ok && m.VisibleAt.Equal(e.visibleAt) {
			q.pushCandidate(m)
		}
	}
}

// candidateHeap orders candidates for delivery. An entry may be pushed again after a
// redelivery, which keeps the message's place: priority and enqueue order never change.
type candidateHeap []*domain.Message

func (h candidateHeap) Len() int           { return len(h) }
func (h candidateHeap) Less(i, j int) bool { return h[i].DeliversBefore(*h[j]) }
func (h candidateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candidateHeap) Push(x any)        { *h = append(*h, x.(*domain.Message)) }
func (h *candidateHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type leaseEntry struct {
	id        domain.ID
	visibleAt time.Time
}

// leaseHeap orders deliveries by the end of their visibility timeout.
type leaseHeap []leaseEntry

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].visibleAt.Before(h[j].visibleAt) }
func (h leaseHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *leaseHeap) Push(x any)        { *h = append(*h, x.(leaseEntry)) }
func (h *leaseHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
