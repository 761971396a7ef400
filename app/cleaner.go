package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Cleaners run the two cleanup workers: the expired-message cleaner, which deletes expired
// messages that no delivery is using, and the dead-letter cleaner, which deletes dead
// letters older than the retention. Several processes may run them at once: the stores
// delete each row once however many cleaners pick it (the PostgreSQL store picks each batch
// with SKIP LOCKED, so that no cleaner waits on another).
type Cleaners struct {
	queues   ports.QueueStore
	messages ports.MessageStore
	clock    ports.Clock
	log      *slog.Logger
	metrics  ports.Metrics
	settings CleanerSettings
}

// CleanerSettings configure the cleaners.
type CleanerSettings struct {
	// Interval is the time between the starts of two passes.
	Interval time.Duration
	// BatchSize bounds the rows one statement deletes, so that no transaction grows with
	// the backlog; a pass repeats statements until nothing is left.
	BatchSize int
	// DeadLetterRetention is how long a dead letter is kept.
	DeadLetterRetention time.Duration
}

// NewCleaners returns cleaners over the QueueStore and MessageStore of p, which log to
// p.Logger, count in p.Metrics and time their passes on p.Clock (see Ports for the
// defaults); p.Cache is not used.
func NewCleaners(p Ports, s CleanerSettings) *Cleaners {
	p = p.withDefaults()
	return &Cleaners{queues: p.Queues, messages: p.Messages, clock: p.Clock, log: p.Logger, metrics: p.Metrics, settings: s}
}

// Pass is what one pass of one cleaner did.
type Pass struct {
	Cleaner  string
	Removed  int
	Duration time.Duration
}

// The cleaner names, as logs show them.
const (
	ExpiredMessageCleaner = "expired-messages"
	DeadLetterCleaner     = "dead-letters"
)

// Run makes a pass of both cleaners at once and then every Interval until ctx is done. A
// failed pass is logged and the next one tries again; Run returns only when ctx is done.
func (c *Cleaners) Run(ctx context.Context) {
	c.log.Info("cleaners started", "interval", c.settings.Interval, "batch_size", c.settings.BatchSize,
		"dead_letter_retention", c.settings.DeadLetterRetention)
	ticker := time.NewTicker(c.settings.Interval)
	defer ticker.Stop()
	for {
		c.RunOnce(ctx)
		select {
		case <-ctx.Done():
			c.log.Info("cleaners stopped")
			return
		case <-ticker.C:
		}
	}
}

// RunOnce makes one pass of each cleaner, logging and counting what it removed, how long it
// took, and any error, and returns the passes.
func (c *Cleaners) RunOnce(ctx context.Context) []Pass {
	var passes []Pass
	for _, cleaner := range []struct {
		name  string
		clean func(context.Context, domain.ID) (int, error)
	}{
		{ExpiredMessageCleaner, c.deleteExpired},
		{DeadLetterCleaner, c.deleteDeadLetters},
	} {
		pass, err := c.pass(ctx, cleaner.name, cleaner.clean)
		if err != nil && ctx.Err() != nil {
			return passes // stopping: the next start will finish the work
		}
		c.metrics.CleanerPassed(cleaner.name, pass.Duration, err != nil)
		switch {
		case err != nil:
			c.log.Error("cleaner pass failed; the next pass retries", "cleaner", cleaner.name,
				"removed", pass.Removed, "duration", pass.Duration, "err", err)
		default:
			c.log.Info("cleaner pass", "cleaner", cleaner.name, "removed", pass.Removed, "duration", pass.Duration)
		}
		passes = append(passes, pass)
	}
	return passes
}

// pass runs clean over every queue, a page of queues at a time. It stops at the first
// error: the next pass starts over.
func (c *Cleaners) pass(ctx context.Context, name string, clean func(context.Context, domain.ID) (int, error)) (Pass, error) {
	pass := Pass{Cleaner: name}
	start := c.clock.Now()
	err := c.eachQueue(ctx, func(queueID domain.ID) error {
		removed, err := clean(ctx, queueID)
		pass.Removed += removed
		if err != nil {
			return fmt.Errorf("queue %s: %w", queueID, err)
		}
		return nil
	})
	pass.Duration = c.clock.Now().Sub(start)
	return pass, err
}

// eachQueue calls do with the ID of every queue, in name order, until do fails.
func (c *Cleaners) eachQueue(ctx context.Context, do func(domain.ID) error) error {
	for after := ""; ; {
		queues, err := c.queues.ListQueues(ctx, ports.ListQueuesParams{After: after, Limit: domain.MaxListLimit})
		if err != nil {
			return fmt.Errorf("list queues: %w", err)
		}
		for _, q := range queues {
			if err := do(q.ID); err != nil {
				return err
			}
		}
		if len(queues) < domain.MaxListLimit {
			return nil
		}
		after = queues[len(queues)-1].Name
	}
}

// deleteExpired deletes the queue's removable messages, a batch per statement, until a
// batch comes back short.
func (c *Cleaners) deleteExpired(ctx context.Context, queueID domain.ID) (int, error) {
	return c.inBatches(func() (int, error) {
		n, err := c.messages.DeleteExpired(ctx, queueID, c.settings.BatchSize)
		c.metrics.ExpiredMessagesRemoved(n)
		return n, err
	})
}

// deleteDeadLetters deletes the queue's dead letters older than the retention, a batch per
// statement.
func (c *Cleaners) deleteDeadLetters(ctx context.Context, queueID domain.ID) (int, error) {
	return c.inBatches(func() (int, error) {
		n, err := c.messages.DeleteDeadLetters(ctx, queueID, c.settings.DeadLetterRetention, c.settings.BatchSize)
		c.metrics.DeadLettersRemoved(n)
		return n, err
	})
}

func (c *Cleaners) inBatches(deleteBatch func() (int, error)) (int, error) {
	total := 0
	for {
		n, err := deleteBatch()
		total += n
		if err != nil || n < c.settings.BatchSize {
			return total, err
		}
	}
}
