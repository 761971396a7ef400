package apptest

import (
	"testing"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// enqueueTests cover storing messages: single and batch requests, delays, and idempotency
// keys.
var enqueueTests = []testCase{
	{"EnqueueMessages_Single_StoresOneMessage", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		enqueued, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{message(domain.PriorityHigh, "\u0000 and more")}})
		r.is.NoErr(err)
		r.is.Equal(len(enqueued.IDs), 1) // one ID
		r.is.True(!enqueued.Replayed)    // for a new request
		d := r.dequeueOne(q)
		r.is.Equal(d.MessageID, enqueued.IDs[0])                                                // the message stored
		r.is.Equal([]any{d.Payload, d.Priority}, []any{"\u0000 and more", domain.PriorityHigh}) // with its payload and priority, as sent
		r.is.Equal(d.DeliveryAttempts, 1)                                                       // delivered for the first time
	}},

	{"EnqueueMessages_Batch_IDsInRequestOrder", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		enqueuedIDs := r.enqueue(q, message(domain.PriorityMedium, "1"), message(domain.PriorityMedium, "2"), message(domain.PriorityMedium, "3"))
		r.is.Equal(len(enqueuedIDs), 3)                // one ID per entry
		r.is.Equal(ids(r.dequeue(q, 10)), enqueuedIDs) // in request order, which is the enqueue order
	}},

	{"EnqueueMessages_Delay_DeliveredOnlyAfterIt", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings)
		later := message(domain.PriorityHigh, "later")
		later.Delay = new(time.Second)
		id := r.enqueue(q, later)[0]
		r.is.Equal(len(r.dequeue(q, 1)), 0)         // not deliverable before its delay
		r.is.Equal(r.counts(q), counts{delayed: 1}) // and counted as delayed
		started := time.Now()
		deliveries, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 1, Wait: 5 * time.Second})
		r.is.NoErr(err)
		r.is.Equal(ids(deliveries), []domain.ID{id})   // a waiting dequeue gets it when the delay ends
		r.is.True(time.Since(started) < 4*time.Second) // and does not wait for the end of its wait
	}},

	{"EnqueueMessages_BatchEntryInvalid_EntryErrorAtItsIndex_NothingStored", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		badTTL := message(domain.PriorityLow, "x")
		badTTL.TTL = new(time.Duration(0))
		tests := []struct {
			name    string
			entries []domain.NewMessage
			index   int
			code    domain.Code
		}{
			{"priority", []domain.NewMessage{message(domain.PriorityLow, "a"), message(domain.PriorityLow, "b"), {Payload: "c"}}, 2, domain.CodeInvalidPriority},
			{"ttl", []domain.NewMessage{message(domain.PriorityLow, "a"), badTTL, {Payload: "c"}}, 1, domain.CodeInvalidTTL},
		}
		for _, tc := range tests {
			_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: tc.entries, Batch: true})
			r.is.Equal(codeOf(err), tc.code)      // the code of the first failing entry
			r.is.Equal(entryIndex(err), tc.index) // as the error of that entry
		}
		r.is.Equal(r.counts(q), counts{}) // all or nothing: no message stored
	}},

	{"EnqueueMessages_SingleInvalid_EntryErrorAtZero", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{{Payload: "x"}}})
		r.is.Equal(codeOf(err), domain.CodeInvalidPriority) // the value's code
		r.is.Equal(entryIndex(err), 0)                      // as the error of the only entry
	}},

	{"EnqueueMessages_DelayNotShorterThanLifetime_InvalidDelay", func(t *testing.T, r *retsuTest) {
		q := r.queue(shortSettings) // a one-minute default lifetime
		own := message(domain.PriorityLow, "own lifetime")
		own.TTL, own.Delay = new(10*time.Second), new(10*time.Second)
		queues := message(domain.PriorityLow, "the queue's lifetime")
		queues.Delay = new(time.Minute)
		for _, n := range []domain.NewMessage{own, queues} {
			_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: []domain.NewMessage{message(domain.PriorityLow, "fine"), n}, Batch: true})
			r.is.Equal(codeOf(err), domain.CodeInvalidDelay) // the message would expire before it could be delivered
			r.is.Equal(entryIndex(err), 1)                   // the entry at fault
		}
	}},

	{"EnqueueMessages_BatchSize_InvalidBatchSize", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		tooMany := make([]domain.NewMessage, domain.MaxEnqueueBatch+1)
		for i := range tooMany {
			tooMany[i] = message(domain.PriorityLow, "x")
		}
		for _, messages := range [][]domain.NewMessage{{}, tooMany} {
			_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, Messages: messages, Batch: true})
			r.is.Equal(codeOf(err), domain.CodeInvalidBatchSize) // 1 to 1,000 messages
		}
	}},

	{"EnqueueMessages_SameKeyAndRequest_ReplaysTheIDs", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		p := app.EnqueueParams{QueueID: q.ID, IdempotencyKey: uniqueName("key"), Batch: true,
			Messages: []domain.NewMessage{message(domain.PriorityHigh, "once"), message(domain.PriorityLow, "twice")}}
		first, err := r.EnqueueMessages(ctx, p)
		r.is.NoErr(err)
		r.is.True(!first.Replayed) // the first request stores
		again, err := r.EnqueueMessages(ctx, p)
		r.is.NoErr(err)
		r.is.True(again.Replayed)               // the same request with the same key is a replay
		r.is.Equal(again.IDs, first.IDs)        // with the first request's IDs
		r.is.Equal(r.counts(q).ready, int64(2)) // and stores nothing
	}},

	{"EnqueueMessages_RepeatAfterTheQueueChanged_Replays", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{DefaultMessageTTL: new(time.Hour)})
		later := message(domain.PriorityHigh, "in half an hour")
		later.Delay = new(30 * time.Minute)
		p := app.EnqueueParams{QueueID: q.ID, IdempotencyKey: uniqueName("key"), Messages: []domain.NewMessage{later}}
		first, err := r.EnqueueMessages(ctx, p)
		r.is.NoErr(err)
		_, err = r.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{DefaultMessageTTL: new(time.Minute)})
		r.is.NoErr(err)
		again, err := r.EnqueueMessages(ctx, p)
		r.is.NoErr(err)                  // a repeat answers the original outcome, although the delay
		r.is.True(again.Replayed)        // is no longer shorter than the queue's default lifetime
		r.is.Equal(again.IDs, first.IDs) // with the first request's IDs
		other := p
		other.IdempotencyKey = uniqueName("key")
		_, err = r.EnqueueMessages(ctx, other)
		r.is.Equal(codeOf(err), domain.CodeInvalidDelay) // a new request is checked against today's settings
		p.Messages = []domain.NewMessage{message(domain.PriorityHigh, "another")}
		p.Messages[0].Delay = new(30 * time.Minute)
		_, err = r.EnqueueMessages(ctx, p)
		r.is.Equal(codeOf(err), domain.CodeInvalidDelay) // and so is another request with the key
		r.is.Equal(r.counts(q).delayed, int64(1))        // one message stored in all
	}},

	{"EnqueueMessages_SameKeyOtherRequest_IdempotencyKeyReused", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		key := uniqueName("key")
		single := app.EnqueueParams{QueueID: q.ID, IdempotencyKey: key, Messages: []domain.NewMessage{message(domain.PriorityHigh, "a")}}
		_, err := r.EnqueueMessages(ctx, single)
		r.is.NoErr(err)
		other := single
		other.Messages = []domain.NewMessage{message(domain.PriorityHigh, "b")}
		_, err = r.EnqueueMessages(ctx, other)
		r.is.Equal(codeOf(err), domain.CodeIdempotencyKeyReused) // another payload is another request
		batch := single
		batch.Batch = true
		_, err = r.EnqueueMessages(ctx, batch)
		r.is.Equal(codeOf(err), domain.CodeIdempotencyKeyReused) // so is the same message by the batch route
		r.is.Equal(r.counts(q).ready, int64(1))                  // neither stored anything
	}},

	{"EnqueueMessages_MalformedKey_InvalidIdempotencyKey", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: q.ID, IdempotencyKey: "has a space",
			Messages: []domain.NewMessage{message(domain.PriorityHigh, "a")}})
		r.is.Equal(codeOf(err), domain.CodeInvalidIdempotencyKey) // visible ASCII only
	}},
}

