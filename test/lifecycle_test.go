package test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// setup returns a client of the server that the tests share.
func setup(t *testing.T) *client { return shared.client(t) }

func TestQueues_CreateGetListPatch_AsDocumented(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)

	res := c.do(http.MethodPost, "/v1/queues", map[string]any{"name": uniqueName("emails")})
	is.Equal(res.Status, http.StatusCreated) // a queue is created with a name only
	var q queue
	res.decode(t, &q)
	is.Equal(res.Header.Get("Location"), "/v1/queues/"+q.ID) // its address is in Location
	is.Equal(q.VisibilityTimeoutSeconds, 30)                 // with the default visibility timeout
	is.Equal(q.MaxDeliveryAttempts, 5)                       // the default attempt limit
	is.Equal(q.DefaultMessageTTLSeconds, 604800)             // and the default lifetime

	explicit := c.createQueue("explicit", map[string]any{
		"visibility_timeout_seconds": 60, "max_delivery_attempts": 10, "default_message_ttl_seconds": 86400,
	})
	is.Equal(explicit.VisibilityTimeoutSeconds, 60) // explicit settings are kept
	is.Equal(explicit.MaxDeliveryAttempts, 10)
	is.Equal(explicit.DefaultMessageTTLSeconds, 86400)

	res = c.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{"visibility_timeout_seconds": 60, "max_delivery_attempts": 10})
	is.Equal(res.Status, http.StatusOK)
	var patched queue
	res.decode(t, &patched)
	is.Equal(patched.VisibilityTimeoutSeconds, 60)     // PATCH changes the given settings
	is.Equal(patched.MaxDeliveryAttempts, 10)          // both of them
	is.Equal(patched.DefaultMessageTTLSeconds, 604800) // and keeps the others
	is.Equal(patched.Name, q.Name)                     // the name never changes

	var got queue
	res = c.do(http.MethodGet, "/v1/queues/"+q.ID, nil)
	is.Equal(res.Status, http.StatusOK)
	res.decode(t, &got)
	is.Equal(got, patched) // GET by ID shows the updated queue

	var page struct{ Queues []queue }
	res = c.do(http.MethodGet, "/v1/queues?name="+q.Name, nil)
	is.Equal(res.Status, http.StatusOK)
	res.decode(t, &page)
	is.Equal(page.Queues, []queue{patched}) // the queue is found by its name

	res = c.do(http.MethodPost, "/v1/queues", map[string]any{"name": q.Name})
	is.Equal(res.Status, http.StatusConflict)     // the name is taken
	is.Equal(res.code(t), "queue_already_exists") // with its code
	res = c.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{})
	is.Equal(res.code(t), "empty_queue_update") // an empty update is refused
	res = c.do(http.MethodGet, "/v1/queues/019c9a65-7d3a-7c6b-8a9d-123456789abc", nil)
	is.Equal(res.Status, http.StatusNotFound) // an unknown queue
	is.Equal(res.code(t), "queue_not_found")  // is not found
}

func TestMessages_PriorityThenEnqueueOrder_AndAcknowledge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("order", nil)

	low := c.enqueue(q.ID, "low", "LOW")
	medium1 := c.enqueue(q.ID, "medium 1", "MEDIUM", map[string]any{"ttl_seconds": 3600})
	high := c.enqueue(q.ID, "send welcome email", "HIGH", map[string]any{"ttl_seconds": 3600})
	medium2 := c.enqueue(q.ID, "medium 2", "MEDIUM")

	for _, want := range []struct{ id, payload, priority string }{
		{high, "send welcome email", "HIGH"}, {medium1, "medium 1", "MEDIUM"},
		{medium2, "medium 2", "MEDIUM"}, {low, "low", "LOW"},
	} {
		m, ok := c.dequeue(q.ID)
		is.True(ok)
		is.Equal(m.ID, want.id)             // priority first, then enqueue order
		is.Equal(m.Payload, want.payload)   // with the payload
		is.Equal(m.Priority, want.priority) // and the priority
		is.Equal(m.DeliveryAttempts, 1)     // on the first attempt
		is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent)
		is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent) // repeating is safe
	}
	_, ok := c.dequeue(q.ID)
	is.True(!ok) // every message was acknowledged: 204
}

func TestMessages_VisibilityTimeout_RedeliversAndRejectsStaleAndLateHandles(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("visibility", map[string]any{"visibility_timeout_seconds": 1})
	id := c.enqueue(q.ID, "retry me", "HIGH")

	first, ok := c.dequeue(q.ID)
	is.True(ok)
	_, ok = c.dequeue(q.ID)
	is.True(!ok) // hidden during its visibility timeout

	time.Sleep(1200 * time.Millisecond)
	is.Equal(c.acknowledge(q.ID, first), http.StatusNoContent) // a late acknowledgement answers 204
	second, ok := c.dequeue(q.ID)
	is.True(ok)                                          // but removed nothing: the message comes back
	is.Equal(second.ID, id)                              // the same message
	is.Equal(second.DeliveryAttempts, 2)                 // with one more attempt
	is.True(second.ReceiptHandle != first.ReceiptHandle) // and a new receipt handle

	is.Equal(c.acknowledge(q.ID, first), http.StatusNoContent) // a stale handle answers 204
	is.Equal(c.acknowledge(q.ID, second), http.StatusNoContent)
	time.Sleep(1200 * time.Millisecond)
	_, ok = c.dequeue(q.ID)
	is.True(!ok) // the current handle removed it; the stale one did not get in the way
}

