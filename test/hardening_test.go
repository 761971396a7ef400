package test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"
)

// The tests in this file reproduce, over HTTP, the faults of point 3 of the hardening issue:
// with PostgreSQL slow (a lock held longer than the request timeout), a dequeue answered 503
// and its claim committed afterwards, charging an attempt nobody saw, and an enqueue answered
// 503 was stored, so that its retry stored it twice. Each runs a server of its own on a
// schema of its own, whose tables it may lock.

// lockMessages holds an exclusive lock on the schema's messages table for d, from a
// connection of its own; it returns once the lock is held, and released is closed when it
// is let go.
func lockMessages(t *testing.T, url string, d time.Duration) (released chan struct{}) {
	t.Helper()
	return holdFor(t, url, d, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
}

// holdFor runs statement in a transaction on a connection of its own to url, and commits it
// d after it returned; released is closed then.
func holdFor(t *testing.T, url string, d time.Duration, statement string) (released chan struct{}) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, statement); err != nil {
		t.Fatal(err)
	}
	released = make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(d)
		_ = tx.Commit(ctx)
	}()
	return released
}

func TestHardening_RequestPastItsTimeout_AnswersWhatItsRoundDid(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	url, _ := newSchema(t)
	c := startServer(t, "RETSU_DATABASE_URL="+url, "RETSU_REQUEST_TIMEOUT=500ms").client(t)
	q := c.createQueue("slow", nil)

	released := lockMessages(t, url, 2*time.Second)
	res := c.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages", map[string]any{"payload": "stored once", "priority": "LOW"})
	<-released
	is.Equal(res.Status, http.StatusCreated) // its round was in the database before the timeout: the answer is what it did
	var created struct{ ID string }
	res.decode(t, &created)
	var stored int
	is.NoErr(db.QueryRow(t.Context(), "SELECT count(*) FROM "+schemaOf(url)+".messages WHERE payload = convert_to('stored once', 'UTF8')").Scan(&stored))
	is.Equal(stored, 1) // once: a client told 201 has no reason to send it again
}

func TestHardening_ClientGoneBeforeItsClaimCommitted_ClaimIsUndone(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	url, _ := newSchema(t)
	server := startServer(t, "RETSU_DATABASE_URL="+url)
	c := server.client(t)
	q := c.createQueue("gone", map[string]any{"max_delivery_attempts": 1})
	id := c.enqueue(q.ID, "only one attempt", "HIGH")

	released := lockMessages(t, url, 2*time.Second)
	impatient := &http.Client{Timeout: 300 * time.Millisecond}
	_, err := impatient.Post(server.URL()+"/v1/queues/"+q.ID+"/messages/dequeue", "application/json", strings.NewReader("{}"))
	is.True(err != nil) // the consumer gave up and went away while the claim waited in the database
	var netErr interface{ Timeout() bool }
	is.True(errors.As(err, &netErr) && netErr.Timeout())
	<-released

	// The claim committed after the consumer had gone: the server took it back.
	var m message
	var ok bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m, ok = c.dequeue(q.ID); ok {
			break
		}
	}
	is.True(ok)                     // the message is deliverable again at once, not after its 30 s lease
	is.Equal(m.ID, id)              // the same message
	is.Equal(m.DeliveryAttempts, 1) // whose first attempt is this one: the one nobody received did not count
	is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent)
}

// schemaOf returns the schema that a URL of newSchema selects.
func schemaOf(url string) string {
	_, schema, _ := strings.Cut(url, "search_path=")
	return schema
}

// A long poll on one instance, on a queue that another instance deletes, answers 404 at once:
// from the deletion's answer on, every route of every instance says the queue is gone.
func TestHardening_QueueDeletedOnAnotherInstance_LongPollAnswers404(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b := setup(t), startServer(t).client(t)
	q := a.createQueue("deleted-while-polled", nil)
	polls := make(chan response, 2)
	started := time.Now()
	go func() {
		polls <- b.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/dequeue", map[string]any{"wait_seconds": 20})
	}()
	go func() {
		polls <- b.do(http.MethodPost, "/v1/queues/"+q.ID+"/messages/dequeue/batch", map[string]any{"wait_seconds": 20})
	}()
	time.Sleep(500 * time.Millisecond) // both wait on b

	is.Equal(a.do(http.MethodDelete, "/v1/queues/"+q.ID, nil).Status, http.StatusNoContent)

	for range 2 {
		res := <-polls
		is.Equal(res.Status, http.StatusNotFound) // the waits end with the queue's absence
		is.Equal(res.code(t), "queue_not_found")  // as the contract names it
	}
	is.True(time.Since(started) < 10*time.Second) // well before their wait of 20 s ended
}
