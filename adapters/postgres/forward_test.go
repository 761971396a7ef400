package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
	"github.com/retsu/retsu/ports/porttest"
)

// peerToken is the token of the tests' instances.
const peerToken = "peer-token-of-the-tests"

// peerInstance is a MessageStore with peers on an isolated schema, serving its peer
// listener.
type peerInstance struct {
	store   *postgres.MessageStore
	address string
	served  chan error
}

// newPeer starts an instance on pool whose peer listener is a fresh local port, with token.
func newPeer(t *testing.T, p *pgxpool.Pool, token string) *peerInstance {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := listener.Addr().String()
	// Its log is the test's, which says why a round ran where it did when a test fails.
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := postgres.NewMessageStore(p, postgres.MessageStoreOptions{Peers: &postgres.PeerOptions{Advertise: address, Token: token, Logger: log}})
	instance := &peerInstance{store: store, address: address, served: make(chan error, 1)}
	go func() { instance.served <- store.ServePeers(listener) }()
	t.Cleanup(func() {
		store.Close()
		if err := <-instance.served; err != nil {
			t.Errorf("ServePeers: %v", err)
		}
	})
	return instance
}

// awaitCondition waits up to ten seconds for ok, the lease's renewals being a second apart.
func awaitCondition(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
	}
}

// newLeaderAndFollower starts a leader and then a follower that knows it, on a schema of
// their own (the lease is the schema's).
func newLeaderAndFollower(t *testing.T) (s *isolated, leader, follower *peerInstance) {
	t.Helper()
	s = newIsolated(t)
	leader = newPeer(t, s.pool, peerToken)
	awaitCondition(t, "the first instance leads", func() bool { return postgres.Leads(leader.store) })
	follower = newPeer(t, s.pool, peerToken)
	awaitCondition(t, "the second instance knows the leader", func() bool { return postgres.KnowsLeader(follower.store) })
	return s, leader, follower
}

// Every request of the message store's contract, forwarded: the leader carries them all, and
// the contract holds as on one instance.
func TestForwarding_EveryRequestCarriedByTheLeader_KeepsTheContract(t *testing.T) {
	t.Parallel()
	s, leader, follower := newLeaderAndFollower(t)
	postgres.ForwardAlways(follower.store)
	queues := postgres.NewQueueStore(s.pool)

	t.Run("contract", func(t *testing.T) {
		porttest.TestMessageStore(t, func(*testing.T) porttest.MessageHarness {
			return porttest.MessageHarness{Store: follower.store, DeadLetters: follower.store, Cleaning: follower.store,
				Wakeups: follower.store, Queues: queues, Wait: time.Sleep}
		})
	})

	is := is.New(t)
	is.True(postgres.Forwarded(follower.store) > 0)        // the follower forwarded its requests
	is.Equal(postgres.RoundsRun(follower.store), int64(0)) // and ran no round of its own
	is.True(postgres.RoundsRun(leader.store) > 0)          // the leader ran them
}

// An operation's refusal crosses with its code: an enqueue to a deleted queue fails as it
// would on the leader.
func TestForwarding_Refusal_KeepsItsCode(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _, follower := newLeaderAndFollower(t)
	postgres.ForwardAlways(follower.store)
	queueID := newQueueOn(t, s.pool)
	is.NoErr(postgres.NewQueueStore(s.pool).DeleteQueue(context.Background(), queueID))

	err := enqueueOne(follower.store, domain.Enqueue{QueueID: queueID, MessageID: newID(), Priority: domain.PriorityHigh,
		Payload: "x", TTL: time.Hour, VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 3})

	is.True(errors.Is(err, domain.ErrQueueNotFound))       // queue_not_found, from the leader
	is.Equal(postgres.Forwarded(follower.store), int64(1)) // carried there
	is.Equal(postgres.RoundsRun(follower.store), int64(0)) // not here
}

