package postgres

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Round forwarding. Instances that take turns on a round lock (gate.go) each carry only their
// own requests, and each request waits for the other instances' turns as well as its own: in
// a closed loop of clients, three instances ran 1.3 times the commits per message of one
// (docs/performance.md). With peers configured, one instance, the round leader, carries the
// requests of the others while their rounds contend: a follower sends them to the leader,
// whose coalescer takes them with its own into its next round, and answers each. While it
// carries forwarded batches (one in the last sampleInterval), the leader's slot takes the
// round lock before it takes its batch, as a contended slot does (gate.go): the batches that
// arrive during that round trip go with the round. So the rounds of all the instances are
// about as few and as large as one instance's.
//
// Forwarding changes where a round runs, never what it does: the leader's rounds take the
// slot's round lock as any round does, and any instance may still run rounds of its own. So
// two instances that both believe they lead (a lease that lapsed during a pause, say) cost
// commits, not correctness. A follower whose slot is calm sends its rounds at once, in one
// round trip to PostgreSQL, as without peers: a lone request on an idle database never
// pays the hop. While it forwards, one request per sampleInterval goes to a round of its
// own, which tells the slot when the contention ends.
//
// The leader is whoever holds the lease in round_leader, which every instance renews or
// claims each leaseRenewal; one that stops gives it up, one that dies lets it lapse within
// leaseLifetime, and another claims it. Followers reach the leader on one connection each
// (peerserver.go), which carries the batches in flight at once, as gob.

// PeerOptions turn on round forwarding between the instances on one database (see the
// comment at the top of forward.go).
type PeerOptions struct {
	// Advertise is the host:port at which the other instances reach this one's peer
	// listener (ServePeers).
	Advertise string
	// Token authenticates the instances to each other: every instance of a deployment has
	// the same, and ServePeers drops a connection that does not present it.
	Token string
	// Logger receives the changes of leader and the forwarding's failures; nil discards
	// them.
	Logger *slog.Logger
}

const (
	// leaseLifetime is how long a round leader's lease lasts unless it is renewed, and so
	// how long a dead leader's lease holds up the others' forwarding at most (their rounds
	// run here meanwhile).
	leaseLifetime = 3 * time.Second
	// leaseRenewal is how often each instance renews its lease, or claims a lapsed one.
	leaseRenewal = time.Second
	// sampleInterval: while a follower forwards, one request per interval goes to a round of
	// its own, under the round lock, whose wait tells whether the slot is contended still.
	sampleInterval = 50 * time.Millisecond
	// forwardsInFlight is how many batches a follower may have forwarded at once: its
	// requests wait for the leader's round, not for the answer to its previous batch.
	forwardsInFlight = 2
	// peerDialTimeout bounds the connection to the leader and its handshake.
	peerDialTimeout = time.Second
	// avoidLeader is how long a follower runs its rounds itself after the leader could not
	// be reached or failed a batch, whatever the lease says meanwhile: a leader whose address
	// does not answer costs one batch a peerDialTimeout per avoidLeader at most.
	avoidLeader = 5 * time.Second
	// maxForwardedOperations bounds the requests of one forwarded batch.
	maxForwardedOperations = 2 * maxRound
	// peerProtocol opens a connection to a peer listener, followed by wireVersion and the
	// token: instances that forward differently refuse each other, and their rounds run
	// where they arrive.
	peerProtocol = "RETSU-PEER/1"
)

// errNotForwarded says that the leader certainly took none of a batch: it runs here.
// errNotSent says that a batch was not written to the connection, which had failed before.
var (
	errNotForwarded = errors.New("postgres: not forwarded")
	errNotSent      = errors.New("postgres: not sent to the round leader")
)

// peers is the forwarding of a MessageStore: the lease, and the connection to the leader.
type peers struct {
	self  string
	token string
	log   *slog.Logger
	pool  *pgxpool.Pool
	// leader is the address of the leader to forward to: "" when this instance leads, none
	// is known, or the one known is avoided.
	leader atomic.Pointer[string]
	// avoided is the address of the leader that last failed, and avoidedUntil (nanoseconds
	// since the Unix epoch) the end of its avoidance; guarded by mu.
	avoided      string
	avoidedUntil int64
	// leading says whether this instance held the lease when it last read it.
	leading atomic.Bool
	// forwarded counts the batches the leader carried, for the metrics and the tests.
	forwarded atomic.Int64
	// carried is when this instance last took a forwarded batch, in nanoseconds since the
	// Unix epoch.
	carried atomic.Int64

	mu   sync.Mutex
	conn *peerConn // to the leader, once dialled; nil after it failed
	// server is this instance's peer listener (peerserver.go), while it serves.
	server peerServer

	stop func()
	done chan struct{}
	once sync.Once
}

