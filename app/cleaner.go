package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
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
	cleaning ports.Cleaning
	clock    ports.Clock
	log      *slog.Logger
	metrics  ports.Metrics
	settings CleanerSettings

	// emptied are the deleted queues whose data this process saw gone, whose records wait
	// out their grace: a pass passes them over rather than look for rows again through the
	// index entries their deletion left dead, a scan of every one until vacuum removes them.
	mu      sync.Mutex
	emptied map[domain.ID]bool
}

// The defaults of CleanerSettings, which RETSU_CLEANUP_INTERVAL, RETSU_CLEANUP_BATCH_SIZE and
// RETSU_DEAD_LETTER_RETENTION document.
const (
	DefaultCleanupInterval     = 30 * time.Second
	DefaultCleanupBatchSize    = 1000
	DefaultDeadLetterRetention = 14 * 24 * time.Hour
	DefaultCleanupRest         = 1.0
)

// CleanerSettings configure the cleaners. A setting that is zero or negative takes its
// default, so that an embedder who leaves one out gets cleaners that run on the documented
// schedule: never a ticker that cannot start, a pass that never ends (a batch of zero rows
// never comes back short), or dead letters deleted the moment they are made.
type CleanerSettings struct {
	// Interval is the time between the starts of two passes; DefaultCleanupInterval when
	// not positive.
	Interval time.Duration
	// BatchSize bounds the rows one statement deletes, so that no transaction grows with
	// the backlog; a pass repeats statements until nothing is left.
	// DefaultCleanupBatchSize when not positive.
	BatchSize int
	// DeadLetterRetention is how long a dead letter is kept; DefaultDeadLetterRetention
	// when not positive.
	DeadLetterRetention time.Duration
	// Rest paces a pass over a large backlog: after each full batch the cleaner waits Rest
	// times as long as the batch took before the next, so that a cleaner deleting a million
	// rows (a deleted queue, a backlog that expired at once) takes at most 1/(1+Rest) of a
	// connection's time and leaves PostgreSQL's CPU and WAL to the requests.
	// DefaultCleanupRest (half the time) when not positive.
	Rest float64
	// IdempotencyRetention is the retention new idempotency keys are stored with, which the
	// start log reports; zero takes domain.DefaultIdempotencyRetention. The cleaner deletes
	// each key by the expiry stored with it, not by this setting.
	IdempotencyRetention time.Duration
}

// NewCleaners returns cleaners over the QueueStore and the Cleaning of p, which log to
// p.Logger, count in p.Metrics and time their passes on p.Clock (see Ports for the
// defaults); the other ports are not used.
func NewCleaners(p Ports, s CleanerSettings) *Cleaners {
	p = p.withDefaults()
	return &Cleaners{queues: p.Queues, cleaning: p.Cleaning, clock: p.Clock, log: p.Logger, metrics: p.Metrics,
		settings: s.withDefaults(), emptied: map[domain.ID]bool{}}
}

// withDefaults fills in the settings that are not positive.
func (s CleanerSettings) withDefaults() CleanerSettings {
	if s.Interval <= 0 {
		s.Interval = DefaultCleanupInterval
	}
	if s.BatchSize <= 0 {
		s.BatchSize = DefaultCleanupBatchSize
	}
	if s.DeadLetterRetention <= 0 {
		s.DeadLetterRetention = DefaultDeadLetterRetention
	}
	if s.Rest <= 0 {
		s.Rest = DefaultCleanupRest
	}
	if s.IdempotencyRetention <= 0 {
		s.IdempotencyRetention = domain.DefaultIdempotencyRetention
	}
	return s
}

// Settings returns the settings the cleaners run with, defaults filled in.
func (c *Cleaners) Settings() CleanerSettings { return c.settings }

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
	IdempotencyKeyCleaner = "idempotency-keys"
	DeletedQueueCleaner   = "deleted-queues"
)

// deletedQueueGrace is how long the record of a queue's deletion outlives its data: long
// past any request that read the queue's details before the deletion and may still add a
// message to it, which the stores refuse while the record lasts.
const deletedQueueGrace = time.Hour

