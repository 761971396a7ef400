package app

import (
	"context"
	"fmt"

	"github.com/retsu/retsu/domain"
)

// DeleteQueue deletes a queue. The QueueStore records the deletion first, so that the
// MessageStore stores and delivers none of its messages from then on, on every instance;
// then the cache records it, so that every instance answers queue_not_found from its
// memory. The queue's waiting dequeues are woken: the store tells them it is gone (a
// PostgreSQL store also wakes those of the other instances). Should the cache fail, the instances that still hold the queue's entry see the
// deletion when it expires; their requests for it find no message meanwhile.
func (s *Service) DeleteQueue(ctx context.Context, id domain.ID) error {
	if err := s.noteDatabase(ctx, s.queues.DeleteQueue(ctx, id)); err != nil {
		return fmt.Errorf("delete queue %s: %w", id, err)
	}
	s.noteCache("delete", s.cache.Delete(ctx, id))
	s.waits.wakeQueue(id) // its waiting dequeues answer queue_not_found now, not when their wait ends
	return nil
}

// PurgeQueue removes every message of the queue.
func (s *Service) PurgeQueue(ctx context.Context, id domain.ID) (int, error) {
	if _, err := s.queueDetails(ctx, id); err != nil {
		return 0, err
	}
	n, err := s.messages.Purge(ctx, id)
	if err := s.noteDatabase(ctx, err); err != nil {
		return n, fmt.Errorf("purge %s: %w", id, err)
	}
	return n, nil
}

// Stats counts a queue's messages by priority. Returns queue_not_found.
func (s *Service) Stats(ctx context.Context, queueID domain.ID) (domain.QueueStats, error) {
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return domain.QueueStats{}, err
	}
	stats, err := s.messages.Stats(ctx, queueID)
	if err := s.noteDatabase(ctx, err); err != nil {
		return domain.QueueStats{}, fmt.Errorf("stats of %s: %w", queueID, err)
	}
	return stats, nil
}