func newPeers(pool *pgxpool.Pool, o PeerOptions) *peers {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &peers{self: o.Advertise, token: o.Token, log: log, pool: pool, done: make(chan struct{})}
	p.server.conns = map[net.Conn]struct{}{}
	none := ""
	p.leader.Store(&none)
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go p.renew(ctx)
	return p
}

// renew renews or claims the lease each leaseRenewal until ctx ends, then gives up the lease
// if it holds it, so that another instance claims it at once.
func (p *peers) renew(ctx context.Context) {
	defer close(p.done)
	ticker := time.NewTicker(leaseRenewal)
	defer ticker.Stop()
	last, lastRead := "", time.Time{}
	for {
		leader, err := p.claim(ctx)
		switch {
		case err == nil:
			lastRead = time.Now()
		case time.Since(lastRead) < leaseLifetime:
			// A read that failed (a slow or busy database) changes no lease: the leader read
			// last holds it still, at least until it would lapse unrenewed.
			leader = last
		}
		if leader != last {
			p.log.Info("round leader", "leader", leader, "self", leader == p.self)
			last = leader
		}
		p.leading.Store(leader == p.self)
		if leader == p.self || p.avoiding(leader) {
			leader = ""
		}
		p.leader.Store(&leader)
		select {
		case <-ctx.Done():
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, _ = p.pool.Exec(ctx, releaseRoundLeader, p.self)
			cancel()
			p.leading.Store(false)
			return
		case <-ticker.C:
		}
	}
}

// claim renews this instance's lease, or claims a lapsed one, and returns the leader's
// address, "" when there is none, or the error of a read that failed.
func (p *peers) claim(ctx context.Context) (string, error) {
	readCtx, cancel := context.WithTimeout(ctx, leaseRenewal)
	defer cancel()
	var leader string
	err := p.pool.QueryRow(readCtx, claimRoundLeader, p.self, leaseLifetime.Seconds()).Scan(&leader)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil && ctx.Err() == nil:
		p.log.Warn("could not read the round leader's lease", "error", err)
	}
	return leader, err
}

// leaderKnown reports whether there is a leader to forward to.
func (p *peers) leaderKnown() bool { return *p.leader.Load() != "" }

// avoid forgets leader for avoidLeader.
func (p *peers) avoid(leader string) {
	p.mu.Lock()
	p.avoided, p.avoidedUntil = leader, time.Now().Add(avoidLeader).UnixNano()
	p.mu.Unlock()
	none := ""
	if known := p.leader.Load(); *known == leader {
		p.leader.CompareAndSwap(known, &none)
	}
}

// avoiding reports whether leader is avoided still.
func (p *peers) avoiding(leader string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return leader == p.avoided && time.Now().UnixNano() < p.avoidedUntil
}

// close stops renewing the lease and gives it up, and closes the connection to the leader.
func (p *peers) close() {
	p.once.Do(func() {
		p.stop()
		<-p.done
		p.mu.Lock()
		if p.conn != nil {
			p.conn.fail(errors.New("closed"))
			p.conn = nil
		}
		p.mu.Unlock()
	})
}

// wireOperation is an operation as a follower forwards it.
type wireOperation struct {
	Kind     operationKind
	QueueID  domain.ID
	Enqueue  ports.EnqueueParams
	Dequeue  ports.DequeueParams
	Receipts []domain.Receipt
	Receipt  domain.Receipt
	Seconds  int32
}

// wireOutcome is an operation's outcome as the leader answers it.
type wireOutcome struct {
	Enqueued ports.Enqueued
	Dequeued ports.Dequeued
	Removed  []bool
	Held     bool
	// Refusal is the operation's own refusal (outcome.err), Failure its round's error.
	Refusal, Failure *wireError
}

// wireError is an error that crosses between instances: its code and its caller-safe
// message; the rest of it stays in the leader's log.
type wireError struct {
	Code    domain.Code
	Message string
}

// peerRequest is one forwarded batch; peerResponse answers the request of the same ID.
type peerRequest struct {
	ID         uint64
	Operations []wireOperation
	// Timeout is how long the follower waits for the answer from the moment it sent the
	// batch: the leader withdraws the requests that have not left by then.
	Timeout time.Duration
}

type peerResponse struct {
	ID uint64
	// Refused says that the leader took none of the batch (it is closing): it runs where it
	// came from.
	Refused  bool
	Outcomes []wireOutcome
}

