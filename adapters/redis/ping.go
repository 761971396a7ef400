package redis

import (
	"context"
	"fmt"
)

// Ping reports whether Redis answers within OpTimeout, for the readiness report. It fails
// at once while Open has not connected yet.
func (c *QueueCache) Ping(ctx context.Context) error {
	client, err := c.redis()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.OpTimeout)
	defer cancel()
	if err := client.Do(ctx, client.B().Ping().Build()).Error(); err != nil {
		return fmt.Errorf("redis: ping: %w", err)
	}
	return nil
}