// Run makes a pass of each cleaner at once and then every Interval until ctx is done, but
// of the cleaners of all the processes on the same stores only the first to claim a
// cleaner's pass in an interval makes it (ports.Cleaning.StartPass), so that several
// instances clean no more often than one. A failed pass is logged and the next one tries
// again; Run returns only when ctx is done.
func (c *Cleaners) Run(ctx context.Context) {
	c.log.Info("cleaners started", "interval", c.settings.Interval, "batch_size", c.settings.BatchSize, "rest", c.settings.Rest,
		"dead_letter_retention", c.settings.DeadLetterRetention, "idempotency_retention", c.settings.IdempotencyRetention)
	ticker := time.NewTicker(c.settings.Interval)
	defer ticker.Stop()
	for {
		c.run(ctx, true)
		select {
		case <-ctx.Done():
			c.log.Info("cleaners stopped")
			return
		case <-ticker.C:
		}
	}
}

// RunOnce makes one pass of each cleaner now, whatever other processes do, logging and
// counting what it removed, how long it took, and any error, and returns the passes.
func (c *Cleaners) RunOnce(ctx context.Context) []Pass { return c.run(ctx, false) }

// run makes a pass of each cleaner, of those whose pass of this interval it claims when
// claim is set.
func (c *Cleaners) run(ctx context.Context, claim bool) []Pass {
	var passes []Pass
	for _, cleaner := range []struct {
		name string
		pass func(context.Context) (int, error)
	}{
		{ExpiredMessageCleaner, c.overQueues(c.deleteExpired)},
		{DeadLetterCleaner, c.overQueues(c.deleteDeadLetters)},
		{IdempotencyKeyCleaner, c.overQueues(c.deleteIdempotencyKeys)},
		{DeletedQueueCleaner, c.deleteDeletedQueues},
	} {
		if claim {
			claimed, err := c.cleaning.StartPass(ctx, cleaner.name, c.settings.Interval)
			if err != nil && ctx.Err() != nil {
				return passes // stopping
			}
			if err != nil {
				c.log.Error("cleaner pass not started: claiming it failed; the next interval retries", "cleaner", cleaner.name, "err", err)
				continue
			}
			if !claimed {
				c.log.Debug("cleaner pass made by another process in this interval", "cleaner", cleaner.name)
				continue
			}
		}
		start := c.clock.Now()
		removed, err := cleaner.pass(ctx)
		pass := Pass{Cleaner: cleaner.name, Removed: removed, Duration: c.clock.Now().Sub(start)}
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

// overQueues returns a pass that runs clean over every queue, a page of queues at a time. It
// stops at the first error: the next pass starts over.
func (c *Cleaners) overQueues(clean func(context.Context, domain.ID) (int, error)) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		total := 0
		err := c.eachQueue(ctx, func(queueID domain.ID) error {
			removed, err := clean(ctx, queueID)
			total += removed
			if err != nil {
				return fmt.Errorf("queue %s: %w", queueID, err)
			}
			return nil
		})
		return total, err
	}
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
	return c.inBatches(ctx, func() (int, error) {
		n, err := c.cleaning.DeleteExpired(ctx, queueID, c.settings.BatchSize)
		c.metrics.ExpiredMessagesRemoved(n)
		return n, err
	})
}

// deleteDeadLetters deletes the queue's dead letters older than the retention, a batch per
// statement.
func (c *Cleaners) deleteDeadLetters(ctx context.Context, queueID domain.ID) (int, error) {
	return c.inBatches(ctx, func() (int, error) {
		n, err := c.cleaning.DeleteDeadLetters(ctx, queueID, c.settings.DeadLetterRetention, c.settings.BatchSize)
		c.metrics.DeadLettersRemoved(n)
		return n, err
	})
}

// deleteIdempotencyKeys deletes the queue's idempotency keys past their own expiry (the
// retention of the request that stored each), a batch per statement.
func (c *Cleaners) deleteIdempotencyKeys(ctx context.Context, queueID domain.ID) (int, error) {
	return c.inBatches(ctx, func() (int, error) {
		n, err := c.cleaning.DeleteIdempotencyKeys(ctx, queueID, c.settings.BatchSize)
		c.metrics.RowsRemoved(IdempotencyKeyCleaner, n)
		return n, err
	})
}

