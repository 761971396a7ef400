package memory

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueStore = (*QueueStore)(nil)

// QueueStore keeps queues, and the record of their deletions, in memory.
type QueueStore struct {
	clock   ports.Clock
	mu      sync.RWMutex
	byID    map[domain.ID]domain.Queue
	byName  map[string]domain.ID
	deleted map[domain.ID]time.Time // when each deleted queue was deleted
}

// QueueStoreOptions tune a QueueStore; the zero value runs on the system clock.
type QueueStoreOptions struct {
	// Clock times the deletions; nil is the system clock.
	Clock ports.Clock
}

// NewQueueStore returns an empty QueueStore.
func NewQueueStore(o QueueStoreOptions) *QueueStore {
	return &QueueStore{
		clock: clockOr(o.Clock), byID: map[domain.ID]domain.Queue{}, byName: map[string]domain.ID{},
		deleted: map[domain.ID]time.Time{},
	}
}

// CreateQueue stores q. Returns domain.ErrQueueAlreadyExists when the name is taken.
func (s *QueueStore) CreateQueue(_ context.Context, q domain.Queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.byName[q.Name]; taken {
		return domain.ErrQueueAlreadyExists
	}
	s.byID[q.ID] = q
	s.byName[q.Name] = q.ID
	return nil
}

// Queue returns the queue with the given ID. Returns domain.ErrQueueNotFound.
func (s *QueueStore) Queue(_ context.Context, id domain.ID) (domain.Queue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, ok := s.byID[id]
	if !ok {
		return domain.Queue{}, domain.ErrQueueNotFound
	}
	return q, nil
}

// ListQueues returns queues ordered by name.
func (s *QueueStore) ListQueues(_ context.Context, p ports.ListQueuesParams) ([]domain.Queue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.byName))
	for name := range s.byName {
		if (p.Name == nil || name == *p.Name) && name > p.After {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, strings.Compare)
	queues := make([]domain.Queue, 0, min(len(names), p.Limit))
	for _, name := range names[:min(len(names), p.Limit)] {
		queues = append(queues, s.byID[s.byName[name]])
	}
	return queues, nil
}

// UpdateQueue applies u to the queue's settings. Returns domain.ErrQueueNotFound.
func (s *QueueStore) UpdateQueue(_ context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.byID[id]
	if !ok {
		return domain.Queue{}, domain.ErrQueueNotFound
	}
	settings, err := u.Apply(q.Settings)
	if err != nil {
		return domain.Queue{}, err
	}
	q.Settings = settings
	s.byID[id] = q
	return q, nil
}

// DeleteQueue removes the queue and records its deletion. Returns domain.ErrQueueNotFound.
func (s *QueueStore) DeleteQueue(_ context.Context, id domain.ID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.byID[id]
	if !ok {
		return domain.ErrQueueNotFound
	}
	delete(s.byID, id)
	delete(s.byName, q.Name)
	s.deleted[id] = s.clock.Now()
	return nil
}

// DeletedQueues returns up to limit recorded deletions after after, in ID order.
func (s *QueueStore) DeletedQueues(_ context.Context, after domain.ID, limit int) ([]ports.DeletedQueue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.clock.Now()
	deleted := make([]ports.DeletedQueue, 0, len(s.deleted))
	for id, at := range s.deleted {
		if bytes.Compare(id[:], after[:]) > 0 {
			deleted = append(deleted, ports.DeletedQueue{ID: id, Age: now.Sub(at)})
		}
	}
	slices.SortFunc(deleted, func(a, b ports.DeletedQueue) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return deleted[:min(limit, len(deleted))], nil
}

// ForgetDeletedQueue drops the record of a deletion.
func (s *QueueStore) ForgetDeletedQueue(_ context.Context, id domain.ID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.deleted, id)
	return nil
}

// isDeleted reports whether a deletion of the queue is recorded.
func (s *QueueStore) isDeleted(id domain.ID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, deleted := s.deleted[id]
	return deleted
}
