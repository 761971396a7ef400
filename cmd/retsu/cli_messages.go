package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// messageCommands are the commands of a message's life: send, receive, ack, extend and
// release.
func messageCommands() map[string]*clientCommand {
	var send sendOptions
	var receive receiveOptions
	var extendTimeout, releaseDelay durationFlag
	return map[string]*clientCommand{
		"send": {
			synopsis: "QUEUE [PAYLOAD] [flags]",
			description: "Enqueues PAYLOAD, or stdin as one message, or each line of stdin as a message with --lines\n" +
				"(in batches, each with an idempotency key of its own so that a retry stores nothing twice).\n" +
				"Prints the IDs of the messages.",
			flags: send.declare, min: 1, max: 2,
			run: func(c *cli, args []string) error { return c.send(args, send) },
		},
		"receive": {
			synopsis: "QUEUE [flags]",
			description: "Dequeues up to --max messages, waiting up to --wait for them, and prints them with their receipt handles,\n" +
				"batch after batch. With --ack it acknowledges each batch first and prints only the messages acknowledged;\n" +
				"exits with status 1 when some were not (their leases had ended), or when a call failed.",
			flags: receive.declare, min: 1, max: 1,
			run: func(c *cli, args []string) error { return c.receive(args[0], receive) },
		},
		"ack": {
			synopsis: "QUEUE (MESSAGE_ID RECEIPT_HANDLE | -)",
			description: "Acknowledges a delivery, or with - every delivery that stdin lists as the JSON lines of\n" +
				"\"retsu receive --json\". Exits with status 1 when one no longer held its lease.",
			min: 2, max: 3,
			run: func(c *cli, args []string) error { return c.acknowledge(args[0], args[1:]) },
		},
		"extend": {
			synopsis:    "QUEUE MESSAGE_ID RECEIPT_HANDLE [flags]",
			description: "Makes the lease of a delivery end --timeout from now.",
			flags: func(fs *flag.FlagSet) {
				extendTimeout = durationFlag{d: 30 * time.Second}
				fs.Var(&extendTimeout, "timeout", "the new visibility timeout, a `duration` from 1s to 12h (default 30s)")
			},
			min: 3, max: 3,
			run: func(c *cli, args []string) error {
				return c.lease("extend", "extended", args, func(q domain.ID, r domain.Receipt) error {
					return c.client.Extend(c.ctx, q, r, extendTimeout.d)
				})
			},
		},
		"release": {
			synopsis:    "QUEUE MESSAGE_ID RECEIPT_HANDLE [flags]",
			description: "Ends the lease of a delivery: the message is delivered again after --delay, in its place.",
			flags: func(fs *flag.FlagSet) {
				fs.Var(&releaseDelay, "delay", "how long the message waits, a `duration` up to 12h (default 0)")
			},
			min: 3, max: 3,
			run: func(c *cli, args []string) error {
				return c.lease("release", "released", args, func(q domain.ID, r domain.Receipt) error {
					return c.client.Release(c.ctx, q, r, releaseDelay.d)
				})
			},
		},
	}
}

// sendOptions are the flags of send.
type sendOptions struct {
	priority   string
	ttl, delay durationFlag
	lines      bool
	batchSize  int
	key        string
}

func (o *sendOptions) declare(fs *flag.FlagSet) {
	fs.StringVar(&o.priority, "priority", "MEDIUM", "HIGH, MEDIUM or LOW")
	fs.Var(&o.ttl, "ttl", "the messages' lifetime, a `duration` from 1s to 30d (default: the queue's)")
	fs.Var(&o.delay, "delay", "how long the messages wait before their first delivery, a `duration` (default 0)")
	fs.BoolVar(&o.lines, "lines", false, "send each line of stdin as a message")
	fs.IntVar(&o.batchSize, "batch-size", domain.MaxEnqueueBatch, "messages per request with --lines, 1 to 1000")
	fs.StringVar(&o.key, "idempotency-key", "", "the request's Idempotency-Key; with --lines, batch i gets `KEY`-i, so that a rerun stores nothing twice")
}

// maxBatchBytes keeps a batch's body under the API's limit of 1 MiB, with room to spare.
const maxBatchBytes = 1 << 20 * 15 / 16

