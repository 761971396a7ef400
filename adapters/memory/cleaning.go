package memory

import (
	"context"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

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

// DeleteIdempotencyKeys deletes up to limit keys past their own expiry.
func (s *MessageStore) DeleteIdempotencyKeys(_ context.Context, queueID domain.ID, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	q := s.queue(queueID)
	deleted := 0
	for key, record := range q.keys {
		if deleted == limit {
			break
		}
		if record.expired(now) {
			delete(q.keys, key)
			deleted++
		}
	}
	return deleted, nil
}

// DeleteQueueData deletes up to limit of the messages, dead letters and keys of a queue,
// and forgets the queue once nothing of it is left. Maps need no keyset: the cursor only
// says when the queue is done.
func (s *MessageStore) DeleteQueueData(_ context.Context, queueID domain.ID, _ ports.QueueDataCursor, limit int) (int, ports.QueueDataCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[queueID]
	if !ok {
		return 0, ports.QueueDataCursor{Done: true}, nil
	}
	deleted := deleteUpTo(q.messages, limit)
	deleted += deleteUpTo(q.deadLetters, limit-deleted)
	deleted += deleteUpTo(q.keys, limit-deleted)
	if len(q.messages)+len(q.deadLetters)+len(q.keys) > 0 {
		return deleted, ports.QueueDataCursor{}, nil
	}
	delete(s.queues, queueID)
	return deleted, ports.QueueDataCursor{Done: true}, nil
}

// deleteUpTo deletes up to limit entries of m and returns how many.
func deleteUpTo[K comparable, V any](m map[K]V, limit int) int {
	deleted := 0
	for k := range m {
		if deleted >= limit {
			break
		}
		delete(m, k)
		deleted++
	}
	return deleted
}

// StartPass claims the cleaner's pass for the interval that starts now.
func (s *MessageStore) StartPass(_ context.Context, cleaner string, interval time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if last, ok := s.passes[cleaner]; ok && now.Before(last.Add(interval*9/10)) {
		return false, nil
	}
	if s.passes == nil {
		s.passes = map[string]time.Time{}
	}
	s.passes[cleaner] = now
	return true, nil
}
