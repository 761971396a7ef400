package memory

import (
	"context"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueCache = (*QueueCache)(nil)

// QueueCache caches queue details in the memory of one process. With a lifetime, an entry
// is ignored that long after it was written, which bounds how long this process can serve
// settings that another process has since changed.
type QueueCache struct {
	clock    ports.Clock
	lifetime time.Duration
	mu       sync.RWMutex
	entries  map[domain.ID]cacheEntry
}

type cacheEntry struct {
	queue     domain.Queue
	deleted   bool
	writtenAt time.Time
}

// QueueCacheOptions tune a QueueCache; the zero value keeps entries until they are replaced,
// on the system clock.
type QueueCacheOptions struct {
	// Lifetime is how long an entry is served after it was written; zero keeps it until it
	// is replaced.
	Lifetime time.Duration
	// Clock tells the time of the lifetimes; nil is the system clock.
	Clock ports.Clock
}

// NewQueueCache returns an empty cache.
func NewQueueCache(o QueueCacheOptions) *QueueCache {
	return &QueueCache{clock: clockOr(o.Clock), lifetime: o.Lifetime, entries: map[domain.ID]cacheEntry{}}
}

// Queue returns the cached queue, if its entry is present and alive.
func (c *QueueCache) Queue(_ context.Context, id domain.ID) (domain.Queue, bool, error) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	switch {
	case !ok || !c.alive(e):
		return domain.Queue{}, false, nil
	case e.deleted:
		return domain.Queue{}, false, domain.ErrQueueNotFound
	}
	return e.queue, true, nil
}

// Fill caches q unless a live entry for it exists. It looks and writes under one lock, so
// that a Store between the two cannot be overwritten with the older details of q.
func (c *QueueCache) Fill(_ context.Context, q domain.Queue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[q.ID]; ok && c.alive(e) {
		return nil
	}
	c.entries[q.ID] = cacheEntry{queue: q, writtenAt: c.clock.Now()}
	return nil
}

// Store caches q, replacing any entry.
func (c *QueueCache) Store(_ context.Context, q domain.Queue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[q.ID] = cacheEntry{queue: q, writtenAt: c.clock.Now()}
	return nil
}

// Delete records that the queue was deleted, replacing any entry.
func (c *QueueCache) Delete(_ context.Context, id domain.ID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[id] = cacheEntry{deleted: true, writtenAt: c.clock.Now()}
	return nil
}

// alive reports whether e is within its lifetime.
func (c *QueueCache) alive(e cacheEntry) bool {
	return c.lifetime == 0 || c.clock.Now().Sub(e.writtenAt) < c.lifetime
}