// The conversions between operations and outcomes and their wire forms, each in one place.

func toWireOperation(op operation) wireOperation {
	return wireOperation{Kind: op.kind, QueueID: op.queueID, Enqueue: op.enqueue, Dequeue: op.dequeue,
		Receipts: op.receipts, Receipt: op.receipt, Seconds: op.seconds}
}

func (w wireOperation) operation() operation {
	return operation{kind: w.Kind, queueID: w.QueueID, enqueue: w.Enqueue, dequeue: w.Dequeue,
		receipts: w.Receipts, receipt: w.Receipt, seconds: w.Seconds}
}

// toWireOutcome is out, and failure the error of the round that carried it.
func toWireOutcome(out outcome, failure error) wireOutcome {
	return wireOutcome{Enqueued: out.enqueued, Dequeued: out.dequeued, Removed: out.removed, Held: out.held,
		Refusal: toWireError(out.err), Failure: toWireError(failure)}
}

func (w wireOutcome) outcome() outcome {
	return outcome{enqueued: w.Enqueued, dequeued: w.Dequeued, removed: w.Removed, held: w.Held,
		err: w.Refusal.err(), failed: w.Failure.err()}
}

func toWireError(err error) *wireError {
	if err == nil {
		return nil
	}
	return &wireError{Code: domain.ErrorCode(err), Message: domain.ErrorMessage(err)}
}

func (e *wireError) err() error {
	if e == nil {
		return nil
	}
	return &domain.Error{Code: e.Code, Message: e.Message}
}

// runForwarded is the forwards coalescer's run: it forwards batch to the leader and, when the
// leader certainly took none of it, carries it out in this instance's rounds.
func (s *MessageStore) runForwarded(ctx context.Context, _ int, batch []operation, outcomes []outcome) error {
	err := s.peers.forward(ctx, batch, outcomes)
	if !errors.Is(err, errNotForwarded) {
		return err
	}
	// A round's time of its own: the forward's may be spent on a connection that failed.
	ctx, cancel := context.WithTimeout(context.Background(), roundTimeout)
	defer cancel()
	answers, errs, err := s.rounds.doAll(ctx, batch)
	if err != nil {
		return err
	}
	for i := range answers {
		outcomes[i] = answers[i]
		if errs[i] != nil {
			outcomes[i].failed = errs[i]
		}
	}
	return nil
}

// forward sends batch to the leader and fills outcomes with its answers. It returns
// errNotForwarded when the leader certainly took none of it (none known, no connection, a
// refusal). Once the batch may have reached the leader, a failure is the batch's error, as
// a round's whose commit got no answer.
func (p *peers) forward(ctx context.Context, batch []operation, outcomes []outcome) error {
	leader := *p.leader.Load()
	if leader == "" {
		return errNotForwarded
	}
	conn, err := p.connect(ctx, leader)
	if err != nil {
		p.avoid(leader)
		p.log.Warn("round leader unreachable: rounds run here", "leader", leader, "error", err)
		return errNotForwarded
	}
	wire := make([]wireOperation, len(batch))
	for i, op := range batch {
		wire[i] = toWireOperation(op)
	}
	response, err := conn.call(ctx, wire)
	switch {
	case errors.Is(err, errNotSent):
		p.avoid(leader)
		return errNotForwarded
	case err != nil:
		p.avoid(leader)
		p.log.Warn("forwarded batch got no answer", "leader", leader, "error", err)
		return domain.Unavailable(fmt.Errorf("postgres: forward round: %w", err))
	case response.Refused:
		p.avoid(leader)
		return errNotForwarded
	case len(response.Outcomes) != len(batch):
		p.avoid(leader)
		return domain.Unavailable(fmt.Errorf("postgres: forward round: %d answers to %d requests", len(response.Outcomes), len(batch)))
	}
	for i, a := range response.Outcomes {
		outcomes[i] = a.outcome()
	}
	p.forwarded.Add(1)
	return nil
}

// connect returns the connection to leader, dialling it when there is none.
func (p *peers) connect(ctx context.Context, leader string) (*peerConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.conn; c != nil {
		if c.address == leader && c.healthy() {
			return c, nil
		}
		go c.retire()
		p.conn = nil
	}
	c, err := dialPeer(ctx, leader, p.token)
	if err != nil {
		return nil, err
	}
	p.conn = c
	return c, nil
}

// peerConn is a follower's connection to the leader: requests go out one after the other,
// and a reader goroutine hands each response to its caller.
type peerConn struct {
	address string
	conn    net.Conn

	wmu sync.Mutex // orders the writes
	w   *bufio.Writer
	enc *gob.Encoder

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan peerResponse
	err     error // once the connection failed
}

