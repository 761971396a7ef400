package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// totals sums the stats of a queue over its priorities.
func (f *fixture) totals(t *testing.T, q domain.Queue) domain.PriorityStats {
	t.Helper()
	s, err := f.service.Stats(context.Background(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sum domain.PriorityStats
	for _, p := range s.Priorities {
		sum.Ready += p.Ready
		sum.Delayed += p.Delayed
		sum.InFlight += p.InFlight
		sum.DeadLettered += p.DeadLettered
	}
	return sum
}

func keyed(q domain.Queue, key string, batch bool, messages ...domain.NewMessage) app.EnqueueParams {
	return app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: batch, IdempotencyKey: key}
}

func TestEnqueueMessages_IdempotencyKey_SameRequestReplays(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	request := keyed(q, "order-42", true, message("a"), domain.NewMessage{Payload: "b", Priority: domain.PriorityHigh, TTL: new(time.Hour)})

	first, err := f.service.EnqueueMessages(ctx, request)
	is.NoErr(err)
	is.True(!first.Replayed) // the first request stores
	again, err := f.service.EnqueueMessages(ctx, request)
	is.NoErr(err)

	is.True(again.Replayed)                  // the same request with the key replays
	is.Equal(again.IDs, first.IDs)           // with the first one's IDs
	is.Equal(f.totals(t, q).Ready, int64(2)) // and stores nothing more
}

func TestEnqueueMessages_IdempotencyKey_DifferentRequestIsReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := func() []domain.NewMessage { return []domain.NewMessage{message("a")} }
	cases := []struct {
		name   string
		second app.EnqueueParams
	}{
		{name: "another payload", second: app.EnqueueParams{Messages: []domain.NewMessage{message("b")}}},
		{name: "another priority", second: app.EnqueueParams{Messages: []domain.NewMessage{{Payload: "a", Priority: domain.PriorityHigh}}}},
		{name: "a ttl given", second: app.EnqueueParams{Messages: []domain.NewMessage{{Payload: "a", Priority: domain.PriorityLow, TTL: new(domain.DefaultMessageTTL)}}}},
		{name: "a delay given", second: app.EnqueueParams{Messages: []domain.NewMessage{{Payload: "a", Priority: domain.PriorityLow, Delay: new(time.Duration(0))}}}},
		{name: "one more message", second: app.EnqueueParams{Messages: append(base(), message("a"))}},
		{name: "the batch route", second: app.EnqueueParams{Messages: base(), Batch: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			f := setup(t, app.Options{})
			q := f.queue(t, domain.SettingsUpdate{})
			_, err := f.service.EnqueueMessages(ctx, keyed(q, "k", false, base()...))
			is.NoErr(err)
			second := tc.second
			second.QueueID, second.IdempotencyKey = q.ID, "k"

			_, err = f.service.EnqueueMessages(ctx, second)

			is.True(errors.Is(err, domain.ErrIdempotencyKeyReused)) // the key of another request is refused
			is.Equal(f.totals(t, q).Ready, int64(1))                // and nothing is stored
		})
	}
}

func TestEnqueueMessages_IdempotencyKey_PastRetention_StoredAnew(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{IdempotencyRetention: time.Hour})
	q := f.queue(t, domain.SettingsUpdate{})
	first, err := f.service.EnqueueMessages(ctx, keyed(q, "k", false, message("a")))
	is.NoErr(err)

	f.clock.Advance(time.Hour - time.Second)
	again, err := f.service.EnqueueMessages(ctx, keyed(q, "k", false, message("a")))
	is.NoErr(err)
	is.True(again.Replayed) // within the service's retention, the key replays
	f.clock.Advance(time.Second)
	anew, err := f.service.EnqueueMessages(ctx, keyed(q, "k", false, message("b")))
	is.NoErr(err)

	is.True(!anew.Replayed)                  // past it, the key is new: even another request stores
	is.True(anew.IDs[0] != first.IDs[0])     // its own message
	is.Equal(f.totals(t, q).Ready, int64(2)) // next to the first
}

