package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

func TestDequeueMessages_Waiting_WokenByEnqueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	id := f.enqueue(t, q, message("wake up"))[0]

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)                             // the waiting dequeue answers as soon as a message comes
	is.Equal(a.deliveries[0].MessageID, id)                    // with that message
	is.Equal(f.clock.Now(), start)                             // before its wait ended
	is.Equal(f.scrape(t).Value("retsu_waiting_dequeues"), 0.0) // and it no longer counts as waiting
}

func TestDequeueMessages_Waiting_DeliverableAtOnce_NoWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	id := f.enqueue(t, q, message("ready"))[0]

	deliveries, err := f.service.DequeueMessages(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second})
	is.NoErr(err)
	is.Equal(len(deliveries), 1)          // a deliverable message is answered at once
	is.Equal(deliveries[0].MessageID, id) // without waiting for the clock
}

func TestDequeueMessages_Waiting_BatchAnswersWithWhatCame(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 10, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	ids := f.enqueue(t, q, message("a"), message("b"))

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 2) // a batch answers with the messages that came, without waiting to fill up
	is.Equal([]domain.ID{a.deliveries[0].MessageID, a.deliveries[1].MessageID}, ids)
}

func TestDequeueMessages_SeveralWaiters_OneMessage_ExactlyOneGetsIt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	const waiters = 3
	answers := make(chan dequeued, waiters)
	for i := range waiters {
		f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, i, answers)
		if i == 0 {
			f.awaitFirstWait(t)
		}
	}
	f.messages.awaitAsks(t, waiters-1)
	is.Equal(f.scrape(t).Value("retsu_waiting_dequeues"), float64(waiters)) // every one waits

	first := f.enqueue(t, q, message("first"))[0]
	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)
	is.Equal(a.deliveries[0].MessageID, first) // one waiter gets the message
	noAnswerYet(t, answers)                    // the others keep waiting

	second := f.enqueue(t, q, message("second"))[0]
	b := answer(t, answers)
	is.NoErr(b.err)
	is.Equal(len(b.deliveries), 1)
	is.Equal(b.deliveries[0].MessageID, second) // a next message goes to one of those still waiting
	is.True(b.waiter != a.waiter)               // another one
	noAnswerYet(t, answers)

	f.clock.Advance(10 * time.Second)
	c := answer(t, answers)
	is.NoErr(c.err)
	is.Equal(len(c.deliveries), 0) // the last one's wait ends empty
}

func TestDequeueMessages_Waiting_EndsEmptyAfterWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 5, Wait: 5 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	f.clock.Advance(5*time.Second - time.Millisecond)
	noAnswerYet(t, answers) // still waiting just before the wait ends
	f.clock.Advance(time.Millisecond)

	a := answer(t, answers)
	is.NoErr(a.err)                // a wait that ends empty is no error
	is.Equal(len(a.deliveries), 0) // and delivers nothing
}

func TestService_Close_EndsWaitsAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 2)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 20 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 10, Wait: 20 * time.Second}, 1, answers)
	f.messages.awaitAsks(t, 1)

	f.service.Close()

	for range 2 {
		a := answer(t, answers)
		is.NoErr(a.err)                // each waiting dequeue answers at once, without the clock moving
		is.Equal(len(a.deliveries), 0) // with nothing
	}
	id := f.enqueue(t, q, message("after close"))[0]
	deliveries, err := f.service.DequeueMessages(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 20 * time.Second})
	is.NoErr(err)
	is.Equal(len(deliveries), 1)          // a later dequeue still delivers what is there
	is.Equal(deliveries[0].MessageID, id) // and does not wait
	deliveries, err = f.service.DequeueMessages(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 20 * time.Second})
	is.NoErr(err)
	is.Equal(len(deliveries), 0) // nor when there is nothing
}

func TestDequeueMessages_Waiting_WokenWhenDelayEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	id := f.enqueue(t, q, domain.NewMessage{Payload: "later", Priority: domain.PriorityLow, Delay: new(5 * time.Second)})[0]
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.clock.awaitTimer(t, 5*time.Second)

	f.clock.Advance(5 * time.Second)

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)          // the delay's end wakes the waiting dequeue
	is.Equal(a.deliveries[0].MessageID, id) // which gets the message
}