func TestMessages_AttemptLimit_MovesToDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("deadletter", map[string]any{"visibility_timeout_seconds": 1, "max_delivery_attempts": 2})
	id := c.enqueue(q.ID, "poison", "HIGH")
	next := c.enqueue(q.ID, "fine", "LOW")

	for attempt := 1; attempt <= 2; attempt++ {
		m, ok := c.dequeue(q.ID)
		is.True(ok)
		is.Equal(m.ID, id)                    // the HIGH message comes first
		is.Equal(m.DeliveryAttempts, attempt) // attempt after attempt
		time.Sleep(1200 * time.Millisecond)
	}
	m, ok := c.dequeue(q.ID)
	is.True(ok)
	is.Equal(m.ID, next) // the exhausted message is moved and the search goes on

	var attempts int
	var payload []byte
	err := db.QueryRow(t.Context(), `SELECT delivery_attempts, payload FROM dead_letters WHERE queue_id = $1 AND id = $2`, q.ID, id).Scan(&attempts, &payload)
	is.NoErr(err)                       // the dead letter is stored
	is.Equal(attempts, 2)               // with its attempts
	is.Equal(string(payload), "poison") // and its payload
	var left int
	is.NoErr(db.QueryRow(t.Context(), `SELECT count(*) FROM messages WHERE queue_id = $1 AND id = $2`, q.ID, id).Scan(&left))
	is.Equal(left, 0) // and is no longer in the queue
}

func TestMessages_Expired_AreNeverDelivered(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("expiry", map[string]any{"default_message_ttl_seconds": 1})
	c.enqueue(q.ID, "default lifetime", "HIGH")
	c.enqueue(q.ID, "own lifetime", "HIGH", map[string]any{"ttl_seconds": 1})
	live := c.enqueue(q.ID, "long lifetime", "LOW", map[string]any{"ttl_seconds": 3600})
	time.Sleep(1200 * time.Millisecond)
	m, ok := c.dequeue(q.ID)
	is.True(ok)
	is.Equal(m.ID, live) // both expired messages are skipped
	_, ok = c.dequeue(q.ID)
	is.True(!ok) // and never delivered
}

func TestMessages_PayloadRoundTripsExactly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("payload", nil)
	payloads := []string{"", "\u0000", "emoji 🎉 and accents é", `<tag attr="x">&amp;</tag>`, strings.Repeat("y", 512<<10)}
	for _, p := range payloads {
		c.enqueue(q.ID, p, "MEDIUM")
	}
	for _, p := range payloads {
		m, ok := c.dequeue(q.ID)
		is.True(ok)
		is.Equal(m.Payload, p) // the payload comes back as the same string
	}
}

func TestQueues_ConcurrentCreatesOfOneName_OneWins(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	name := uniqueName("race")
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = c.do(http.MethodPost, "/v1/queues", map[string]any{"name": name}).Status })
	}
	wg.Wait()
	is.True(statuses[0] == http.StatusCreated || statuses[1] == http.StatusCreated)   // one create wins
	is.True(statuses[0] == http.StatusConflict || statuses[1] == http.StatusConflict) // the other gets 409
}

func TestMessages_TwentyConsumers_NeverShareADelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("consumers", map[string]any{"visibility_timeout_seconds": 60})
	const messages, consumers = 400, 20
	for i := range messages {
		c.enqueue(q.ID, "job", []string{"HIGH", "MEDIUM", "LOW"}[i%3])
	}
	var mu sync.Mutex
	deliveries := map[string]int{}
	var wg sync.WaitGroup
	for range consumers {
		wg.Go(func() {
			for {
				m, ok := c.dequeue(q.ID)
				if !ok {
					return
				}
				mu.Lock()
				deliveries[m.ID]++
				mu.Unlock()
				c.acknowledge(q.ID, m)
			}
		})
	}
	wg.Wait()
	is.Equal(len(deliveries), messages) // every message was delivered
	for id, n := range deliveries {
		if n != 1 {
			t.Errorf("message %s delivered %d times during its visibility timeout", id, n)
		}
	}
}

func TestQueues_PatchOnOneInstance_SeenByAnotherWithinOneSecond(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("two-instances", nil)
	res := b.do(http.MethodGet, "/v1/queues/"+q.ID, nil)
	is.Equal(res.Status, http.StatusOK) // instance B has read (and cached) the queue

	res = a.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{"max_delivery_attempts": 9})
	is.Equal(res.Status, http.StatusOK)
	patchedAt := time.Now()
	for {
		var seen queue
		b.do(http.MethodGet, "/v1/queues/"+q.ID, nil).decode(t, &seen)
		if seen.MaxDeliveryAttempts == 9 {
			break
		}
		if time.Since(patchedAt) > time.Second {
			t.Fatalf("instance B still sees %d attempts one second after the PATCH", seen.MaxDeliveryAttempts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRedisDown_RequestsSucceedFromPostgreSQL(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := startServer(t, "RETSU_REDIS_URL=redis://"+closedAddress(t)+"/0").client(t)
	q := c.createQueue("no-redis", nil)
	id := c.enqueue(q.ID, "still works", "HIGH")
	m, ok := c.dequeue(q.ID)
	is.True(ok)
	is.Equal(m.ID, id)                                     // the lifecycle works without Redis
	is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent) // to the end
}