func TestEnqueueMessages_IdempotencyKey_PerQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	a, b := f.queue(t, domain.SettingsUpdate{}), f.queue(t, domain.SettingsUpdate{})
	_, err := f.service.EnqueueMessages(ctx, keyed(a, "k", false, message("x")))
	is.NoErr(err)

	other, err := f.service.EnqueueMessages(ctx, keyed(b, "k", false, message("y")))

	is.NoErr(err)                            // the key of one queue is free on another
	is.True(!other.Replayed)                 // which stores
	is.Equal(f.totals(t, b).Ready, int64(1)) // its message
}

func TestEnqueueMessages_IdempotencyKey_RefusedRequestStoresNoKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{DefaultMessageTTL: new(time.Hour)})
	_, err := f.service.EnqueueMessages(ctx, keyed(q, "k", true, message("a"), domain.NewMessage{Payload: "b"}))
	is.Equal(domain.ErrorCode(err), domain.CodeInvalidPriority) // refused for its input
	_, err = f.service.EnqueueMessages(ctx, keyed(q, "k", false, domain.NewMessage{Payload: "c", Priority: domain.PriorityLow, Delay: new(2 * time.Hour)}))
	is.Equal(domain.ErrorCode(err), domain.CodeInvalidDelay) // refused for its delay against the queue's lifetime

	stored, err := f.service.EnqueueMessages(ctx, keyed(q, "k", false, message("d")))

	is.NoErr(err)
	is.True(!stored.Replayed) // the refused requests left the key free
	_, err = f.service.EnqueueMessages(ctx, keyed(q, "k", false, message("e")))
	is.True(errors.Is(err, domain.ErrIdempotencyKeyReused)) // for the request that stored
}

func TestEnqueueMessages_EntryError_NamesTheFirstBadEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name      string
		messages  []domain.NewMessage
		wantIndex int
		wantCode  domain.Code
	}{
		{name: "a priority", messages: []domain.NewMessage{message("a"), message("b"), {Payload: "c"}}, wantIndex: 2, wantCode: domain.CodeInvalidPriority},
		{name: "a ttl", messages: []domain.NewMessage{message("a"), {Payload: "b", Priority: domain.PriorityLow, TTL: new(time.Duration(0))}, {Payload: "c"}}, wantIndex: 1, wantCode: domain.CodeInvalidTTL},
		{name: "a delay out of range", messages: []domain.NewMessage{{Payload: "a", Priority: domain.PriorityLow, Delay: new(-time.Second)}}, wantIndex: 0, wantCode: domain.CodeInvalidDelay},
		{name: "a delay against the queue's lifetime", messages: []domain.NewMessage{message("a"), {Payload: "b", Priority: domain.PriorityLow, Delay: new(time.Hour)}}, wantIndex: 1, wantCode: domain.CodeInvalidDelay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			f := setup(t, app.Options{})
			q := f.queue(t, domain.SettingsUpdate{DefaultMessageTTL: new(time.Hour)})

			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: tc.messages, Batch: true})

			var entry *domain.EntryError
			is.True(errors.As(err, &entry))              // the error names an entry
			is.Equal(entry.Index, tc.wantIndex)          // the first failing one
			is.Equal(domain.ErrorCode(err), tc.wantCode) // with its field's code
			is.Equal(f.totals(t, q).Ready, int64(0))     // and no message of the batch is stored
		})
	}
}

func TestEnqueue_Single_ErrorNamesNoEntry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{DefaultMessageTTL: new(time.Hour)})

	_, err := f.service.Enqueue(context.Background(), q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityLow, Delay: new(time.Hour)})

	is.Equal(domain.ErrorCode(err), domain.CodeInvalidDelay) // a delay not shorter than the queue's default lifetime
	var entry *domain.EntryError
	is.True(!errors.As(err, &entry)) // is the request's error: a single enqueue has no entries
}