func TestDequeueMessages_Waiting_WokenWhenDelayOfAMessageEnqueuedMeanwhileEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	id := f.enqueue(t, q, domain.NewMessage{Payload: "later", Priority: domain.PriorityLow, Delay: new(5 * time.Second)})[0]
	f.clock.awaitTimer(t, 5*time.Second)
	noAnswerYet(t, answers) // a delayed message does not answer the wait before its delay ends
	f.clock.Advance(5 * time.Second)

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)          // then it does
	is.Equal(a.deliveries[0].MessageID, id) // with that message
}

func TestDequeueMessages_Waiting_WokenWhenReleaseDelayEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	id := f.enqueue(t, q, message("released"))[0]
	d := f.dequeue(t, q)
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	is.NoErr(f.service.Release(context.Background(), q.ID, d.Receipt(), 5*time.Second))
	f.clock.awaitTimer(t, 5*time.Second)
	noAnswerYet(t, answers)
	f.clock.Advance(5 * time.Second)

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)                // the release delay's end wakes the waiting dequeue
	is.Equal(a.deliveries[0].MessageID, id)       // which gets the released message
	is.Equal(a.deliveries[0].DeliveryAttempts, 2) // as its second attempt
}

func TestDequeueMessages_Waiting_WokenByRelease(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)})
	id := f.enqueue(t, q, message("released"))[0]
	d := f.dequeue(t, q)
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	is.NoErr(f.service.Release(context.Background(), q.ID, d.Receipt(), 0))

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)          // a release wakes the waiting dequeue at once
	is.Equal(a.deliveries[0].MessageID, id) // with the released message
}

func TestDequeueMessages_Waiting_WokenWhenLeaseEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(5 * time.Second)})
	id := f.enqueue(t, q, message("abandoned"))[0]
	f.dequeue(t, q)
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.clock.awaitTimer(t, 5*time.Second)

	f.clock.Advance(5 * time.Second)

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)                // the end of the lease wakes the waiting dequeue
	is.Equal(a.deliveries[0].MessageID, id)       // which gets the unacknowledged message
	is.Equal(a.deliveries[0].DeliveryAttempts, 2) // again
}

func TestDequeueMessages_Waiting_WokenByRedrive(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	id := f.enqueue(t, q, message("poison"))[0]
	f.dequeue(t, q)
	f.clock.Advance(time.Second)
	_, ok, err := f.service.Dequeue(context.Background(), q.ID)
	is.NoErr(err)
	is.True(!ok) // the exhausted message is dead-lettered
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	_, err = f.service.Redrive(context.Background(), q.ID, domain.Redrive{IDs: []domain.ID{id}})
	is.NoErr(err)

	a := answer(t, answers)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1)          // a redrive wakes the waiting dequeue
	is.Equal(a.deliveries[0].MessageID, id) // with the redriven message
}

// Two messages whose delays end together wake one waiting dequeue by the store's timer; the
// one that got all it wanted must pass the turn on, or the second message waits for the end
// of the other dequeue's wait.
func TestDequeueMessages_TwoWaiters_TwoMessagesDeliverableTogether_BothServed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	later := domain.NewMessage{Payload: "later", Priority: domain.PriorityLow, Delay: new(5 * time.Second)}
	ids := f.enqueue(t, q, later, later)
	answers := make(chan dequeued, 2)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 1, answers)
	f.messages.awaitAsks(t, 1)
	f.clock.awaitTimer(t, 5*time.Second)

	f.clock.Advance(5 * time.Second)

	got := map[domain.ID]bool{}
	for range 2 {
		a := answer(t, answers)
		is.NoErr(a.err)
		is.Equal(len(a.deliveries), 1) // each waiting dequeue gets a message when the delays end
		got[a.deliveries[0].MessageID] = true
	}
	is.True(got[ids[0]] && got[ids[1]]) // both messages are delivered
}

