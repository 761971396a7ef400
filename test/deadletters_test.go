package test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// Dead letters, queue deletion, purge and idempotent enqueue over real HTTP, on real
// PostgreSQL and Redis, on one instance and across two.

// deadLetter is a dead letter as the API shows it.
type deadLetter struct {
	ID               string `json:"id"`
	Payload          string `json:"payload"`
	Priority         string `json:"priority"`
	DeliveryAttempts int    `json:"delivery_attempts"`
	EnqueuedAt       string `json:"enqueued_at"`
	DeadLetteredAt   string `json:"dead_lettered_at"`
}

// poison enqueues n messages on a queue that allows one attempt of one second, delivers each
// once and lets the leases end, so that the next dequeue moves them to dead letters.
func (c *client) poison(n int) queue {
	c.t.Helper()
	q := c.createQueue("poison", map[string]any{"visibility_timeout_seconds": 1, "max_delivery_attempts": 1})
	for i := range n {
		c.enqueue(q.ID, "poison "+string(rune('a'+i%26)), "HIGH")
	}
	for range n {
		if _, ok := c.dequeue(q.ID); !ok {
			c.t.Fatal("a poison message was not delivered")
		}
	}
	time.Sleep(1200 * time.Millisecond)
	if _, ok := c.dequeue(q.ID); ok {
		c.t.Fatal("an exhausted message was delivered")
	}
	return q
}

func (c *client) deadLetters(queueID string) []deadLetter {
	c.t.Helper()
	res := c.do(http.MethodGet, "/v1/queues/"+queueID+"/dead-letters", nil)
	if res.Status != http.StatusOK {
		c.t.Fatalf("dead letters: %d %s", res.Status, res.Body)
	}
	var page struct {
		DeadLetters []deadLetter `json:"dead_letters"`
	}
	res.decode(c.t, &page)
	return page.DeadLetters
}

func TestDeadLetters_ListGetRedriveDelete(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.poison(3)
	letters := c.deadLetters(q.ID)
	is.Equal(len(letters), 3) // the three exhausted messages
	for i := 1; i < len(letters); i++ {
		is.True(letters[i-1].ID < letters[i].ID) // in ID order
	}
	is.Equal(letters[0].DeliveryAttempts, 1)
	res := c.do(http.MethodGet, "/v1/queues/"+q.ID+"/dead-letters/"+letters[0].ID, nil)
	is.Equal(res.Status, http.StatusOK)
	var one deadLetter
	res.decode(t, &one)
	is.Equal(one, letters[0]) // one dead letter by its ID

	res = c.do(http.MethodPost, "/v1/queues/"+q.ID+"/dead-letters/redrive", map[string]any{"ids": []string{letters[1].ID, unknownMessageID}})
	is.Equal(res.Status, http.StatusOK)
	var redriven struct{ Redriven []string }
	res.decode(t, &redriven)
	is.Equal(redriven.Redriven, []string{letters[1].ID}) // the ID without a dead letter is left out
	m, ok := c.dequeue(q.ID)
	is.True(ok)
	is.Equal(m.ID, letters[1].ID)   // the redriven message is back in its queue
	is.Equal(m.DeliveryAttempts, 1) // with fresh attempts
	is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent)

	res = c.do(http.MethodDelete, "/v1/queues/"+q.ID+"/dead-letters/"+letters[0].ID, nil)
	is.Equal(res.Status, http.StatusNoContent)
	res = c.do(http.MethodGet, "/v1/queues/"+q.ID+"/dead-letters/"+letters[0].ID, nil)
	is.Equal(res.Status, http.StatusNotFound)
	is.Equal(res.code(t), "dead_letter_not_found") // deleted
	res = c.do(http.MethodDelete, "/v1/queues/"+q.ID+"/dead-letters", nil)
	is.Equal(res.Status, http.StatusOK)
	var deleted struct{ Deleted int }
	res.decode(t, &deleted)
	is.Equal(deleted.Deleted, 1) // the last one
}

// unknownMessageID is a canonical UUID that names no message.
const unknownMessageID = "019c9a65-7d3a-7c6b-8a9d-123456789abc"