func TestEnqueueMessages_BatchSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, size := range []int{0, domain.MaxEnqueueBatch + 1} {
		is := is.New(t)
		f := setup(t, app.Options{})
		q := f.queue(t, domain.SettingsUpdate{})
		messages := make([]domain.NewMessage, size)
		for i := range messages {
			messages[i] = message("x")
		}
		_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: true})
		is.Equal(domain.ErrorCode(err), domain.CodeInvalidBatchSize) // 1 to 1,000 messages
	}
}

func TestEnqueueMessages_Batch_StoresAllInOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	ids := f.enqueue(t, q, message("a"), message("b"), message("c"))

	deliveries, err := f.service.DequeueMessages(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 10})

	is.NoErr(err)
	is.Equal(len(ids), 3) // one ID per message
	for i, d := range deliveries {
		is.Equal(d.MessageID, ids[i]) // delivered in array order
	}
	is.Equal(len(deliveries), 3)
}

// The checks come in the contract's order: the idempotency key, then the values of the
// request, then the queue's existence.
func TestService_ChecksValuesBeforeTheQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t, app.Options{})
	unknown := newTimeOrderedID()
	receipt := domain.Receipt{MessageID: newTimeOrderedID(), ReceiptHandle: newTimeOrderedID()}
	cases := []struct {
		name string
		call func() error
		want domain.Code
	}{
		{name: "idempotency key first", want: domain.CodeInvalidIdempotencyKey, call: func() error {
			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, IdempotencyKey: "has space"})
			return err
		}},
		{name: "idempotency key too long", want: domain.CodeInvalidIdempotencyKey, call: func() error {
			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, Messages: []domain.NewMessage{{}}, IdempotencyKey: strings.Repeat("k", 256)})
			return err
		}},
		{name: "batch size before the queue", want: domain.CodeInvalidBatchSize, call: func() error {
			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, IdempotencyKey: "k"})
			return err
		}},
		{name: "an entry before the queue", want: domain.CodeInvalidPriority, call: func() error {
			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, Messages: []domain.NewMessage{message("a"), {}}})
			return err
		}},
		{name: "a valid delay, then the queue", want: domain.CodeQueueNotFound, call: func() error {
			_, err := f.service.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, Messages: []domain.NewMessage{{Priority: domain.PriorityLow, Delay: new(domain.MaxDelay)}}})
			return err
		}},
		{name: "max messages", want: domain.CodeInvalidMaxMessages, call: func() error {
			_, err := f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: unknown, Max: domain.MaxDequeueBatch + 1})
			return err
		}},
		{name: "wait", want: domain.CodeInvalidWait, call: func() error {
			_, err := f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: unknown, Wait: domain.MaxWait + time.Second})
			return err
		}},
		{name: "acknowledgement batch", want: domain.CodeInvalidBatchSize, call: func() error {
			_, err := f.service.AcknowledgeMessages(ctx, unknown, nil)
			return err
		}},
		{name: "extension", want: domain.CodeInvalidVisibilityTimeout, call: func() error {
			return f.service.Extend(ctx, unknown, receipt, 0)
		}},
		{name: "release delay", want: domain.CodeInvalidDelay, call: func() error {
			return f.service.Release(ctx, unknown, receipt, domain.MaxReleaseDelay+time.Second)
		}},
		{name: "redrive selection", want: domain.CodeInvalidBatchSize, call: func() error {
			_, err := f.service.Redrive(ctx, unknown, domain.Redrive{Limit: domain.MaxRedriveLimit + 1})
			return err
		}},
		{name: "dead-letter page", want: domain.CodeInvalidQuery, call: func() error {
			_, err := f.service.DeadLetters(ctx, unknown, ports.DeadLetterPage{Limit: domain.MaxListLimit + 1})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(domain.ErrorCode(tc.call()), tc.want) // the value's code, not queue_not_found
		})
	}
}