// A follower whose slot is calm sends its rounds itself: a lone request does not pay the hop.
func TestForwarding_CalmSlot_RunsItsRoundsItself(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _, follower := newLeaderAndFollower(t)
	queueID := newQueueOn(t, s.pool)

	for range 5 {
		_, err := follower.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})
		is.NoErr(err)
	}

	is.Equal(postgres.Forwarded(follower.store), int64(0)) // nothing forwarded
	is.Equal(postgres.RoundsRun(follower.store), int64(5)) // every round run here
}

// A follower whose round waited for the round lock (another instance's round held it)
// forwards its next requests, and one per sample interval still runs here.
func TestForwarding_ContendedSlot_ForwardsToTheLeader(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _, follower := newLeaderAndFollower(t)
	postgres.SampleEvery(follower.store, time.Hour) // the round that finds the contention is the only sample
	queueID := newQueueOn(t, s.pool)
	dequeue := func() {
		_, err := follower.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})
		is.NoErr(err)
	}

	held := s.holdRoundLock(t, 50*time.Millisecond) // the round lock, as another instance's round
	dequeue()                                       // waits for it: the slot is contended
	<-held
	for range 3 {
		dequeue()
	}

	is.Equal(postgres.RoundsRun(follower.store), int64(1)) // the first ran here
	is.Equal(postgres.Forwarded(follower.store), int64(3)) // the others went to the leader
}

// A leader that cannot be reached costs no request: the follower runs the round itself.
func TestForwarding_LeaderUnreachable_RoundRunsHere(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	address := closed.Addr().String()
	closed.Close()
	follower := followerOf(t, s, address)
	queueID := newQueueOn(t, s.pool)

	_, err = follower.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})

	is.NoErr(err)                                          // answered
	is.Equal(postgres.Forwarded(follower.store), int64(0)) // not by the leader
	is.Equal(postgres.RoundsRun(follower.store), int64(1)) // by a round here
	is.True(!postgres.KnowsLeader(follower.store))         // which it avoids for a while
}

// A follower with another token is refused before it sends anything, and runs its rounds
// itself.
func TestForwarding_WrongToken_RefusedAndRunsHere(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	leader := newPeer(t, s.pool, peerToken)
	awaitCondition(t, "the first instance leads", func() bool { return postgres.Leads(leader.store) })
	follower := newPeer(t, s.pool, "another-token-entirely")
	awaitCondition(t, "the follower knows the leader", func() bool { return postgres.KnowsLeader(follower.store) })
	postgres.ForwardAlways(follower.store)
	queueID := newQueueOn(t, s.pool)

	_, err := follower.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})

	is.NoErr(err)                                          // answered
	is.Equal(postgres.Forwarded(follower.store), int64(0)) // not by the leader, which refused it
	is.Equal(postgres.RoundsRun(leader.store), int64(0))   // and ran nothing for it
	is.Equal(postgres.RoundsRun(follower.store), int64(1)) // by a round here
}

// A leader that closes gives up its lease, and another instance takes it.
func TestLease_LeaderCloses_AnotherInstanceLeads(t *testing.T) {
	t.Parallel()
	s, leader, follower := newLeaderAndFollower(t)

	leader.store.Close()

	awaitCondition(t, "the follower leads", func() bool { return postgres.Leads(follower.store) })
	var address string
	err := s.pool.QueryRow(context.Background(), "SELECT address FROM round_leader").Scan(&address)
	is.New(t).NoErr(err)
	is.New(t).Equal(address, follower.address) // the lease names the new leader
}