func TestRedrive_RacingConsumers_EachMessageDeliveredOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.poison(20)
	res := c.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{"max_delivery_attempts": 5, "visibility_timeout_seconds": 30})
	is.Equal(res.Status, http.StatusOK)
	var mu sync.Mutex
	seen := map[string]int{}
	stop := make(chan struct{})
	var consumers sync.WaitGroup
	for range 4 {
		consumers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if m, ok := c.longPoll(q.ID, 1); ok {
					mu.Lock()
					seen[m.ID]++
					mu.Unlock()
					c.acknowledge(q.ID, m)
				}
			}
		})
	}
	res = c.do(http.MethodPost, "/v1/queues/"+q.ID+"/dead-letters/redrive", map[string]any{"limit": 100})
	is.Equal(res.Status, http.StatusOK)
	var redriven struct{ Redriven []string }
	res.decode(t, &redriven)
	is.Equal(len(redriven.Redriven), 20) // every dead letter went back
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 20 {
			break
		}
	}
	close(stop)
	consumers.Wait()
	is.Equal(len(seen), 20) // the waiting consumers got every redriven message
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
	}
	is.Equal(len(c.deadLetters(q.ID)), 0) // and none is left in dead letters
}

func TestDeleteQueue_SeenByAnotherInstanceWithinOneSecond_NameFreeAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("doomed", nil)
	a.enqueue(q.ID, "never delivered", "HIGH")
	is.Equal(b.do(http.MethodGet, "/v1/queues/"+q.ID, nil).Status, http.StatusOK) // B has the queue cached

	res := a.do(http.MethodDelete, "/v1/queues/"+q.ID, nil)
	is.Equal(res.Status, http.StatusNoContent)
	deletedAt := time.Now()
	is.Equal(a.do(http.MethodGet, "/v1/queues/"+q.ID, nil).Status, http.StatusNotFound) // at once on A
	for b.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/dequeue", nil).Status != http.StatusNotFound {
		if time.Since(deletedAt) > time.Second {
			t.Fatal("instance B still serves the deleted queue one second later")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res = a.do(http.MethodPost, "/v1/queues", map[string]any{"name": q.Name})
	is.Equal(res.Status, http.StatusCreated) // its name is free at once
}

func TestPurge_RemovesMessagesKeepsDeadLetters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.poison(1)
	c.enqueue(q.ID, "ready", "LOW")
	c.enqueue(q.ID, "delayed", "LOW", map[string]any{"delay_seconds": 60})
	res := c.do(http.MethodDelete, "/v1/queues/"+q.ID+"/messages", nil)
	is.Equal(res.Status, http.StatusOK)
	var purged struct{ Deleted int }
	res.decode(t, &purged)
	is.Equal(purged.Deleted, 2) // the ready and the delayed message
	_, ok := c.dequeue(q.ID)
	is.True(!ok)
	is.Equal(len(c.deadLetters(q.ID)), 1) // dead letters stay
}

func TestIdempotentEnqueue_RetryOnAnotherInstanceReplays(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("keyed", nil)
	body := map[string]any{"payload": "charge card 42", "priority": "HIGH"}
	send := func(c *client, body map[string]any) response {
		req, err := http.NewRequest(http.MethodPost, c.base+"/v1/queues/"+q.ID+"/messages", jsonBody(t, body))
		is.NoErr(err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "order-42")
		return c.send(req)
	}
	first := send(a, body)
	is.Equal(first.Status, http.StatusCreated)
	is.Equal(first.Header.Get("Idempotent-Replayed"), "")
	again := send(b, body)
	is.Equal(again.Status, http.StatusCreated)                // the retry on another instance
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true") // is a replay
	is.Equal(string(again.Body), string(first.Body))          // with the original ID
	other := send(b, map[string]any{"payload": "charge card 43", "priority": "HIGH"})
	is.Equal(other.Status, http.StatusUnprocessableEntity) // a different request with the key is refused
	is.Equal(other.code(t), "idempotency_key_reused")
	m, ok := a.dequeue(q.ID)
	is.True(ok)
	_, ok = a.dequeue(q.ID)
	is.True(!ok) // one message was stored, not two
	is.Equal(a.acknowledge(q.ID, m), http.StatusNoContent)
	is.Equal(send(a, body).Header.Get("Idempotent-Replayed"), "true") // and the key replays after the acknowledgement too
}
