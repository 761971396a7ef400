package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// queueCommands are the subcommands of retsu queues. A QUEUE argument is a queue's ID or
// its name.
func queueCommands() map[string]*clientCommand {
	var settings settingsFlags
	var list struct {
		name, after string
	}
	return map[string]*clientCommand{
		"queues create": {
			synopsis: "NAME [flags]", description: "Creates a queue; the settings not given take their defaults.",
			flags: settings.declare, min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.createQueue(args[0], settings.update()) },
		},
		"queues list": {
			synopsis: "[flags]", description: "Lists the queues in name order, every page of them.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&list.name, "name", "", "only the queue with exactly this `name`")
				fs.StringVar(&list.after, "after", "", "start after the queue with this `name`")
			},
			run: func(c *cli, _ []string) error { return c.listQueues(list.name, list.after) },
		},
		"queues get": {
			synopsis: "QUEUE", description: "Shows a queue's settings.", min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.getQueue(args[0]) },
		},
		"queues update": {
			synopsis: "QUEUE [flags]", description: "Changes the settings given; they apply to messages enqueued afterwards.",
			flags: settings.declare, min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.updateQueue(args[0], settings.update()) },
		},
		"queues delete": {
			synopsis: "QUEUE", description: "Deletes a queue, its messages and its dead letters.", min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.deleteQueue(args[0]) },
		},
		"queues purge": {
			synopsis: "QUEUE", description: "Removes every message of a queue (ready, delayed and in flight); dead letters stay.", min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.purgeQueue(args[0]) },
		},
		"queues stats": {
			synopsis: "QUEUE", description: "Counts a queue's messages by priority.", min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.queueStats(args[0]) },
		},
	}
}

// settingsFlags are the flags of a queue's settings.
type settingsFlags struct {
	visibilityTimeout, defaultTTL durationFlag
	maxDeliveryAttempts           optionalInt
}

func (s *settingsFlags) declare(fs *flag.FlagSet) {
	fs.Var(&s.visibilityTimeout, "visibility-timeout", "how long a delivery hides its message, a `duration` from 1s to 6h (default 30s)")
	fs.Var(&s.maxDeliveryAttempts, "max-delivery-attempts", "deliveries before a message becomes a dead letter, a `number` from 1 to 100 (default 5)")
	fs.Var(&s.defaultTTL, "default-ttl", "lifetime of a message enqueued without its own, a `duration` from 1s to 30d (default 7d)")
}

func (s *settingsFlags) update() domain.SettingsUpdate {
	return domain.SettingsUpdate{
		VisibilityTimeout:   s.visibilityTimeout.ptr(),
		MaxDeliveryAttempts: s.maxDeliveryAttempts.ptr(),
		DefaultMessageTTL:   s.defaultTTL.ptr(),
	}
}

// queueJSON is a queue as --json prints it, the API's own spelling.
type queueJSON struct {
	ID                       domain.ID `json:"id"`
	Name                     string    `json:"name"`
	VisibilityTimeoutSeconds int64     `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int       `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64     `json:"default_message_ttl_seconds"`
}

// printQueues prints queues as a table or as JSON lines.
func (c *cli) printQueues(queues ...domain.Queue) {
	if c.json {
		for _, q := range queues {
			c.printJSON(queueJSON{q.ID, q.Name, int64(q.VisibilityTimeout / time.Second), q.MaxDeliveryAttempts, int64(q.DefaultMessageTTL / time.Second)})
		}
		return
	}
	t := c.newTable("ID", "NAME", "VISIBILITY_TIMEOUT", "MAX_DELIVERY_ATTEMPTS", "DEFAULT_TTL")
	for _, q := range queues {
		t.row(q.ID.String(), q.Name, formatDuration(q.VisibilityTimeout), strconv.Itoa(q.MaxDeliveryAttempts), formatDuration(q.DefaultMessageTTL))
	}
	t.flush()
}

func (c *cli) createQueue(name string, settings domain.SettingsUpdate) error {
	q, err := c.client.CreateQueue(c.ctx, domain.NewQueue{Name: name, SettingsUpdate: settings})
	if err != nil {
		return fmt.Errorf("queues create %s: %w", name, err)
	}
	c.printQueues(q)
	return nil
}

