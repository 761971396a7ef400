package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// useCases calls every use case of a queue, each returning its error.
func useCases(s *app.Service, id domain.ID) map[string]func(context.Context) error {
	receipt := domain.Receipt{MessageID: newTimeOrderedID(), ReceiptHandle: newTimeOrderedID()}
	return map[string]func(context.Context) error{
		"Queue": func(ctx context.Context) error { _, err := s.Queue(ctx, id); return err },
		"UpdateQueue": func(ctx context.Context) error {
			_, err := s.UpdateQueue(ctx, id, domain.SettingsUpdate{MaxDeliveryAttempts: new(3)})
			return err
		},
		"DeleteQueue": func(ctx context.Context) error { return s.DeleteQueue(ctx, id) },
		"PurgeQueue":  func(ctx context.Context) error { _, err := s.PurgeQueue(ctx, id); return err },
		"Stats":       func(ctx context.Context) error { _, err := s.Stats(ctx, id); return err },
		"Enqueue": func(ctx context.Context) error {
			_, err := s.Enqueue(ctx, id, message("x"))
			return err
		},
		"EnqueueMessages": func(ctx context.Context) error {
			_, err := s.EnqueueMessages(ctx, app.EnqueueParams{QueueID: id, Messages: []domain.NewMessage{message("x")}, Batch: true, IdempotencyKey: "k"})
			return err
		},
		"Dequeue": func(ctx context.Context) error { _, _, err := s.Dequeue(ctx, id); return err },
		"DequeueMessages, waiting": func(ctx context.Context) error {
			_, err := s.DequeueMessages(ctx, app.DequeueParams{QueueID: id, Max: 10, Wait: 20 * time.Second})
			return err
		},
		"Acknowledge": func(ctx context.Context) error {
			return s.Acknowledge(ctx, id, receipt.MessageID, receipt.ReceiptHandle)
		},
		"AcknowledgeMessages": func(ctx context.Context) error {
			_, err := s.AcknowledgeMessages(ctx, id, []domain.Receipt{receipt})
			return err
		},
		"Extend":  func(ctx context.Context) error { return s.Extend(ctx, id, receipt, time.Minute) },
		"Release": func(ctx context.Context) error { return s.Release(ctx, id, receipt, 0) },
		"DeadLetters": func(ctx context.Context) error {
			_, err := s.DeadLetters(ctx, id, ports.DeadLetterPage{})
			return err
		},
		"DeadLetter":        func(ctx context.Context) error { _, err := s.DeadLetter(ctx, id, receipt.MessageID); return err },
		"DeleteDeadLetter":  func(ctx context.Context) error { return s.DeleteDeadLetter(ctx, id, receipt.MessageID) },
		"DeleteDeadLetters": func(ctx context.Context) error { _, err := s.DeleteDeadLetters(ctx, id); return err },
		"Redrive": func(ctx context.Context) error {
			_, err := s.Redrive(ctx, id, domain.Redrive{Limit: 10})
			return err
		},
	}
}

func TestDeleteQueue_ThenEveryUseCaseAnswersQueueNotFound(t *testing.T) {
	t.Parallel()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, message("left behind"))
	if err := f.service.DeleteQueue(context.Background(), q.ID); err != nil {
		t.Fatal(err)
	}
	for name, call := range useCases(f.service, q.ID) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.True(errors.Is(call(context.Background()), domain.ErrQueueNotFound)) // a deleted queue is not found, at once
		})
	}
}

func TestUseCases_UnknownQueue_AnswerQueueNotFound(t *testing.T) {
	t.Parallel()
	f := setup(t, app.Options{})
	for name, call := range useCases(f.service, newTimeOrderedID()) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.True(errors.Is(call(context.Background()), domain.ErrQueueNotFound)) // a queue that never existed is not found
		})
	}
}

func TestDeleteQueue_NameFreeAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	old, err := f.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"})
	is.NoErr(err)
	f.enqueue(t, old, message("old"))
	is.NoErr(f.service.DeleteQueue(ctx, old.ID))

	again, err := f.service.CreateQueue(ctx, domain.NewQueue{Name: "orders"})

	is.NoErr(err)               // the name is free at once
	is.True(again.ID != old.ID) // for a new queue
	_, ok, err := f.service.Dequeue(ctx, again.ID)
	is.NoErr(err)
	is.True(!ok) // which holds none of the old queue's messages
	listed, err := f.service.ListQueues(ctx, ports.ListQueuesParams{Name: new("orders")})
	is.NoErr(err)
	is.Equal(listed, []domain.Queue{again}) // and is the only queue of that name
}