func TestDequeueMessages_Waiting_ContextCancelled_EndsTheWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	ctx, cancel := context.WithCancel(context.Background())
	answers := make(chan dequeued, 1)
	f.dequeueAsync(ctx, app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	cancel()

	a := answer(t, answers)
	is.True(errors.Is(a.err, context.Canceled))                // a requester that went away ends its wait
	is.Equal(f.scrape(t).Value("retsu_waiting_dequeues"), 0.0) // which no longer counts
	id := f.enqueue(t, q, message("for the next one"))[0]
	is.Equal(f.dequeue(t, q).MessageID, id) // and takes no message with it
}

// A wait that ends just as a message comes may have been woken for it: the turn it did not
// take goes to the next wait, or the message waits for the end of that one's wait.
func TestDequeueMessages_WaitEndsAsAMessageComes_NextWaiterGetsIt(t *testing.T) {
	t.Parallel()
	for range 20 {
		is := is.New(t)
		f := setup(t, app.Options{})
		q := f.queue(t, domain.SettingsUpdate{})
		answers := make(chan dequeued, 2)
		f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 5 * time.Second}, 0, answers)
		f.awaitFirstWait(t)
		f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Wait: 10 * time.Second}, 1, answers)
		f.messages.awaitAsks(t, 1)

		f.clock.Advance(5 * time.Second) // the first wait ends
		id := f.enqueue(t, q, message("just then"))[0]

		delivered := 0
		for range 2 {
			a := answer(t, answers)
			is.NoErr(a.err)
			if len(a.deliveries) > 0 {
				is.Equal(a.deliveries[0].MessageID, id)
				delivered++
			}
			if delivered == 1 {
				break
			}
		}
		is.Equal(delivered, 1) // one of the two dequeues gets the message, at once
	}
}

// A batch that gets fewer messages than it wants leaves; the wait that stays still hears of
// the queue's next moment, although the timer that woke the batch is spent.
func TestDequeueMessages_BatchLeavesShort_OtherWaiterWokenAtTheNextMoment(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	f.enqueue(t, q, domain.NewMessage{Payload: "in 5 s", Priority: domain.PriorityLow, Delay: new(5 * time.Second)})
	second := f.enqueue(t, q, domain.NewMessage{Payload: "in 8 s", Priority: domain.PriorityLow, Delay: new(8 * time.Second)})[0]
	batch, single := make(chan dequeued, 1), make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 10, Wait: 20 * time.Second}, 0, batch)
	f.awaitFirstWait(t)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 1, Wait: 20 * time.Second}, 1, single)
	f.messages.awaitAsks(t, 1)
	f.clock.awaitTimer(t, 5*time.Second)

	f.clock.Advance(5 * time.Second)
	a := answer(t, batch)
	is.NoErr(a.err)
	is.Equal(len(a.deliveries), 1) // the batch leaves with the one message that came

	f.clock.awaitTimer(t, 3*time.Second)
	f.clock.Advance(3 * time.Second)
	b := answer(t, single)
	is.NoErr(b.err)
	is.Equal(len(b.deliveries), 1)              // the other wait is woken when the second delay ends
	is.Equal(b.deliveries[0].MessageID, second) // and gets that message, long before its wait ends
}

// A dequeue waiting on a queue that is deleted answers queue_not_found at once, as every
// request for the queue does from the deletion on.
func TestDequeueMessages_Waiting_QueueDeleted_QueueNotFoundAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := setup(t, app.Options{})
	q := f.queue(t, domain.SettingsUpdate{})
	answers := make(chan dequeued, 1)
	f.dequeueAsync(context.Background(), app.DequeueParams{QueueID: q.ID, Max: 10, Wait: 20 * time.Second}, 0, answers)
	f.awaitFirstWait(t)

	is.NoErr(f.service.DeleteQueue(context.Background(), q.ID))

	a := answer(t, answers)
	is.True(errors.Is(a.err, domain.ErrQueueNotFound)) // the wait ends with the queue's absence
	is.Equal(f.clock.Now(), start)                     // before its time
}
