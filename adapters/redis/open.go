package redis

import (
	"context"
	"time"
)

// reconnectEvery is how often Open tries again to reach a Redis that did not answer.
const reconnectEvery = time.Second

// Open returns a QueueCache for the Redis at url that does not need Redis to be up. It
// connects at once when it can; otherwise it keeps trying in the background every second,
// and until a try succeeds every call fails at once, so that the service reads queue
// details from PostgreSQL. Once connected, rueidis reconnects by itself. Open fails only
// for a malformed URL. Close stops the tries and the connection.
func Open(ctx context.Context, url string, o Options) (*QueueCache, error) {
	if _, err := clientOption(url); err != nil {
		return nil, err
	}
	c := newQueueCache(o)
	log := c.o.Logger
	client, err := Connect(ctx, url, o)
	if err == nil {
		c.client.Store(&client)
		return c, nil
	}
	log.Warn("cannot reach Redis; serving queue details from PostgreSQL and retrying every second", "err", err)
	c.workers.Go(func() {
		for {
			select {
			case <-c.background.Done():
				return
			case <-time.After(reconnectEvery):
			}
			if client, err := Connect(c.background, url, o); err == nil {
				c.client.Store(&client)
				log.Info("connected to Redis")
				return
			}
		}
	})
	return c, nil
}

// Close stops the background work (connecting, deleting stale entries) and closes the
// connection, if any.
func (c *QueueCache) Close() {
	// Under stale.mu, so that a forgetLater of a Store still running either starts its
	// worker before the Wait below or sees the cache closed.
	c.stale.mu.Lock()
	c.stop()
	c.stale.mu.Unlock()
	c.workers.Wait()
	if client, err := c.redis(); err == nil {
		client.Close()
	}
}
