package test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"
)

// The tests in this file run instances that forward rounds to their leader
// (docs/operations.md, "Round forwarding"), each with a peer listener of its own.

const testPeerToken = "e2e-peer-token-0123456789"

// startPeer starts an instance on the database of url with a peer listener, and returns it
// with the address the others reach it at.
func startPeer(t *testing.T, url string) (*retsuProcess, string) {
	t.Helper()
	address := freeAddress()
	return startServer(t, "RETSU_DATABASE_URL="+url, "RETSU_PEER_ADDR="+address, "RETSU_PEER_TOKEN="+testPeerToken), address
}

// roundLeader waits until the lease names one of the instances of addresses, and returns it.
func roundLeader(t *testing.T, pool *pgxpool.Pool, addresses ...string) string {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var leader string
		err := pool.QueryRow(t.Context(), "SELECT address FROM round_leader WHERE expires_at > now()").Scan(&leader)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		for _, a := range addresses {
			if leader == a {
				return leader
			}
		}
	}
	t.Fatalf("no instance of %v leads within 15 s", addresses)
	return ""
}

// Two instances forwarding rounds serve every request of a busy queue between them, and
// when the leader is killed, the other takes the lease and goes on alone.
func TestPeers_TwoInstances_LeaderKilled_TheOtherLeadsAndServes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	url, pool := newSchema(t)
	first, firstAddress := startPeer(t, url)
	is.Equal(roundLeader(t, pool, firstAddress), firstAddress) // the first instance takes the lease
	second, secondAddress := startPeer(t, url)
	clients := []*client{first.client(t), second.client(t)}
	q := clients[0].createQueue("forwarded", nil)

	// Producers and consumers on both instances at once, their rounds contending from the
	// start (the round lock held as another instance's round would), so that the second
	// forwards to the first: every message is delivered and acknowledged once.
	held := holdRoundLock(t, url, 300*time.Millisecond)
	const perProducer = 40
	var wg sync.WaitGroup
	acknowledged := make(chan string, 4*perProducer)
	for i := range 4 {
		c := clients[i%2]
		wg.Go(func() {
			for j := range perProducer {
				c.enqueue(q.ID, "message", []string{"HIGH", "MEDIUM", "LOW"}[j%3])
			}
		})
		wg.Go(func() {
			for deadline := time.Now().Add(30 * time.Second); len(acknowledged) < cap(acknowledged) && time.Now().Before(deadline); {
				m, ok := c.dequeue(q.ID)
				if !ok {
					continue
				}
				if c.acknowledge(q.ID, m) == http.StatusNoContent {
					acknowledged <- m.ID
				}
			}
		})
	}
	wg.Wait()
	<-held
	close(acknowledged)
	seen := map[string]bool{}
	for id := range acknowledged {
		is.True(!seen[id]) // no message acknowledged twice
		seen[id] = true
	}
	is.Equal(len(seen), 4*perProducer) // every message delivered and acknowledged
	leading, following := clients[0].scrapeMetrics(""), clients[1].scrapeMetrics("")
	is.Equal(leading.Value("retsu_postgres_round_leader"), 1.0)            // the first leads
	is.Equal(following.Value("retsu_postgres_round_leader"), 0.0)          // the second does not
	is.True(following.Value("retsu_postgres_forwarded_batches_total") > 0) // and forwarded to it
	is.Equal(leading.Value("retsu_postgres_forwarded_batches_total"), 0.0) // which forwards nothing

	first.kill()

	is.Equal(roundLeader(t, pool, secondAddress), secondAddress) // the second takes the lease once it lapses
	c := clients[1]
	id := c.enqueue(q.ID, "after the leader died", "HIGH")
	m, ok := c.dequeue(q.ID)
	is.True(ok) // the survivor serves alone
	is.Equal(m.ID, id)
	is.Equal(c.acknowledge(q.ID, m), http.StatusNoContent)
}

// holdRoundLock holds the lock of round slot 0 of the schema of url for d, as another
// instance's round would (adapters/postgres/queries.go, lockRoundSlot), and returns once it
// is held; done is closed when it is released.
func holdRoundLock(t *testing.T, url string, d time.Duration) (done chan struct{}) {
	t.Helper()
	return holdFor(t, url, d, "SELECT pg_advisory_xact_lock(x'72657473'::int4, hashtext(current_schema() || '/0'))")
}
