package porttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestCleaning runs the Cleaning contract over the harness's Store, which makes what the
// cleaners delete, and its Cleaning. newHarness may share one store between tests: each
// test works in queues of its own.
func TestCleaning(t *testing.T, newHarness func(t *testing.T) MessageHarness) {
	runMessageTests(t, newHarness, cleaningTests)
}

var cleaningTests = []messageTestCase{
	{"DeleteExpired_RemovesExpiredWaitingMessagesOnly", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "expires", withTTL(time.Second))
		m.enqueue(domain.PriorityHigh, "lives")
		deleted, err := m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0) // nothing has expired yet
		m.Wait(time.Second + margin)
		deleted, err = m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1)                   // the expired message is deleted
		m.is.Equal(m.dequeue().Payload, "lives") // the live one stays
	}},

	{"DeleteExpired_WaitsForRunningDelivery", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "acknowledged late in life", withTTL(time.Second), withVisibilityTimeout(3*time.Second))
		m.enqueue(domain.PriorityHigh, "abandoned", withTTL(time.Second), withVisibilityTimeout(2*time.Second))
		acknowledged, abandoned := m.dequeue(), m.dequeue()
		m.Wait(time.Second + margin)
		deleted, err := m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0)                 // expired but in flight: both stay
		m.is.True(m.acknowledge(acknowledged)) // and can still be acknowledged
		m.Wait(time.Second)
		deleted, err = m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1)               // once its visibility timeout ended, the other goes
		m.is.True(!m.acknowledge(abandoned)) // its delivery is over
	}},

	{"DeleteExpired_DeletesAtMostLimit", func(t *testing.T, m *messageTest) {
		for range 5 {
			m.enqueue(domain.PriorityMedium, "short", withTTL(time.Second))
		}
		m.Wait(time.Second + margin)
		for _, want := range []int{2, 2, 1, 0} {
			deleted, err := m.Cleaning.DeleteExpired(ctx, m.queueID, 2)
			m.is.NoErr(err)
			m.is.Equal(deleted, want) // each call deletes at most the limit
		}
	}},

	{"DeleteDeadLetters_RemovesOnlyThoseOlderThanRetention", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityLow, "poison", withMaxDeliveryAttempts(1))
		m.dequeue()
		m.Wait(time.Second + margin)
		m.dequeueNothing()
		m.is.Equal(m.deadLettered(), int64(1))
		deleted, err := m.Cleaning.DeleteDeadLetters(ctx, m.queueID, time.Hour, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0) // a young dead letter is kept
		m.Wait(time.Second + margin)
		deleted, err = m.Cleaning.DeleteDeadLetters(ctx, m.queueID, time.Second, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1)                 // an old one is deleted
		m.is.Equal(m.deadLettered(), int64(0)) // and gone from storage
	}},

	{"DeleteExpired_ReleasedWithDelay_IsRemovable", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "released past its lifetime", withTTL(2*time.Second))
		m.is.True(m.release(m.dequeue(), 30*time.Second))
		m.Wait(2*time.Second + margin)
		deleted, err := m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1) // a release delay holds no delivery: the expired message goes
	}},

	{"DeleteExpired_OtherQueuesUntouched", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "expires", withTTL(time.Second))
		m.Wait(time.Second + margin)
		deleted, err := m.Cleaning.DeleteExpired(ctx, newID(), 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0) // another queue has nothing to delete
		deleted, err = m.Cleaning.DeleteExpired(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1) // this queue's expired message was left for its own pass
	}},

	{"DeleteDeadLetters_DeletesAtMostLimit", func(t *testing.T, m *messageTest) {
		var messages []domain.Enqueue
		for range 3 {
			messages = append(messages, m.poison(domain.PriorityLow, "x"))
		}
		m.deadLetter(messages...)
		m.Wait(time.Second + margin)
		for _, want := range []int{2, 1, 0} {
			deleted, err := m.Cleaning.DeleteDeadLetters(ctx, m.queueID, time.Second, 2)
			m.is.NoErr(err)
			m.is.Equal(deleted, want) // each call deletes at most the limit
		}
	}},

	{"DeleteIdempotencyKeys_RemovesOnlyExpiredKeys", func(t *testing.T, m *messageTest) {
		key := uniqueName("key")
		_, err := m.enqueueWithKey(key, fingerprintA, time.Second, m.message(domain.PriorityHigh, "x"))
		m.is.NoErr(err)
		deleted, err := m.Cleaning.DeleteIdempotencyKeys(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0) // a key within its retention is kept
		m.Wait(time.Second + margin)
		deleted, err = m.Cleaning.DeleteIdempotencyKeys(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1) // an expired one is deleted
		enqueued, err := m.enqueueWithKey(key, fingerprintB, time.Hour, m.message(domain.PriorityHigh, "y"))
		m.is.NoErr(err)
		m.is.True(!enqueued.Replayed)        // and gone: the key is new again
		m.is.Equal(m.total(ready), int64(2)) // while the messages it stored stay
	}},

	{"DeleteIdempotencyKeys_KeepsEachKeyForTheRetentionItWasStoredWith", func(t *testing.T, m *messageTest) {
		long, short := uniqueName("long"), uniqueName("short")
		_, err := m.enqueueWithKey(long, fingerprintA, time.Hour, m.message(domain.PriorityHigh, "kept an hour"))
		m.is.NoErr(err)
		_, err = m.enqueueWithKey(short, fingerprintA, time.Second, m.message(domain.PriorityHigh, "kept a second"))
		m.is.NoErr(err)
		m.Wait(time.Second + margin)
		deleted, err := m.Cleaning.DeleteIdempotencyKeys(ctx, m.queueID, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 1) // only the key stored with the short retention has expired
		enqueued, err := m.enqueueWithKey(long, fingerprintA, time.Second, m.message(domain.PriorityHigh, "retry"))
		m.is.NoErr(err)
		m.is.True(enqueued.Replayed) // the long key still replays, whatever the retention now
	}},

	{"DeleteIdempotencyKeys_DeletesAtMostLimit", func(t *testing.T, m *messageTest) {
		for range 3 {
			_, err := m.enqueueWithKey(uniqueName("key"), fingerprintA, time.Second, m.message(domain.PriorityHigh, "x"))
			m.is.NoErr(err)
		}
		m.Wait(time.Second + margin)
		for _, want := range []int{2, 1, 0} {
			deleted, err := m.Cleaning.DeleteIdempotencyKeys(ctx, m.queueID, 2)
			m.is.NoErr(err)
			m.is.Equal(deleted, want) // each call deletes at most the limit
		}
	}},

	{"DeleteQueueData_RemovesMessagesDeadLettersAndKeysInBatches", func(t *testing.T, m *messageTest) {
		m.createQueue(t)
		m.deadLetter(m.poison(domain.PriorityHigh, "a"), m.poison(domain.PriorityHigh, "b"))
		m.enqueue(domain.PriorityLow, "ready")
		m.enqueue(domain.PriorityLow, "delayed", withDelay(30*time.Second))
		m.enqueue(domain.PriorityLow, "in flight")
		m.dequeue()
		_, err := m.enqueueWithKey(uniqueName("key"), fingerprintA, time.Hour, m.message(domain.PriorityLow, "keyed"))
		m.is.NoErr(err)
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		// 2 dead letters, 4 messages and 1 key: 7 rows.
		var cursor ports.QueueDataCursor
		for i, want := range []int{3, 3, 1} {
			deleted, next, err := m.Cleaning.DeleteQueueData(ctx, m.queueID, cursor, 3)
			m.is.NoErr(err)
			m.is.Equal(deleted, want)     // each call deletes at most the limit, going on from the last
			m.is.Equal(next.Done, i == 2) // until nothing is left
			cursor = next
		}
		m.is.Equal(m.deadLettered(), int64(0))                                                                        // the dead letters are gone
		m.is.Equal(m.total(func(p domain.PriorityStats) int64 { return p.Ready + p.Delayed + p.InFlight }), int64(0)) // and the messages
	}},

	{"DeleteQueueData_ManyBatches_EachGoesOnFromTheLast", func(t *testing.T, m *messageTest) {
		m.createQueue(t)
		for i := range 7 {
			m.enqueue(domain.PriorityLow, fmt.Sprintf("m%d", i))
			_, err := m.enqueueWithKey(uniqueName("key"), fingerprintA, time.Hour, m.message(domain.PriorityLow, "keyed"))
			m.is.NoErr(err)
		}
		m.is.NoErr(m.Queues.DeleteQueue(ctx, m.queueID))
		// 14 messages and 7 keys: 21 rows, in batches of 2.
		var cursor ports.QueueDataCursor
		total, calls := 0, 0
		for !cursor.Done && calls < 20 {
			deleted, next, err := m.Cleaning.DeleteQueueData(ctx, m.queueID, cursor, 2)
			m.is.NoErr(err)
			m.is.True(deleted <= 2) // never more than the limit
			total, cursor, calls = total+deleted, next, calls+1
		}
		m.is.True(cursor.Done) // the batches end
		m.is.Equal(total, 21)  // having deleted every row once
		m.is.True(calls <= 12) // each batch full but the last ones of a table
	}},

	{"DeleteQueueData_OtherQueuesUntouched", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "kept")
		gone := newID()
		deleted, cursor, err := m.Cleaning.DeleteQueueData(ctx, gone, ports.QueueDataCursor{}, 100)
		m.is.NoErr(err)
		m.is.Equal(deleted, 0)                // a queue without data has nothing to delete
		m.is.True(cursor.Done)                // and is done
		m.is.Equal(m.dequeue().MessageID, id) // and no other queue loses any
	}},
}