// newQueueOn creates a queue on pool and returns its ID.
func newQueueOn(t *testing.T, p *pgxpool.Pool) domain.ID {
	t.Helper()
	id := newID()
	q := domain.Queue{ID: id, Name: "forwarding-" + id.String(), Settings: domain.Settings{
		VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 3, DefaultMessageTTL: time.Hour}}
	if err := postgres.NewQueueStore(p).CreateQueue(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	return id
}

// holdRoundLock holds round slot 0's lock for d, as another instance's round would, and
// returns once it is held; done is closed when it is released.
func (s *isolated) holdRoundLock(t *testing.T, d time.Duration) (done chan struct{}) {
	t.Helper()
	return s.holdFor(t, d, postgres.LockRoundSlot, postgres.AdvisoryLockClass, int32(0))
}

// A leader that dies with a batch, after it may have carried it out, leaves its outcome
// unknown: the follower's requests fail service_unavailable, as a round whose commit got no
// answer, and the follower avoids that leader.
func TestForwarding_LeaderDiesWithTheBatch_FailsUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newIsolated(t)
	fake, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer fake.Close()
	go func() { // takes the connection and a batch, then dies
		conn, err := fake.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4096)
		_, _ = conn.Read(buf)
		_, _ = conn.Write([]byte("OK\n"))
		_, _ = conn.Read(buf)
		conn.Close()
	}()
	follower := followerOf(t, s, fake.Addr().String())
	queueID := newQueueOn(t, s.pool)

	_, err = follower.store.Dequeue(context.Background(), ports.DequeueParams{QueueID: queueID, Max: 1})

	is.Equal(domain.ErrorCode(err), domain.CodeUnavailable) // unknown outcome: service_unavailable
	is.Equal(postgres.RoundsRun(follower.store), int64(0))  // not run here as well
	is.True(!postgres.KnowsLeader(follower.store))          // and that leader is avoided
}

// A peer connection opens with the protocol, the wire format's version and the token; the
// leader answers OK only when all three are its own.
func TestServePeers_Handshake_RefusesAnotherVersionOrToken(t *testing.T) {
	t.Parallel()
	s := newIsolated(t)
	leader := newPeer(t, s.pool, peerToken)
	for line, want := range map[string]string{
		"RETSU-PEER/1 " + postgres.WireVersion + " " + peerToken:  "OK\n",
		"RETSU-PEER/1 0123456789abcdef " + peerToken:              "REFUSED\n", // another build's format
		"RETSU-PEER/1 " + postgres.WireVersion + " another-token": "REFUSED\n",
		"RETSU-PEER/2 " + postgres.WireVersion + " " + peerToken:  "REFUSED\n",
		"GET / HTTP/1.1": "REFUSED\n",
	} {
		t.Run(line[:min(len(line), 24)], func(t *testing.T) {
			is := is.New(t)
			conn, err := net.DialTimeout("tcp", leader.address, time.Second)
			is.NoErr(err)
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Write([]byte(line + "\n"))
			is.NoErr(err)
			answer, err := bufio.NewReader(conn).ReadString('\n')
			is.NoErr(err)
			is.Equal(answer, want)
		})
	}
}

// followerOf starts an instance that forwards every request to the leader at address, which
// the lease names for an hour.
func followerOf(t *testing.T, s *isolated, address string) *peerInstance {
	t.Helper()
	_, err := s.pool.Exec(context.Background(),
		"INSERT INTO round_leader (address, expires_at) VALUES ($1, clock_timestamp() + interval '1 hour')", address)
	if err != nil {
		t.Fatal(err)
	}
	follower := newPeer(t, s.pool, peerToken)
	awaitCondition(t, "the follower knows the leader", func() bool { return postgres.KnowsLeader(follower.store) })
	postgres.ForwardAlways(follower.store)
	return follower
}

// testLog writes to the test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// A read of the lease that fails (here: it waits past its timeout for a lock on the table)
// changes no lease: the follower keeps forwarding to the leader it read last, which leads
// still, instead of running its rounds itself until a read succeeds again.
func TestLease_ReadFails_TheLeaderReadLastIsKept(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, leader, follower := newLeaderAndFollower(t)

	held := s.holdFor(t, 2500*time.Millisecond, "LOCK TABLE round_leader IN ACCESS EXCLUSIVE MODE")
	forgotten := false
	for waiting := true; waiting; {
		select {
		case <-held:
			waiting = false
		case <-time.After(10 * time.Millisecond):
			forgotten = forgotten || !postgres.KnowsLeader(follower.store) || !postgres.Leads(leader.store)
		}
	}

	is.True(!forgotten) // while the reads failed, the follower knew its leader and the leader led
}
