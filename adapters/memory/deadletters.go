package memory

import (
	"context"
	"slices"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// DeadLetters returns a page of the queue's dead letters in ID order.
func (s *MessageStore) DeadLetters(_ context.Context, queueID domain.ID, p ports.DeadLetterPage) ([]domain.DeadLetter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue(queueID)
	page := make([]domain.DeadLetter, 0, min(p.Limit, len(q.deadLetters)))
	for _, id := range q.deadLetterIDs() {
		if len(page) == p.Limit {
			break
		}
		if p.After.IsZero() || compareIDs(id, p.After) > 0 {
			page = append(page, q.deadLetters[id])
		}
	}
	return page, nil
}

// DeadLetter returns one dead letter. Returns domain.ErrDeadLetterNotFound.
func (s *MessageStore) DeadLetter(_ context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.queue(queueID).deadLetters[messageID]
	if !ok {
		return domain.DeadLetter{}, domain.ErrDeadLetterNotFound
	}
	return d, nil
}

// DeleteDeadLetter deletes one dead letter, if there is one.
func (s *MessageStore) DeleteDeadLetter(_ context.Context, queueID, messageID domain.ID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.queue(queueID).deadLetters, messageID)
	return nil
}

// DeleteAllDeadLetters deletes every dead letter of the queue.
func (s *MessageStore) DeleteAllDeadLetters(_ context.Context, queueID domain.ID) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue(queueID)
	n := len(q.deadLetters)
	clear(q.deadLetters)
	return n, nil
}

// Redrive sends the selected dead letters back to the end of their priority's line.
func (s *MessageStore) Redrive(_ context.Context, queue domain.Queue, r domain.Redrive) ([]domain.ID, error) {
	s.mu.Lock()
	defer s.flush()
	defer s.mu.Unlock()
	if s.deleted(queue.ID) {
		return nil, nil
	}
	now := s.clock.Now()
	q := s.queue(queue.ID)
	selected := r.IDs
	if selected == nil {
		selected = q.deadLetterIDs()[:min(r.Limit, len(q.deadLetters))]
	}
	var moved []domain.ID
	for _, id := range selected {
		d, ok := q.deadLetters[id]
		if !ok {
			continue
		}
		delete(q.deadLetters, id)
		s.seq++
		m := &stored{Message: domain.NewStoredMessage(d.Redrive(queue), s.seq, now)}
		q.messages[id] = m
		q.place(m, now)
		moved = append(moved, id)
	}
	s.wake(queue.ID, 0, len(moved))
	return moved, nil
}

// deadLetterIDs returns the IDs of the dead letters in ascending order.
func (q *messageQueue) deadLetterIDs() []domain.ID {
	ids := make([]domain.ID, 0, len(q.deadLetters))
	for id := range q.deadLetters {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareIDs)
	return ids
}

// compareIDs orders IDs by their bytes, as UUIDs compare in PostgreSQL.
func compareIDs(a, b domain.ID) int { return slices.Compare(a[:], b[:]) }
