package memory

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueStore = (*QueueStore)(nil)

// QueueStore keeps queues in memory.
type QueueStore struct {
	mu     sync.RWMutex
	byID   map[domain.ID]domain.Queue
	byName map[string]domain.ID
}

// NewQueueStore returns an empty QueueStore.
func NewQueueStore() *QueueStore {
	return &QueueStore{byID: map[domain.ID]domain.Queue{}, byName: map[string]domain.ID{}}
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
		if (p.Name == "" || name == p.Name) && name > p.After {
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