// dialPeer connects to the peer listener at address and opens the conversation.
func dialPeer(ctx context.Context, address, token string) (*peerConn, error) {
	ctx, cancel := context.WithTimeout(ctx, peerDialTimeout)
	defer cancel()
	nc, err := (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	r := bufio.NewReader(nc)
	if _, err := fmt.Fprintf(nc, "%s %s %s\n", peerProtocol, wireVersion(), token); err != nil {
		nc.Close()
		return nil, err
	}
	welcome, err := bufio.NewReaderSize(io.LimitReader(r, 16), 16).ReadString('\n')
	if err != nil || welcome != "OK\n" {
		nc.Close()
		if err == nil {
			err = errors.New("the peer refused the connection (another version, or another token)")
		}
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	w := bufio.NewWriter(nc)
	c := &peerConn{address: address, conn: nc, w: w, enc: gob.NewEncoder(w), pending: map[uint64]chan peerResponse{}}
	go c.read(gob.NewDecoder(r))
	return c, nil
}

// call sends one batch and returns its response.
func (c *peerConn) call(ctx context.Context, operations []wireOperation) (peerResponse, error) {
	answer := make(chan peerResponse, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return peerResponse{}, fmt.Errorf("%w: %w", errNotSent, c.err)
	}
	c.next++
	id := c.next
	c.pending[id] = answer
	c.mu.Unlock()

	request := peerRequest{ID: id, Operations: operations}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(roundTimeout)
	}
	request.Timeout = time.Until(deadline)
	c.wmu.Lock()
	_ = c.conn.SetWriteDeadline(deadline) // a leader that stopped reading must not hold the writer
	err := c.enc.Encode(request)
	if err == nil {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
	}
	select {
	case response, ok := <-answer:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return peerResponse{}, err
		}
		return response, nil
	case <-ctx.Done():
		// A leader that does not answer in a round's time is not to be waited for again: the
		// connection goes, and the next batch dials anew, or runs here while it is avoided.
		c.fail(ctx.Err())
		return peerResponse{}, ctx.Err()
	}
}

// read hands each response to its caller until the connection fails.
func (c *peerConn) read(dec *gob.Decoder) {
	for {
		var response peerResponse
		if err := dec.Decode(&response); err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		answer, ok := c.pending[response.ID]
		delete(c.pending, response.ID)
		c.mu.Unlock()
		if ok {
			answer <- response
		}
	}
}

// retire closes the connection once the calls in flight on it are answered, or after a
// round's time: the leader changed, and its batches on the way are its to answer.
func (c *peerConn) retire() {
	for deadline := time.Now().Add(roundTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		idle := len(c.pending) == 0 || c.err != nil
		c.mu.Unlock()
		if idle {
			break
		}
	}
	c.fail(errors.New("retired: the leader changed"))
}

// healthy reports whether the connection has not failed.
func (c *peerConn) healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil
}

// fail closes the connection, once, and ends the wait of every call in flight with err.
func (c *peerConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.conn.Close()
	for id, answer := range c.pending {
		close(answer)
		delete(c.pending, id)
	}
}

// wireVersion names the wire format in the handshake: a hash of the types that cross
// (their fields' names and types, down to those that encode themselves) and of the
// operations' numbers, so that instances whose builds encode a batch differently refuse each
// other, and their rounds run where they arrive, instead of reading each other's batches
// wrong.
// It is worked out at the first peer connection, not at every process's start.
var wireVersion = sync.OnceValue(func() string {
	return wireFingerprint(reflect.TypeFor[peerRequest](), reflect.TypeFor[peerResponse]())
})

func wireFingerprint(types ...reflect.Type) string {
	h := sha256.New()
	seen := map[reflect.Type]bool{}
	encodesItself := func(t reflect.Type) bool {
		return t.Implements(reflect.TypeFor[gob.GobEncoder]()) || t.Implements(reflect.TypeFor[encoding.BinaryMarshaler]())
	}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		fmt.Fprintf(h, "%s/%s;", t.String(), t.Kind())
		if seen[t] || encodesItself(t) {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				fmt.Fprintf(h, "%s ", t.Field(i).Name)
				walk(t.Field(i).Type)
			}
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		}
	}
	for _, t := range types {
		walk(t)
	}
	fmt.Fprintf(h, "enqueue=%d dequeue=%d acknowledge=%d extend=%d release=%d undeliver=%d", enqueueOperation, dequeueOperation,
		acknowledgeOperation, extendOperation, releaseOperation, undeliverOperation)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
