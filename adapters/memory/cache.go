package memory

import (
	"context"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueCache = (*QueueCache)(nil)

// QueueCache caches queue details in the memory of one process. With a lifetime, entries
// are dropped that long after they were written, which bounds how long this process can
// serve settings that another process has since changed.
type QueueCache struct {
	clock    ports.Clock
	lifetime time.Duration
	mu       sync.RWMutex
	entries  map[domain.ID]cacheEntry
}

type cacheEntry struct {
	queue     domain.Queue
	writtenAt time.Time
}

// NewQueueCache returns an empty cache whose entries live for lifetime on clock; a lifetime
// of zero keeps them until they are replaced.
func NewQueueCache(clock ports.Clock, lifetime time.Duration) *QueueCache {
	return &QueueCache{clock: clock, lifetime: lifetime, entries: map[domain.ID]cacheEntry{}}
}

// Queue returns the cached queue, if its entry is present and alive.
func (c *QueueCache) Queue(_ context.Context, id domain.ID) (domain.Queue, bool, error) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	if !ok || c.lifetime > 0 && c.clock.Now().Sub(e.writtenAt) >= c.lifetime {
		return domain.Queue{}, false, nil
	}
	return e.queue, true, nil
}

// Fill caches q unless a live entry for it exists.
func (c *QueueCache) Fill(ctx context.Context, q domain.Queue) error {
	if _, found, _ := c.Queue(ctx, q.ID); found {
		return nil
	}
	return c.Store(ctx, q)
}

// Store caches q, replacing any entry.
func (c *QueueCache) Store(_ context.Context, q domain.Queue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[q.ID] = cacheEntry{queue: q, writtenAt: c.clock.Now()}
	return nil
}