// send enqueues the payload of the arguments or of stdin.
func (c *cli) send(args []string, o sendOptions) error {
	priority, err := domain.ParsePriority(o.priority)
	if err != nil || o.batchSize < 1 || o.batchSize > domain.MaxEnqueueBatch {
		return c.usageError("--priority must be HIGH, MEDIUM or LOW, and --batch-size from 1 to %d", domain.MaxEnqueueBatch)
	}
	if o.lines && len(args) == 2 {
		return c.usageError("--lines reads stdin: give no PAYLOAD")
	}
	queueID, err := c.queueID(args[0])
	if err != nil {
		return fmt.Errorf("send to %s: %w", args[0], err)
	}
	s := &sender{cli: c, queueID: queueID, options: o, template: domain.NewMessage{Priority: priority, TTL: o.ttl.ptr(), Delay: o.delay.ptr()}}
	switch {
	case len(args) == 2:
		err = s.sendOne(args[1])
	case o.lines:
		err = s.sendLines(c.stdin)
	default:
		var payload []byte
		if payload, err = io.ReadAll(c.stdin); err == nil {
			err = s.sendOne(string(payload))
		}
	}
	if err != nil {
		return fmt.Errorf("send to %s: %w", args[0], err)
	}
	return nil
}

// sender sends the messages of one send command.
type sender struct {
	*cli
	queueID  domain.ID
	options  sendOptions
	template domain.NewMessage
	batch    []domain.NewMessage
	bytes    int
	requests int
	sent     int
}

// sendOne enqueues one message by the single route.
func (s *sender) sendOne(payload string) error {
	m := s.template
	m.Payload = payload
	enqueued, err := s.client.EnqueueMessages(s.ctx, app.EnqueueParams{QueueID: s.queueID, Messages: []domain.NewMessage{m}, IdempotencyKey: s.options.key})
	if err != nil {
		return err
	}
	s.printIDs(enqueued.IDs)
	return nil
}

// printIDs prints message IDs, one per line, or as {"id": …} lines.
func (c *cli) printIDs(ids []domain.ID) {
	for _, id := range ids {
		if c.json {
			c.printJSON(map[string]domain.ID{"id": id})
		} else {
			fmt.Fprintln(c.stdout, id)
		}
	}
}

