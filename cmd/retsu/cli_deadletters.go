package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// deadLetterCommands are the subcommands of retsu dead-letters.
func deadLetterCommands() map[string]*clientCommand {
	var after string
	var all bool
	var limit int
	return map[string]*clientCommand{
		"dead-letters list": {
			synopsis: "QUEUE [flags]", description: "Lists a queue's dead letters in ID order, every page of them.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&after, "after", "", "start after the dead letter with this `ID`")
			},
			min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.listDeadLetters(args[0], after) },
		},
		"dead-letters get": {
			synopsis: "QUEUE MESSAGE_ID", description: "Shows one dead letter.", min: 2, max: 2,
			run: func(c *cli, args []string) error { return c.getDeadLetter(args[0], args[1]) },
		},
		"dead-letters delete": {
			synopsis: "QUEUE (MESSAGE_ID | --all)", description: "Deletes one dead letter, or all of the queue's with --all.",
			flags: func(fs *flag.FlagSet) { fs.BoolVar(&all, "all", false, "delete every dead letter of the queue") },
			min:   1, max: 2,
			run: func(c *cli, args []string) error { return c.deleteDeadLetters(args, all) },
		},
		"dead-letters redrive": {
			synopsis: "QUEUE (MESSAGE_ID... | --limit N | --all)",
			description: "Sends dead letters back to their queue, with fresh attempts: those named, the N lowest IDs,\n" +
				"or all of them (in rounds of 10,000). Prints the IDs moved.",
			flags: func(fs *flag.FlagSet) {
				fs.IntVar(&limit, "limit", 0, "redrive the dead letters with the `N` lowest IDs")
				fs.BoolVar(&all, "all", false, "redrive every dead letter of the queue")
			},
			min: 1, max: -1,
			run: func(c *cli, args []string) error { return c.redrive(args[0], args[1:], limit, all) },
		},
	}
}

// deadLetterJSON is a dead letter as --json prints it, the API's own spelling.
type deadLetterJSON struct {
	ID               domain.ID `json:"id"`
	Payload          string    `json:"payload"`
	Priority         string    `json:"priority"`
	DeliveryAttempts int       `json:"delivery_attempts"`
	EnqueuedAt       time.Time `json:"enqueued_at"`
	DeadLetteredAt   time.Time `json:"dead_lettered_at"`
}

// printDeadLetters prints dead letters as a table or as JSON lines.
func (c *cli) printDeadLetters(letters []domain.DeadLetter) {
	if c.json {
		for _, d := range letters {
			c.printJSON(deadLetterJSON{d.MessageID, d.Payload, d.Priority.String(), d.DeliveryAttempts, d.EnqueuedAt.UTC(), d.DeadLetteredAt.UTC()})
		}
		return
	}
	t := c.newTable("ID", "PRIORITY", "ATTEMPTS", "ENQUEUED_AT", "DEAD_LETTERED_AT", "PAYLOAD")
	for _, d := range letters {
		t.row(d.MessageID.String(), d.Priority.String(), strconv.Itoa(d.DeliveryAttempts),
			d.EnqueuedAt.UTC().Format(time.RFC3339), d.DeadLetteredAt.UTC().Format(time.RFC3339), printable(d.Payload))
	}
	t.flush()
}

// listDeadLetters prints every dead letter after the ID after, a page of the largest size at
// a time.
func (c *cli) listDeadLetters(ref, after string) error {
	page := ports.DeadLetterPage{Limit: domain.MaxListLimit}
	if after != "" {
		var err error
		if page.After, err = c.messageID("--after", after); err != nil {
			return err
		}
	}
	queueID, err := c.queueID(ref)
	if err != nil {
		return fmt.Errorf("dead-letters list %s: %w", ref, err)
	}
	var all []domain.DeadLetter
	for {
		letters, err := c.client.DeadLetters(c.ctx, queueID, page)
		if err != nil {
			return fmt.Errorf("dead-letters list %s: %w", ref, err)
		}
		all = append(all, letters...)
		if len(letters) < page.Limit {
			break
		}
		page.After = letters[len(letters)-1].MessageID
	}
	c.printDeadLetters(all)
	return nil
}