// deleteDeletedQueues deletes the messages, dead letters and keys of deleted queues, and
// forgets each deletion once its data is gone and its grace is over. It pages through every
// recorded deletion, then deletes a batch of each queue in turn, round after round, so that
// one huge deleted queue does not hold up the others; each queue's batches go on by key
// from the last (ports.QueueDataCursor). A queue whose batch deleted nothing but is not done
// (its rows are held by others for now) waits for the next pass. A queue this process saw
// emptied is not looked at again (nothing can be added to a deleted queue) until its record
// is forgotten.
func (c *Cleaners) deleteDeletedQueues(ctx context.Context) (int, error) {
	type pending struct {
		queue  ports.DeletedQueue
		cursor ports.QueueDataCursor
	}
	var queues []pending
	recorded := map[domain.ID]bool{}
	for after := (domain.ID{}); ; {
		page, err := c.queues.DeletedQueues(ctx, after, domain.MaxListLimit)
		if err != nil {
			return 0, fmt.Errorf("deleted queues: %w", err)
		}
		for _, q := range page {
			recorded[q.ID] = true
			if c.wasEmptied(q.ID) && q.Age < deletedQueueGrace {
				continue
			}
			queues = append(queues, pending{queue: q})
		}
		if len(page) < domain.MaxListLimit {
			break
		}
		after = page[len(page)-1].ID
	}
	c.forgetEmptiedExcept(recorded)
	total := 0
	for len(queues) > 0 {
		unfinished := queues[:0]
		for _, p := range queues {
			started := c.clock.Now()
			n, cursor, err := c.cleaning.DeleteQueueData(ctx, p.queue.ID, p.cursor, c.settings.BatchSize)
			c.metrics.RowsRemoved(DeletedQueueCleaner, n)
			total += n
			switch {
			case err != nil:
				return total, fmt.Errorf("deleted queue %s: %w", p.queue.ID, err)
			case cursor.Done:
				c.markEmptied(p.queue.ID)
				if p.queue.Age < deletedQueueGrace {
					continue
				}
				if err := c.queues.ForgetDeletedQueue(ctx, p.queue.ID); err != nil {
					return total, fmt.Errorf("forget deleted queue %s: %w", p.queue.ID, err)
				}
			case n > 0:
				p.cursor = cursor
				unfinished = append(unfinished, p)
				if err := c.rest(ctx, started); err != nil {
					return total, err
				}
			}
		}
		queues = unfinished
	}
	return total, nil
}

func (c *Cleaners) wasEmptied(id domain.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.emptied[id]
}

func (c *Cleaners) markEmptied(id domain.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emptied[id] = true
}

// forgetEmptiedExcept keeps only the emptied queues still recorded: the next pass after a
// record is forgotten, by this process or another, drops its queue.
func (c *Cleaners) forgetEmptiedExcept(recorded map[domain.ID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.emptied {
		if !recorded[id] {
			delete(c.emptied, id)
		}
	}
}

// inBatches calls deleteBatch until it fails or deletes less than a batch, resting after
// each full batch.
func (c *Cleaners) inBatches(ctx context.Context, deleteBatch func() (int, error)) (int, error) {
	total := 0
	for {
		started := c.clock.Now()
		n, err := deleteBatch()
		total += n
		if err != nil || n < c.settings.BatchSize {
			return total, err
		}
		if err := c.rest(ctx, started); err != nil {
			return total, err
		}
	}
}

// rest waits Rest times as long as the batch that started at started took, or until ctx is
// done, whichever comes first.
func (c *Cleaners) rest(ctx context.Context, started time.Time) error {
	d := time.Duration(float64(c.clock.Now().Sub(started)) * c.settings.Rest)
	if d <= 0 {
		return nil
	}
	rested := make(chan struct{})
	stop := c.clock.AfterFunc(d, func() { close(rested) })
	defer stop()
	select {
	case <-rested:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
