package apptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// TestRetsu runs the app.Retsu contract against what newRetsu returns, called once per test;
// it may return the same Retsu every time, since each test works in queues of its own.
// Whatever it starts, it stops with t.Cleanup.
func TestRetsu(t *testing.T, newRetsu func(t *testing.T) app.Retsu) {
	for _, tc := range slices.Concat(queueTests, enqueueTests, dequeueTests, leaseTests, deadLetterTests, errorTests) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, &retsuTest{t: t, is: is.New(t), Retsu: newRetsu(t)})
		})
	}
}

// testCase is one test of the suite.
type testCase struct {
	name string
	run  func(t *testing.T, r *retsuTest)
}

// retsuTest is one test's Retsu, with the helpers the tests share.
type retsuTest struct {
	app.Retsu
	t  *testing.T
	is *is.I
}

var ctx = context.Background()

// margin is added to a real wait so that a deadline has surely passed.
const margin = 300 * time.Millisecond

// shortSettings suit tests that let leases end: a one-second visibility timeout, five
// attempts and a one-minute lifetime.
var shortSettings = domain.SettingsUpdate{
	VisibilityTimeout:   new(time.Second),
	MaxDeliveryAttempts: new(5),
	DefaultMessageTTL:   new(time.Minute),
}

// uniqueName returns a queue name that no other test uses.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// newID returns an ID that names nothing.
func newID() domain.ID {
	var id domain.ID
	_, _ = rand.Read(id[:])
	return id
}

// queue creates a queue with a unique name and the supplied settings.
func (r *retsuTest) queue(settings domain.SettingsUpdate) domain.Queue {
	r.t.Helper()
	q, err := r.CreateQueue(ctx, domain.NewQueue{Name: uniqueName("q"), SettingsUpdate: settings})
	if err != nil {
		r.t.Fatalf("create queue: %v", err)
	}
	return q
}

// message returns a message to enqueue.
func message(p domain.Priority, payload string) domain.NewMessage {
	return domain.NewMessage{Payload: payload, Priority: p}
}

// enqueue stores messages in one batch request and returns their IDs.
func (r *retsuTest) enqueue(q domain.Queue, messages ...domain.NewMessage) []domain.ID {
	r.t.Helper()
	enqueued, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: true})
	if err != nil {
		r.t.Fatalf("enqueue: %v", err)
	}
	return enqueued.IDs
}

// dequeue takes up to max messages without waiting.
func (r *retsuTest) dequeue(q domain.Queue, max int) []domain.Delivery {
	r.t.Helper()
	deliveries, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: max})
	if err != nil {
		r.t.Fatalf("dequeue: %v", err)
	}
	return deliveries
}

// dequeueOne takes the next message, failing the test when there is none.
func (r *retsuTest) dequeueOne(q domain.Queue) domain.Delivery {
	r.t.Helper()
	deliveries := r.dequeue(q, 1)
	if len(deliveries) != 1 {
		r.t.Fatal("no message to dequeue")
	}
	return deliveries[0]
}

// acknowledge completes one delivery and reports whether it removed the message.
func (r *retsuTest) acknowledge(q domain.Queue, d domain.Delivery) bool {
	r.t.Helper()
	removed, err := r.AcknowledgeMessages(ctx, q.ID, []domain.Receipt{d.Receipt()})
	if err != nil {
		r.t.Fatalf("acknowledge: %v", err)
	}
	return removed[0]
}

// deadLetter makes a dead letter in q, whose MaxDeliveryAttempts must be 1: it delivers the
// message once, releases it, and lets the next dequeue move it.
func (r *retsuTest) deadLetter(q domain.Queue, n domain.NewMessage) domain.ID {
	r.t.Helper()
	id := r.enqueue(q, n)[0]
	d := r.dequeueOne(q)
	if d.MessageID != id {
		r.t.Fatalf("dequeued %s, not the message %s just enqueued", d.MessageID, id)
	}
	if err := r.Release(ctx, q.ID, d.Receipt(), 0); err != nil {
		r.t.Fatalf("release: %v", err)
	}
	if got := r.dequeue(q, 1); len(got) != 0 {
		r.t.Fatalf("the exhausted message was delivered again")
	}
	return id
}

// stats returns the queue's counts.
func (r *retsuTest) stats(q domain.Queue) domain.QueueStats {
	r.t.Helper()
	stats, err := r.Stats(ctx, q.ID)
	if err != nil {
		r.t.Fatalf("stats: %v", err)
	}
	return stats
}

// counts sums a queue's counts over the priorities.
type counts struct{ ready, delayed, inFlight, deadLettered int64 }

func (r *retsuTest) counts(q domain.Queue) counts {
	r.t.Helper()
	var c counts
	for _, p := range r.stats(q).Priorities {
		c.ready += p.Ready
		c.delayed += p.Delayed
		c.inFlight += p.InFlight
		c.deadLettered += p.DeadLettered
	}
	return c
}

// codeOf returns the code of err, "" for nil.
func codeOf(err error) domain.Code {
	if err == nil {
		return ""
	}
	return domain.ErrorCode(err)
}

// entryIndex returns the index of the *domain.EntryError in err's chain, -1 without one.
func entryIndex(err error) int {
	var entry *domain.EntryError
	if !errors.As(err, &entry) {
		return -1
	}
	return entry.Index
}

// ids returns the message IDs of deliveries.
func ids(deliveries []domain.Delivery) []domain.ID {
	out := make([]domain.ID, len(deliveries))
	for i, d := range deliveries {
		out[i] = d.MessageID
	}
	return out
}

// payloads returns the payloads of deliveries.
func payloads(deliveries []domain.Delivery) []string {
	out := make([]string, len(deliveries))
	for i, d := range deliveries {
		out[i] = d.Payload
	}
	return out
}