func (c *cli) getDeadLetter(ref, message string) error {
	messageID, err := c.messageID("MESSAGE_ID", message)
	if err != nil {
		return err
	}
	queueID, err := c.queueID(ref)
	var letter domain.DeadLetter
	if err == nil {
		letter, err = c.client.DeadLetter(c.ctx, queueID, messageID)
	}
	if err != nil {
		return fmt.Errorf("dead-letters get %s %s: %w", ref, message, err)
	}
	c.printDeadLetters([]domain.DeadLetter{letter})
	return nil
}

// deleteDeadLetters deletes the dead letter of args (QUEUE MESSAGE_ID), or every one with
// all.
func (c *cli) deleteDeadLetters(args []string, all bool) error {
	if all == (len(args) == 2) {
		return c.usageError("give a MESSAGE_ID or --all")
	}
	if all {
		queueID, err := c.queueID(args[0])
		n := 0
		if err == nil {
			n, err = c.client.DeleteDeadLetters(c.ctx, queueID)
		}
		if err != nil {
			return fmt.Errorf("dead-letters delete %s --all: %w", args[0], err)
		}
		c.printCount("deleted", n, "dead letters")
		return nil
	}
	messageID, err := c.messageID("MESSAGE_ID", args[1])
	if err != nil {
		return err
	}
	queueID, err := c.queueID(args[0])
	if err == nil {
		err = c.client.DeleteDeadLetter(c.ctx, queueID, messageID)
	}
	if err != nil {
		return fmt.Errorf("dead-letters delete %s %s: %w", args[0], args[1], err)
	}
	c.printCount("deleted", 1, "dead letter (if there was one)")
	return nil
}

// redrive sends back the dead letters named by ids, or the limit lowest, or all of them, in
// rounds of the largest size.
func (c *cli) redrive(ref string, ids []string, limit int, all bool) error {
	chosen := 0
	for _, given := range []bool{len(ids) > 0, limit > 0, all} {
		if given {
			chosen++
		}
	}
	if chosen != 1 || limit < 0 || len(ids) > domain.MaxRedriveIDs {
		return c.usageError("give up to %d MESSAGE_IDs, --limit N (N > 0) or --all", domain.MaxRedriveIDs)
	}
	selection := domain.Redrive{}
	for _, arg := range ids {
		id, err := c.messageID("MESSAGE_ID", arg)
		if err != nil {
			return err
		}
		selection.IDs = append(selection.IDs, id)
	}
	queueID, err := c.queueID(ref)
	if err != nil {
		return fmt.Errorf("dead-letters redrive %s: %w", ref, err)
	}
	moved, err := c.redriveRounds(queueID, selection, limit, all)
	if err != nil {
		return fmt.Errorf("dead-letters redrive %s after %d: %w", ref, moved, err)
	}
	return nil
}

// redriveRounds redrives selection's IDs, or up to limit dead letters (without a limit when
// all is set) in rounds of up to 10,000, printing the IDs moved, and returns how many it
// moved.
func (c *cli) redriveRounds(queueID domain.ID, selection domain.Redrive, limit int, all bool) (int, error) {
	if selection.IDs != nil {
		ids, err := c.client.Redrive(c.ctx, queueID, selection)
		c.printIDs(ids)
		return len(ids), err
	}
	moved := 0
	for all || moved < limit {
		round := domain.MaxRedriveLimit
		if !all {
			round = min(limit-moved, domain.MaxRedriveLimit)
		}
		ids, err := c.client.Redrive(c.ctx, queueID, domain.Redrive{Limit: round})
		if err != nil {
			return moved, err
		}
		c.printIDs(ids)
		moved += len(ids)
		c.showProgress("redriven %d dead letters", moved)
		if len(ids) < round {
			break
		}
	}
	c.endProgress("redriven %d dead letters", moved)
	return moved, nil
}