// listQueues prints every queue from after on, a page of the largest size at a time.
func (c *cli) listQueues(name, after string) error {
	p := ports.ListQueuesParams{Limit: domain.MaxListLimit}
	if name != "" { // no --name: every queue
		p.Name = &name
	}
	var all []domain.Queue
	for {
		p.After = after
		page, err := c.client.ListQueues(c.ctx, p)
		if err != nil {
			return fmt.Errorf("queues list: %w", err)
		}
		all = append(all, page...)
		if len(page) < domain.MaxListLimit {
			break
		}
		after = page[len(page)-1].Name
	}
	c.printQueues(all...)
	return nil
}

func (c *cli) getQueue(ref string) error {
	id, err := c.queueID(ref)
	if err == nil {
		var q domain.Queue
		if q, err = c.client.Queue(c.ctx, id); err == nil {
			c.printQueues(q)
			return nil
		}
	}
	return fmt.Errorf("queues get %s: %w", ref, err)
}

func (c *cli) updateQueue(ref string, settings domain.SettingsUpdate) error {
	id, err := c.queueID(ref)
	if err == nil {
		var q domain.Queue
		if q, err = c.client.UpdateQueue(c.ctx, id, settings); err == nil {
			c.printQueues(q)
			return nil
		}
	}
	return fmt.Errorf("queues update %s: %w", ref, err)
}

func (c *cli) deleteQueue(ref string) error {
	id, err := c.queueID(ref)
	if err == nil {
		err = c.client.DeleteQueue(c.ctx, id)
	}
	if err != nil {
		return fmt.Errorf("queues delete %s: %w", ref, err)
	}
	if c.json {
		c.printJSON(map[string]any{"deleted": id})
	} else {
		fmt.Fprintf(c.stdout, "deleted queue %s\n", id)
	}
	return nil
}

func (c *cli) purgeQueue(ref string) error {
	id, err := c.queueID(ref)
	n := 0
	if err == nil {
		n, err = c.client.PurgeQueue(c.ctx, id)
	}
	if err != nil {
		return fmt.Errorf("queues purge %s: %w", ref, err)
	}
	c.printCount("deleted", n, "messages")
	return nil
}

// printCount prints a count as {"<member>": n}, or as a sentence.
func (c *cli) printCount(member string, n int, what string) {
	if c.json {
		c.printJSON(map[string]int{member: n})
		return
	}
	fmt.Fprintf(c.stdout, "%s %d %s\n", member, n, what)
}

// priorityStatsJSON counts the messages of one priority, as --json prints them.
type priorityStatsJSON struct {
	Priority              string `json:"priority"`
	Ready                 int64  `json:"ready"`
	Delayed               int64  `json:"delayed"`
	InFlight              int64  `json:"in_flight"`
	DeadLettered          int64  `json:"dead_lettered"`
	OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
}

func (c *cli) queueStats(ref string) error {
	id, err := c.queueID(ref)
	var stats domain.QueueStats
	if err == nil {
		stats, err = c.client.Stats(c.ctx, id)
	}
	if err != nil {
		return fmt.Errorf("queues stats %s: %w", ref, err)
	}
	if c.json {
		answer := struct {
			QueueID    domain.ID           `json:"queue_id"`
			Priorities []priorityStatsJSON `json:"priorities"`
		}{QueueID: id}
		for _, p := range stats.Priorities {
			answer.Priorities = append(answer.Priorities, priorityStatsJSON{p.Priority.String(), p.Ready, p.Delayed, p.InFlight, p.DeadLettered, int64(p.OldestReadyAge / time.Second)})
		}
		c.printJSON(answer)
		return nil
	}
	t := c.newTable("PRIORITY", "READY", "DELAYED", "IN_FLIGHT", "DEAD_LETTERED", "OLDEST_READY_AGE")
	for _, p := range stats.Priorities {
		t.row(p.Priority.String(), itoa(p.Ready), itoa(p.Delayed), itoa(p.InFlight), itoa(p.DeadLettered), (p.OldestReadyAge / time.Second * time.Second).String())
	}
	t.flush()
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