// Another instance may still hold the queue's details in its cache for a moment: its
// requests reach the stores, which neither store nor deliver a message of a deleted queue.
func TestDeleteQueue_InstanceWithStaleCache_StoresAndDeliversNothing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, message("left behind"))
	other := f.newService(app.Options{}, memory.NewQueueCache(memory.QueueCacheOptions{Clock: f.clock.ManualClock}))
	defer other.Close()
	_, err := other.Queue(ctx, q.ID) // the other instance caches the queue's details
	is.NoErr(err)

	is.NoErr(f.service.DeleteQueue(ctx, q.ID))

	_, ok, err := other.Dequeue(ctx, q.ID)
	is.True(errors.Is(err, domain.ErrQueueNotFound)) // the store says the queue is gone, whatever the cache says
	is.True(!ok)                                     // and delivers no message of it
	_, err = other.Enqueue(ctx, q.ID, message("too late"))
	is.True(errors.Is(err, domain.ErrQueueNotFound)) // and none is stored
}

func TestDeleteQueue_Twice_SecondIsNotFound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	is.NoErr(f.service.DeleteQueue(ctx, q.ID))
	is.True(errors.Is(f.service.DeleteQueue(ctx, q.ID), domain.ErrQueueNotFound)) // a deleted queue cannot be deleted again
}

func TestPurgeQueue_RemovesEveryMessage_KeepsDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	f.enqueue(t, q, message("poison"))
	f.dequeue(t, q)
	f.clock.Advance(time.Second)
	_, _, err := f.service.Dequeue(ctx, q.ID) // dead-letters it
	is.NoErr(err)
	f.enqueue(t, q, message("ready"), domain.NewMessage{Payload: "delayed", Priority: domain.PriorityHigh, Delay: new(time.Minute)}, message("in flight"))
	inFlight := f.dequeue(t, q)

	purged, err := f.service.PurgeQueue(ctx, q.ID)

	is.NoErr(err)
	is.Equal(purged, 3)                                             // ready, delayed and in flight
	is.Equal(f.totals(t, q), domain.PriorityStats{DeadLettered: 1}) // only the dead letter is left
	removed, err := f.service.AcknowledgeMessages(ctx, q.ID, []domain.Receipt{inFlight.Receipt()})
	is.NoErr(err)
	is.Equal(removed, []bool{false}) // a purged delivery's acknowledgement removes nothing
}

func TestStats_CountsDelayedApartFromReady(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, message("ready"), domain.NewMessage{Payload: "delayed", Priority: domain.PriorityLow, Delay: new(time.Minute)})

	is.Equal(f.totals(t, q), domain.PriorityStats{Ready: 1, Delayed: 1}) // a delayed message is not ready
	f.clock.Advance(time.Minute)
	is.Equal(f.totals(t, q), domain.PriorityStats{Ready: 2}) // until its delay ends
}

// A redrive takes the queue's settings from the QueueStore, so that an update made through
// another instance applies though this one's cache still holds the old settings.
func TestRedrive_TakesTheQueuesCurrentSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	id := f.enqueue(t, q, message("poison"))[0]
	f.dequeue(t, q)
	f.clock.Advance(time.Second)
	_, _, err := f.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	other := f.newService(app.Options{}, memory.NewQueueCache(memory.QueueCacheOptions{Clock: f.clock.ManualClock}))
	defer other.Close()
	_, err = other.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute), MaxDeliveryAttempts: new(2)})
	is.NoErr(err)

	moved, err := f.service.Redrive(ctx, q.ID, domain.Redrive{Limit: 10})

	is.NoErr(err)
	is.Equal(moved, []domain.ID{id}) // the dead letter is sent back
	d := f.dequeue(t, q)
	f.clock.Advance(time.Second)
	_, ok, err := f.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	is.True(!ok) // its delivery lasts the updated visibility timeout, not the old one
	f.clock.Advance(time.Minute)
	again := f.dequeue(t, q)
	is.Equal(again.MessageID, d.MessageID) // and it may be delivered twice, the updated limit
	is.Equal(again.DeliveryAttempts, 2)
	is.Equal(f.scrape(t).Value("retsu_messages_redriven_total"), 1.0) // the redrive is counted
}

func TestDeadLetters_ListGetDelete(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	ids := f.enqueue(t, q, message("a"), message("b"))
	_, err := f.service.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 2})
	is.NoErr(err)
	f.clock.Advance(time.Second)
	_, _, err = f.service.Dequeue(ctx, q.ID)
	is.NoErr(err)

	letters, err := f.service.DeadLetters(ctx, q.ID, ports.DeadLetterPage{})
	is.NoErr(err)
	is.Equal(len(letters), 2) // a zero limit takes the default page size
	letter, err := f.service.DeadLetter(ctx, q.ID, ids[0])
	is.NoErr(err)
	is.Equal(letter.Payload, "a") // one dead letter by its ID
	is.NoErr(f.service.DeleteDeadLetter(ctx, q.ID, ids[0]))
	_, err = f.service.DeadLetter(ctx, q.ID, ids[0])
	is.True(errors.Is(err, domain.ErrDeadLetterNotFound))   // is gone once deleted
	is.NoErr(f.service.DeleteDeadLetter(ctx, q.ID, ids[0])) // and deleting it again is no error
	n, err := f.service.DeleteDeadLetters(ctx, q.ID)
	is.NoErr(err)
	is.Equal(n, 1) // the rest go together
}
