package redis

import (
	"context"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
)

// staleEntries are the queues whose entry Redis may hold in an outdated version.
type staleEntries struct {
	mu  sync.Mutex
	ids map[domain.ID]struct{}
	// deleting is set while a goroutine is deleting the entries.
	deleting bool
}

// forgetLater remembers that Redis may still hold an outdated entry of queue id, because
// writing an update to it failed, and deletes that entry once Redis answers again, so that
// every instance refills it from PostgreSQL. Deleting is safe whatever happened meanwhile,
// where writing the update again could replace a later one. Until then, EntryTTL bounds
// the entry's life.
func (c *QueueCache) forgetLater(id domain.ID) {
	c.stale.mu.Lock()
	defer c.stale.mu.Unlock()
	if c.background.Err() != nil {
		return // closed: no background work may start (see Close)
	}
	c.stale.ids[id] = struct{}{}
	if !c.stale.deleting {
		c.stale.deleting = true
		c.workers.Go(c.deleteStale)
	}
}

// deleteStale tries every second to delete the stale entries, until none is left or the
// cache is closed.
func (c *QueueCache) deleteStale() {
	for {
		select {
		case <-c.background.Done():
			return
		case <-time.After(reconnectEvery):
		}
		for _, id := range c.staleIDs() {
			if c.delete(id) == nil {
				c.stale.mu.Lock()
				delete(c.stale.ids, id)
				c.stale.mu.Unlock()
			}
		}
		c.stale.mu.Lock()
		if len(c.stale.ids) == 0 {
			c.stale.deleting = false
			c.stale.mu.Unlock()
			return
		}
		c.stale.mu.Unlock()
	}
}

func (c *QueueCache) staleIDs() []domain.ID {
	c.stale.mu.Lock()
	defer c.stale.mu.Unlock()
	ids := make([]domain.ID, 0, len(c.stale.ids))
	for id := range c.stale.ids {
		ids = append(ids, id)
	}
	return ids
}

// delete removes the entry of queue id from Redis.
func (c *QueueCache) delete(id domain.ID) error {
	client, err := c.redis()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.background, c.o.OpTimeout)
	defer cancel()
	return client.Do(ctx, client.B().Del().Key(c.key(id)).Build()).Error()
}
