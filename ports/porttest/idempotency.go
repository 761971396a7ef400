package porttest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Two fingerprints of different requests.
var (
	fingerprintA = domain.Fingerprint{0xa}
	fingerprintB = domain.Fingerprint{0xb}
)

// enqueueWithKey enqueues the messages in one request with an idempotency key.
func (m *messageTest) enqueueWithKey(key string, f domain.Fingerprint, retention time.Duration, messages ...domain.Enqueue) (ports.Enqueued, error) {
	return m.Store.Enqueue(ctx, ports.EnqueueParams{
		QueueID: m.queueID, Messages: messages,
		Key: &ports.IdempotencyKey{Key: key, Fingerprint: f, Retention: retention},
	})
}

// idempotencyTests hold the store to the rule of idempotency keys (see ports.IdempotencyKey).
var idempotencyTests = []messageTestCase{
	{"Idempotency_FirstRequest_Stores", func(t *testing.T, m *messageTest) {
		e := m.message(domain.PriorityHigh, "x")
		enqueued, err := m.enqueueWithKey(uniqueName("key"), fingerprintA, time.Hour, e)
		m.is.NoErr(err)
		m.is.True(!enqueued.Replayed)                      // the first request with a key is no replay
		m.is.Equal(enqueued.IDs, []domain.ID{e.MessageID}) // it stores its message
		m.is.Equal(m.dequeue().MessageID, e.MessageID)
	}},

	{"Idempotency_SameRequest_Replays", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		first := m.message(domain.PriorityHigh, "x")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, first)
		m.is.NoErr(err)
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed)                           // the same key and request replay
		m.is.Equal(enqueued.IDs, []domain.ID{first.MessageID}) // with the first request's IDs
		m.is.Equal(m.total(ready), int64(1))                   // and store nothing
	}},

	{"Idempotency_SameBatch_ReplaysEveryID", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		batch := []domain.Enqueue{m.message(domain.PriorityLow, "a"), m.message(domain.PriorityHigh, "b"), m.message(domain.PriorityLow, "c")}
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, batch...)
		m.is.NoErr(err)
		retry := []domain.Enqueue{m.message(domain.PriorityLow, "a"), m.message(domain.PriorityHigh, "b"), m.message(domain.PriorityLow, "c")}
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, retry...)
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed)                                                                      // a repeated batch replays
		m.is.Equal(enqueued.IDs, []domain.ID{batch[0].MessageID, batch[1].MessageID, batch[2].MessageID}) // with every ID of the first, in its order
		m.is.Equal(m.total(ready), int64(3))                                                              // storing none of the retry's messages
	}},

	{"Idempotency_DifferentRequest_KeyReused", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		_, err = m.enqueueWithKey(key, fingerprintB, time.Hour, m.message(domain.PriorityHigh, "y"))
		m.is.True(errors.Is(err, domain.ErrIdempotencyKeyReused)) // another request with the key is refused
		m.is.Equal(m.total(ready), int64(1))                      // and stores nothing
	}},

	{"Idempotency_PastRetention_StoredAnew", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Second, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.Wait(time.Second + margin)
		second := m.message(domain.PriorityHigh, "x")
		enqueued, err := m.enqueueWithKey(key, fingerprintB, time.Second, second)
		m.is.NoErr(err)
		m.is.True(!enqueued.Replayed)                           // a key older than its retention is taken as new
		m.is.Equal(enqueued.IDs, []domain.ID{second.MessageID}) // the request stores its own message
		m.is.Equal(m.total(ready), int64(2))                    // next to the first
		enqueued, err = m.enqueueWithKey(key, fingerprintB, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed)                            // the key now replays the new request
		m.is.Equal(enqueued.IDs, []domain.ID{second.MessageID}) // with its IDs
	}},

	{"Idempotency_ShorterRetentionLater_StillReplaysForTheStoredOne", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		first := m.message(domain.PriorityHigh, "x")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, first)
		m.is.NoErr(err)
		m.Wait(time.Second + margin)
		for _, retry := range []func() (ports.Enqueued, error){
			func() (ports.Enqueued, error) {
				return m.enqueueWithKey(key, fingerprintA, time.Second, m.message(domain.PriorityHigh, "x"))
			},
			func() (ports.Enqueued, error) {
				return m.Store.Replay(ctx, m.queueID, ports.IdempotencyKey{Key: key, Fingerprint: fingerprintA, Retention: time.Second})
			},
		} {
			enqueued, err := retry()
			m.is.NoErr(err)
			m.is.True(enqueued.Replayed)                           // the key keeps the retention it was stored with
			m.is.Equal(enqueued.IDs, []domain.ID{first.MessageID}) // and answers its IDs
		}
		m.is.Equal(m.total(ready), int64(1)) // storing nothing again
	}},

	{"Idempotency_LongerRetentionLater_DoesNotRevive", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Second, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.Wait(time.Second + margin)
		replayed, err := m.Store.Replay(ctx, m.queueID, ports.IdempotencyKey{Key: key, Fingerprint: fingerprintA, Retention: time.Hour})
		m.is.NoErr(err)
		m.is.True(!replayed.Replayed) // a key past the retention it was stored with has expired
		second := m.message(domain.PriorityHigh, "x")
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, second)
		m.is.NoErr(err)
		m.is.True(!enqueued.Replayed)                           // however long the retention is now
		m.is.Equal(enqueued.IDs, []domain.ID{second.MessageID}) // the request stores its own message
	}},

	{"Idempotency_KeysArePerQueue", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		other := newID()
		e := m.message(domain.PriorityHigh, "x")
		e.QueueID = other
		enqueued, err := m.Store.Enqueue(ctx, ports.EnqueueParams{
			QueueID: other, Messages: []domain.Enqueue{e},
			Key: &ports.IdempotencyKey{Key: key, Fingerprint: fingerprintA, Retention: time.Hour},
		})
		m.is.NoErr(err)
		m.is.True(!enqueued.Replayed)                      // the key of one queue means nothing to another
		m.is.Equal(enqueued.IDs, []domain.ID{e.MessageID}) // which stores the message
	}},

	{"Idempotency_AfterAcknowledge_StillReplays", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		first := m.message(domain.PriorityHigh, "x")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, first)
		m.is.NoErr(err)
		m.is.True(m.acknowledge(m.dequeue()))
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed)                           // the key outlives its messages
		m.is.Equal(enqueued.IDs, []domain.ID{first.MessageID}) // and answers their IDs
		m.dequeueNothing()                                     // without storing the message again
	}},

	{"Idempotency_AfterDeadLetterAndExpiry_StillReplays", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		poison := m.message(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		short := m.message(domain.PriorityLow, "short", withTTL(time.Second))
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, poison, short)
		m.is.NoErr(err)
		m.dequeue()
		m.Wait(time.Second + margin)
		m.dequeueNothing() // the poison message is dead-lettered, the short one has expired
		_, err = m.Cleaning.DeleteExpired(ctx, m.queueID, 10)
		m.is.NoErr(err)
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "poison"), m.message(domain.PriorityLow, "short"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed)                                             // the key replays after its messages were dead-lettered and deleted
		m.is.Equal(enqueued.IDs, []domain.ID{poison.MessageID, short.MessageID}) // with their IDs
		m.is.Equal(m.total(ready), int64(0))                                     // storing nothing
	}},

	{"Idempotency_ConcurrentSameRequest_ExactlyOneStores", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		const requests = 10
		results := make([]ports.Enqueued, requests)
		errs := make([]error, requests)
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				results[i], errs[i] = m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"), m.message(domain.PriorityHigh, "y"))
			})
		}
		wg.Wait()
		stored := 0
		var storedIDs []domain.ID
		for i := range requests {
			switch {
			case errors.Is(errs[i], domain.ErrIdempotencyKeyInUse):
			case errs[i] != nil:
				t.Fatalf("request %d: %v", i, errs[i])
			case !results[i].Replayed:
				stored++
				storedIDs = results[i].IDs
			}
		}
		m.is.Equal(stored, 1) // exactly one request stores
		for i := range requests {
			if errs[i] == nil && results[i].Replayed {
				m.is.Equal(results[i].IDs, storedIDs) // every replay answers its IDs
			}
		}
		m.is.Equal(m.total(ready), int64(2)) // and only its messages are stored
	}},

	{"Idempotency_RefusedRequest_StoresNoKey", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		_, err = m.enqueueWithKey(key, fingerprintB, time.Hour, m.message(domain.PriorityHigh, "y"))
		m.is.True(errors.Is(err, domain.ErrIdempotencyKeyReused))
		enqueued, err := m.enqueueWithKey(key, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed) // the refused request did not take the key over: the first still replays
	}},
}