func TestDequeueMessages_RequesterGoneDuringStoreCall_Undelivered(t *testing.T) {
	t.Parallel()
	for _, max := range []int{1, 3} {
		is := is.New(t)
		f := setup(t, app.Options{})
		q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
		ids := f.enqueue(t, q, message("a"), message("b"), message("c"))
		ctx, cancel := context.WithCancel(context.Background())
		f.messages.cancelDuringNextDequeue(cancel)

		deliveries, err := f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: max})

		is.True(errors.Is(err, context.Canceled)) // the requester went away while the store delivered
		is.Equal(len(deliveries), 0)              // so nothing is answered
		again, err := f.service.DequeueMessages(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 3})
		is.NoErr(err)
		is.Equal(len(again), 3) // the deliveries were taken back: the messages are deliverable at once
		for i, d := range again {
			is.Equal(d.MessageID, ids[i])   // in their places
			is.Equal(d.DeliveryAttempts, 1) // and the taken-back attempts did not count
		}
		m := f.scrape(t)
		is.Equal(m.Value("retsu_messages_undelivered_total"), float64(max)) // each taken-back delivery is counted
		is.Equal(m.Value("retsu_messages_delivered_total"), 3.0)            // and not as a delivery
	}
}

func TestDequeueMessages_Waiting_RequesterGoneDuringStoreCall_Undelivered(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	ctx, cancel := context.WithCancel(context.Background())
	answers := make(chan dequeued, 1)
	f.dequeueAsync(ctx, app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.messages.cancelDuringNextDequeue(cancel)

	id := f.enqueue(t, q, message("nobody reads this answer"))[0]

	a := answer(t, answers)
	is.True(errors.Is(a.err, context.Canceled)) // the woken dequeue's requester went away meanwhile
	d := f.dequeue(t, q)
	is.Equal(d.MessageID, id)       // the message is deliverable at once
	is.Equal(d.DeliveryAttempts, 1) // without an attempt charged
}

func TestExtend_Release_LeaseLost(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(10 * time.Second)})
	f.enqueue(t, q, message("x"))
	d := f.dequeue(t, q)

	is.NoErr(f.service.Extend(ctx, q.ID, d.Receipt(), 30*time.Second)) // the current receipt extends its lease
	f.clock.Advance(20 * time.Second)
	is.NoErr(f.service.Release(ctx, q.ID, d.Receipt(), 0)) // past the first end, it still holds it

	is.True(errors.Is(f.service.Extend(ctx, q.ID, d.Receipt(), time.Minute), domain.ErrLeaseLost)) // a released receipt holds no lease
	is.True(errors.Is(f.service.Release(ctx, q.ID, d.Receipt(), 0), domain.ErrLeaseLost))          // to release either
	unknown := domain.Receipt{MessageID: newTimeOrderedID(), ReceiptHandle: newTimeOrderedID()}
	is.True(errors.Is(f.service.Extend(ctx, q.ID, unknown, time.Minute), domain.ErrLeaseLost)) // nor does an unknown one
	m := f.scrape(t)
	is.Equal(m.Value("retsu_lease_extensions_total", "result", "held"), 1.0) // the extensions are counted
	is.Equal(m.Value("retsu_lease_extensions_total", "result", "lost"), 2.0) // by whether they held the lease
	is.Equal(m.Value("retsu_lease_releases_total", "result", "held"), 1.0)   // and so are the releases
	is.Equal(m.Value("retsu_lease_releases_total", "result", "lost"), 1.0)
}

func TestAcknowledgeMessages_ReportsEachInOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, message("a"), message("b"))
	deliveries, err := f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 2})
	is.NoErr(err)

	removed, err := f.service.AcknowledgeMessages(ctx, q.ID, []domain.Receipt{deliveries[1].Receipt(), deliveries[1].Receipt(), deliveries[0].Receipt()})

	is.NoErr(err)
	is.Equal(removed, []bool{true, false, true}) // in request order; a repeat removes nothing
	m := f.scrape(t)
	is.Equal(m.Value("retsu_messages_acknowledged_total"), 2.0)    // the removals are counted
	is.Equal(m.Value("retsu_acknowledgements_ignored_total"), 1.0) // apart from the repeat
}
