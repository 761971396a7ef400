package app

import (
	"context"
	"fmt"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// DeadLetters returns a page of the queue's dead letters in ID order.
func (s *Service) DeadLetters(ctx context.Context, queueID domain.ID, p ports.DeadLetterPage) ([]domain.DeadLetter, error) {
	if p.Limit == 0 {
		p.Limit = domain.DefaultListLimit
	}
	if err := domain.ValidateListLimit(p.Limit); err != nil {
		return nil, err
	}
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return nil, err
	}
	letters, err := s.deadLetters.DeadLetters(ctx, queueID, p)
	if err := s.noteDatabase(ctx, err); err != nil {
		return nil, fmt.Errorf("dead letters of %s: %w", queueID, err)
	}
	return letters, nil
}

// DeadLetter returns one dead letter.
func (s *Service) DeadLetter(ctx context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error) {
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return domain.DeadLetter{}, err
	}
	letter, err := s.deadLetters.DeadLetter(ctx, queueID, messageID)
	if err := s.noteDatabase(ctx, err); err != nil {
		return domain.DeadLetter{}, fmt.Errorf("dead letter %s of %s: %w", messageID, queueID, err)
	}
	return letter, nil
}

// DeleteDeadLetter deletes one dead letter, if there is one.
func (s *Service) DeleteDeadLetter(ctx context.Context, queueID, messageID domain.ID) error {
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return err
	}
	err := s.deadLetters.DeleteDeadLetter(ctx, queueID, messageID)
	if err := s.noteDatabase(ctx, err); err != nil {
		return fmt.Errorf("delete dead letter %s of %s: %w", messageID, queueID, err)
	}
	return nil
}

// DeleteDeadLetters deletes every dead letter of the queue.
func (s *Service) DeleteDeadLetters(ctx context.Context, queueID domain.ID) (int, error) {
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return 0, err
	}
	n, err := s.deadLetters.DeleteAllDeadLetters(ctx, queueID)
	if err := s.noteDatabase(ctx, err); err != nil {
		return n, fmt.Errorf("delete dead letters of %s: %w", queueID, err)
	}
	return n, nil
}

// Redrive sends dead letters back to their queue with the queue's current settings, read
// from the QueueStore rather than the cache so that a PATCH just made applies.
func (s *Service) Redrive(ctx context.Context, queueID domain.ID, r domain.Redrive) ([]domain.ID, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.queueDetails(ctx, queueID); err != nil {
		return nil, err
	}
	q, err := s.queues.Queue(ctx, queueID)
	if err := s.noteDatabase(ctx, err); err != nil {
		return nil, fmt.Errorf("redrive to %s: %w", queueID, err)
	}
	ids, err := s.deadLetters.Redrive(ctx, q, r)
	if err := s.noteDatabase(ctx, err); err != nil {
		return nil, fmt.Errorf("redrive to %s: %w", queueID, err)
	}
	s.metrics.MessagesRedriven(len(ids))
	return ids, nil
}