// dequeueParams asks for up to max messages of q without waiting.
func dequeueParams(q domain.Queue, max int) app.DequeueParams {
	return app.DequeueParams{QueueID: q.ID, Max: max}
}

// dequeueTests cover starting deliveries: batches, order and long polls.
var dequeueTests = []testCase{
	{"DequeueMessages_PriorityThenEnqueueOrder", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		r.enqueue(q, message(domain.PriorityLow, "low"), message(domain.PriorityHigh, "high 1"),
			message(domain.PriorityMedium, "medium"), message(domain.PriorityHigh, "high 2"))
		r.is.Equal(payloads(r.dequeue(q, 10)), []string{"high 1", "high 2", "medium", "low"}) // HIGH before MEDIUM before LOW, then first in first out
	}},

	{"DequeueMessages_TakesAtMostMax", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		for range 5 {
			r.enqueue(q, message(domain.PriorityMedium, "x"))
		}
		r.is.Equal(len(r.dequeue(q, 3)), 3)          // a batch of at most max
		r.is.Equal(len(r.dequeue(q, 3)), 2)          // then what is left
		r.is.Equal(len(r.dequeue(q, 3)), 0)          // then nothing, at once
		r.is.Equal(r.counts(q), counts{inFlight: 5}) // every delivery holds its message
	}},

	{"DequeueMessages_Wait_AnswersWhenAMessageArrives", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		type result struct {
			deliveries []domain.Delivery
			err        error
			took       time.Duration
		}
		done := make(chan result, 1)
		go func() {
			started := time.Now()
			deliveries, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 10, Wait: 10 * time.Second})
			done <- result{deliveries, err, time.Since(started)}
		}()
		time.Sleep(200 * time.Millisecond)
		id := r.enqueue(q, message(domain.PriorityLow, "awaited"))[0]
		got := <-done
		r.is.NoErr(got.err)
		r.is.Equal(ids(got.deliveries), []domain.ID{id}) // the message enqueued during the wait
		r.is.True(got.took < 5*time.Second)              // as soon as it came, without waiting to fill the batch
	}},

	{"DequeueMessages_WaitEnds_AnswersNothing", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		started := time.Now()
		deliveries, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: q.ID, Max: 10, Wait: time.Second})
		r.is.NoErr(err)
		r.is.Equal(len(deliveries), 0)                                     // nothing came
		r.is.True(time.Since(started) >= time.Second-100*time.Millisecond) // by the end of the wait
	}},

	{"DequeueMessages_ExhaustedMessage_MovedToDeadLetters", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		id := r.enqueue(q, message(domain.PriorityHigh, "doomed"))[0]
		r.enqueue(q, message(domain.PriorityLow, "fine"))
		d := r.dequeueOne(q)
		r.is.NoErr(r.Release(ctx, q.ID, d.Receipt(), 0))
		r.is.Equal(payloads(r.dequeue(q, 10)), []string{"fine"}) // the exhausted message is not delivered again; the search goes on
		letter, err := r.DeadLetter(ctx, q.ID, id)
		r.is.NoErr(err)
		r.is.Equal(letter.DeliveryAttempts, 1) // it is a dead letter, with its attempts
	}},
}