// sendLines enqueues each line of r, in batches of the batch size that stay under the
// API's body limit.
func (s *sender) sendLines(r io.Reader) error {
	lines := bufio.NewReader(r)
	for {
		line, err := lines.ReadString('\n')
		if len(line) > 0 {
			if err := s.add(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	s.endProgress("sent %d messages in %d requests", s.sent, s.requests)
	return nil
}

// add adds a line's message to the batch, sending the batch first when it is full.
func (s *sender) add(payload string) error {
	encoded, _ := json.Marshal(payload)
	size := len(encoded) + len(`{"payload":,"priority":"MEDIUM","ttl_seconds":2592000,"delay_seconds":2591999},`)
	if len(s.batch) == s.options.batchSize || len(s.batch) > 0 && s.bytes+size > maxBatchBytes {
		if err := s.flush(); err != nil {
			return err
		}
	}
	m := s.template
	m.Payload = payload
	s.batch, s.bytes = append(s.batch, m), s.bytes+size
	return nil
}

// flush sends the batch, if any.
func (s *sender) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	key := s.options.key
	if key != "" {
		key += "-" + strconv.Itoa(s.requests)
	}
	enqueued, err := s.client.EnqueueMessages(s.ctx, app.EnqueueParams{QueueID: s.queueID, Messages: s.batch, Batch: true, IdempotencyKey: key})
	if err != nil {
		var entry *domain.EntryError
		if errors.As(err, &entry) {
			return fmt.Errorf("line %d: %w", s.sent+entry.Index+1, entry.Err)
		}
		return fmt.Errorf("after %d messages: %w", s.sent, err)
	}
	s.printIDs(enqueued.IDs)
	s.requests++
	s.sent += len(s.batch)
	s.batch, s.bytes = s.batch[:0], 0
	s.showProgress("sent %d messages", s.sent)
	return nil
}

// receiveOptions are the flags of receive.
type receiveOptions struct {
	max  int
	wait durationFlag
	ack  bool
}

func (o *receiveOptions) declare(fs *flag.FlagSet) {
	fs.IntVar(&o.max, "max", 1, "the most messages to receive, in dequeues of up to 100")
	fs.Var(&o.wait, "wait", "how long each dequeue waits for a message, a `duration` up to 20s (default 0)")
	fs.BoolVar(&o.ack, "ack", false, "acknowledge each batch, and print only the messages acknowledged")
}

// messageJSON is a delivery as --json prints it: the API's message, and with --ack whether
// the acknowledgement removed it.
type messageJSON struct {
	ID               domain.ID `json:"id"`
	Payload          string    `json:"payload"`
	Priority         string    `json:"priority"`
	ReceiptHandle    domain.ID `json:"receipt_handle"`
	DeliveryAttempts int       `json:"delivery_attempts"`
	Acknowledged     *bool     `json:"acknowledged,omitempty"`
}

// receive dequeues up to o.max messages, until a dequeue brings none, and prints each batch
// as it comes. With o.ack it acknowledges each batch before printing it, and prints only the
// messages that the acknowledgement removed: a printed message is one that was consumed, and
// the others (whose lease had ended, or whose acknowledgement failed) come back to the queue.
func (c *cli) receive(ref string, o receiveOptions) error {
	if o.max < 1 {
		return c.usageError("--max must be at least 1")
	}
	queueID, err := c.queueID(ref)
	if err != nil {
		return fmt.Errorf("receive from %s: %w", ref, err)
	}
	out := c.newMessagePrinter()
	taken, left := 0, 0
	for taken < o.max {
		deliveries, err := c.client.DequeueMessages(c.ctx, app.DequeueParams{QueueID: queueID, Max: min(o.max-taken, domain.MaxDequeueBatch), Wait: o.wait.d})
		if err != nil {
			return fmt.Errorf("receive from %s after %d messages: %w", ref, taken, err)
		}
		if len(deliveries) == 0 {
			break
		}
		taken += len(deliveries)
		batch, err := c.settle(queueID, deliveries, o.ack)
		if err != nil {
			return fmt.Errorf("receive from %s: acknowledge %d messages (not printed; they come back when their leases end): %w", ref, len(deliveries), err)
		}
		if o.ack {
			acknowledged := slices.DeleteFunc(batch, func(m messageJSON) bool { return !*m.Acknowledged })
			left += len(deliveries) - len(acknowledged)
			batch = acknowledged
		}
		out.print(batch)
	}
	if left > 0 {
		return fmt.Errorf("receive from %s: %d %s not acknowledged, as %s lease had ended, and %s not printed: %s delivered again",
			ref, left, plural(left, "message was", "messages were"), plural(left, "its", "their"), plural(left, "was", "were"), plural(left, "it will be", "they will be"))
	}
	return nil
}

// plural returns one when n is 1, many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// settle returns the deliveries as printed, acknowledging them first when ack is set.
func (c *cli) settle(queueID domain.ID, deliveries []domain.Delivery, ack bool) ([]messageJSON, error) {
	out := make([]messageJSON, len(deliveries))
	receipts := make([]domain.Receipt, len(deliveries))
	for i, d := range deliveries {
		out[i] = messageJSON{d.MessageID, d.Payload, d.Priority.String(), d.ReceiptHandle, d.DeliveryAttempts, nil}
		receipts[i] = d.Receipt()
	}
	if !ack {
		return out, nil
	}
	removed, err := c.client.AcknowledgeMessages(c.ctx, queueID, receipts)
	if err != nil {
		return out, err
	}
	for i := range out {
		out[i].Acknowledged = &removed[i]
	}
	return out, nil
}

// messagePrinter prints deliveries batch after batch: JSON lines, or a table whose header
// comes before the first row and whose rows are flushed with each batch.
type messagePrinter struct {
	c     *cli
	table *table
}

func (c *cli) newMessagePrinter() *messagePrinter { return &messagePrinter{c: c} }

// print prints messages and flushes them to stdout.
func (p *messagePrinter) print(messages []messageJSON) {
	if p.c.json {
		for _, m := range messages {
			p.c.printJSON(m)
		}
		return
	}
	if len(messages) == 0 {
		return
	}
	if p.table == nil {
		p.table = p.c.newTable("ID", "PRIORITY", "ATTEMPTS", "RECEIPT_HANDLE", "PAYLOAD")
	}
	for _, m := range messages {
		p.table.row(m.ID.String(), m.Priority, strconv.Itoa(m.DeliveryAttempts), m.ReceiptHandle.String(), printable(m.Payload))
	}
	p.table.flush()
}

// printable returns s as it is when it holds no control character nor tab, quoted otherwise.
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

// errNotAcknowledged fails an ack whose receipt no longer held the lease.
var errNotAcknowledged = errors.New("not acknowledged: the receipt handle no longer holds the lease (stale, late, or the message is gone)")

// acknowledge acknowledges the delivery of args, or those listed on stdin with "-".
func (c *cli) acknowledge(ref string, args []string) error {
	receipts, err := c.receiptsOf(args)
	if err != nil {
		return err
	}
	queueID, err := c.queueID(ref)
	if err != nil {
		return fmt.Errorf("ack in %s: %w", ref, err)
	}
	lost := 0
	t := c.newTable("ID", "ACKNOWLEDGED")
	for start := 0; start < len(receipts); start += domain.MaxAcknowledgeBatch {
		batch := receipts[start:min(start+domain.MaxAcknowledgeBatch, len(receipts))]
		removed, err := c.client.AcknowledgeMessages(c.ctx, queueID, batch)
		if err != nil {
			return fmt.Errorf("ack in %s: %w", ref, err)
		}
		for i, r := range batch {
			if !removed[i] {
				lost++
			}
			if c.json {
				c.printJSON(map[string]any{"id": r.MessageID, "acknowledged": removed[i]})
			} else {
				t.row(r.MessageID.String(), strconv.FormatBool(removed[i]))
			}
		}
	}
	if !c.json {
		t.flush()
	}
	if lost > 0 {
		return fmt.Errorf("ack in %s: %d of %d %w", ref, lost, len(receipts), errNotAcknowledged)
	}
	return nil
}

// receiptsOf reads the receipts of ack's arguments: an ID and a handle, or "-" for the
// JSON lines of stdin.
func (c *cli) receiptsOf(args []string) ([]domain.Receipt, error) {
	if len(args) == 1 {
		if args[0] != "-" {
			return nil, c.usageError("give MESSAGE_ID RECEIPT_HANDLE, or - to read them from stdin")
		}
		return c.receiptsFromStdin()
	}
	messageID, err := c.messageID("MESSAGE_ID", args[0])
	if err != nil {
		return nil, err
	}
	handle, err := c.messageID("RECEIPT_HANDLE", args[1])
	if err != nil {
		return nil, err
	}
	return []domain.Receipt{{MessageID: messageID, ReceiptHandle: handle}}, nil
}

// receiptsFromStdin reads JSON objects with an id and a receipt_handle, such as the lines
// of "retsu receive --json".
func (c *cli) receiptsFromStdin() ([]domain.Receipt, error) {
	var receipts []domain.Receipt
	dec := json.NewDecoder(c.stdin)
	for line := 1; ; line++ {
		var entry struct {
			ID            string `json:"id"`
			ReceiptHandle string `json:"receipt_handle"`
		}
		if err := dec.Decode(&entry); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, c.usageError("stdin, object %d: %v", line, err)
		}
		messageID, idErr := domain.ParseID(entry.ID)
		handle, handleErr := domain.ParseID(entry.ReceiptHandle)
		if idErr != nil || handleErr != nil {
			return nil, c.usageError("stdin, object %d: want a UUID in id and in receipt_handle", line)
		}
		receipts = append(receipts, domain.Receipt{MessageID: messageID, ReceiptHandle: handle})
	}
	if len(receipts) == 0 {
		return nil, c.usageError("stdin lists no delivery")
	}
	return receipts, nil
}

// lease carries out call, an extension or a release named operation, on the delivery of
// args (QUEUE MESSAGE_ID RECEIPT_HANDLE), and reports it as done.
func (c *cli) lease(operation, done string, args []string, call func(domain.ID, domain.Receipt) error) error {
	receipts, err := c.receiptsOf(args[1:])
	if err != nil {
		return err
	}
	queueID, err := c.queueID(args[0])
	if err == nil {
		err = call(queueID, receipts[0])
	}
	if err != nil {
		return fmt.Errorf("%s %s in %s: %w", operation, args[1], args[0], err)
	}
	if c.json {
		c.printJSON(map[string]any{"id": receipts[0].MessageID, done: true})
	} else {
		fmt.Fprintf(c.stdout, "%s %s\n", done, receipts[0].MessageID)
	}
	return nil
}
