package test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The worker loop of Part 2 over real HTTP, on real PostgreSQL and Redis, on one instance and
// across two: batches, long polls, leases extended and released, delays.

// messages is the answer of a batch dequeue.
type messages struct {
	Messages []message `json:"messages"`
}

// dequeueBatch takes up to max messages, waiting up to wait seconds, expecting 200.
func (c *client) dequeueBatch(queueID string, max, wait int) []message {
	c.t.Helper()
	res := c.do(http.MethodPost, "/v1/queues/"+queueID+"/messages/dequeue/batch", map[string]any{"max_messages": max, "wait_seconds": wait})
	if res.Status != http.StatusOK {
		c.t.Fatalf("dequeue batch: %d %s", res.Status, res.Body)
	}
	var got messages
	res.decode(c.t, &got)
	return got.Messages
}

// longPoll takes one message, waiting up to wait seconds; ok is false on 204.
func (c *client) longPoll(queueID string, wait int) (message, bool) {
	c.t.Helper()
	res := c.do(http.MethodPost, "/v1/queues/"+queueID+"/messages/dequeue", map[string]any{"wait_seconds": wait})
	switch res.Status {
	case http.StatusNoContent:
		return message{}, false
	case http.StatusOK:
		var m message
		res.decode(c.t, &m)
		return m, true
	}
	c.t.Fatalf("long poll: %d %s", res.Status, res.Body)
	return message{}, false
}

func TestBatches_EnqueueDequeueAcknowledge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("batches", nil)
	res := c.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/batch", map[string]any{"messages": []map[string]any{
		{"payload": "low", "priority": "LOW"}, {"payload": "high", "priority": "HIGH"}, {"payload": "medium", "priority": "MEDIUM"},
		{"payload": "later", "priority": "HIGH", "delay_seconds": 60},
	}})
	is.Equal(res.Status, http.StatusCreated)
	var created struct{ IDs []string }
	res.decode(t, &created)
	is.Equal(len(created.IDs), 4) // one ID per entry, in request order

	got := c.dequeueBatch(q.ID, 10, 0)
	is.Equal(len(got), 3)               // the delayed message is not delivered
	is.Equal(got[0].ID, created.IDs[1]) // in delivery order: HIGH,
	is.Equal(got[1].ID, created.IDs[2]) // MEDIUM,
	is.Equal(got[2].ID, created.IDs[0]) // LOW

	receipts := []map[string]string{}
	for _, m := range got {
		receipts = append(receipts, map[string]string{"id": m.ID, "receipt_handle": m.ReceiptHandle})
	}
	receipts = append(receipts, receipts[0]) // the first again: it was already removed
	res = c.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/acknowledge/batch", map[string]any{"messages": receipts})
	is.Equal(res.Status, http.StatusOK)
	var results struct {
		Results []struct {
			ID           string
			Acknowledged bool
		}
	}
	res.decode(t, &results)
	is.Equal(len(results.Results), 4)
	for _, r := range results.Results[:3] {
		is.True(r.Acknowledged) // each current handle removed its message
	}
	is.True(!results.Results[3].Acknowledged) // the repeat removed nothing
}

func TestBatch_EntryError_NamesItsPointerAndStoresNothing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("batch-error", nil)
	res := c.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/batch", map[string]any{"messages": []map[string]any{
		{"payload": "fine", "priority": "LOW"}, {"payload": "bad", "priority": "URGENT"},
	}})
	is.Equal(res.Status, http.StatusBadRequest)
	is.Equal(res.code(t), "invalid_priority")
	var p struct{ Pointer string }
	res.decode(t, &p)
	is.Equal(p.Pointer, "/messages/1/priority") // the entry and member at fault
	_, ok := c.dequeue(q.ID)
	is.True(!ok) // and nothing of the batch was stored
}

func TestLongPoll_WokenByAnEnqueueOnAnotherInstance(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("long-poll", nil)
	got := make(chan message, 1)
	go func() {
		m, ok := b.longPoll(q.ID, 10)
		if ok {
			got <- m
		}
		close(got)
	}()
	time.Sleep(300 * time.Millisecond) // B's consumer is waiting
	sent := time.Now()
	id := a.enqueue(q.ID, "wake up", "MEDIUM")
	m, ok := <-got
	is.True(ok)        // the waiting consumer on B got it
	is.Equal(m.ID, id) // the message enqueued on A
	took := time.Since(sent)
	t.Logf("enqueued on A, delivered to the waiter on B after %v", took)
	is.True(took < 5*time.Second) // long before its wait ended
}

func TestLongPoll_ReleaseOnOneInstance_DeliveredToAWaiterOnAnother(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("release", nil)
	a.enqueue(q.ID, "try again", "HIGH")
	first, ok := a.dequeue(q.ID)
	is.True(ok)
	got := make(chan message, 1)
	go func() {
		m, ok := b.longPoll(q.ID, 10)
		if ok {
			got <- m
		}
		close(got)
	}()
	time.Sleep(300 * time.Millisecond)
	res := a.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/"+first.ID+"/release", map[string]any{"receipt_handle": first.ReceiptHandle})
	is.Equal(res.Status, http.StatusNoContent)
	m, ok := <-got
	is.True(ok)                     // the waiter on B got the released message
	is.Equal(m.ID, first.ID)        // the same one
	is.Equal(m.DeliveryAttempts, 2) // as its second attempt
	is.True(m.ReceiptHandle != first.ReceiptHandle)
	res = a.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/"+first.ID+"/extend",
		map[string]any{"receipt_handle": first.ReceiptHandle, "visibility_timeout_seconds": 30})
	is.Equal(res.Status, http.StatusConflict) // the released handle no longer holds a lease
	is.Equal(res.code(t), "lease_lost")
}

func TestLongPoll_SeveralWaitersOneMessage_ExactlyOneGetsIt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("one-of-many", nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	delivered := 0
	for i := range 6 {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			if _, ok := c.longPoll(q.ID, 2); ok {
				mu.Lock()
				delivered++
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	a.enqueue(q.ID, "only one", "LOW")
	wg.Wait()
	is.Equal(delivered, 1) // one waiter got the message; the others waited out their 2 s and got 204
}

func TestLease_ExtendKeepsItPastItsTimeout_DelayedMessageWaitsItsDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	q := c.createQueue("lease", map[string]any{"visibility_timeout_seconds": 1})
	c.enqueue(q.ID, "long job", "HIGH")
	m, ok := c.dequeue(q.ID)
	is.True(ok)
	res := c.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/"+m.ID+"/extend",
		map[string]any{"receipt_handle": m.ReceiptHandle, "visibility_timeout_seconds": 3})
	is.Equal(res.Status, http.StatusNoContent)
	time.Sleep(1500 * time.Millisecond)
	_, ok = c.dequeue(q.ID)
	is.True(!ok)                                           // past the queue's 1 s timeout, the extended lease still hides it
	is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent) // and its handle still completes it
	_, ok = c.dequeue(q.ID)
	is.True(!ok)

	c.enqueue(q.ID, "in a second", "HIGH", map[string]any{"delay_seconds": 1})
	_, ok = c.dequeue(q.ID)
	is.True(!ok) // not before its delay
	time.Sleep(1200 * time.Millisecond)
	_, ok = c.dequeue(q.ID)
	is.True(ok) // deliverable once it ended
}
