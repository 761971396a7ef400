package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Rounds of several instances (see lockRoundSlot) take turns on their slot's round lock. A
// round that is sent at once, as on a lone idle instance, then waits for the lock in the
// database with the requests it had when it left, while those that arrive meanwhile wait for
// the next round: with three instances under the load one instance carries, each round
// carries about a third as many requests, and PostgreSQL pays about three times the commits
// per message.
//
// So a slot whose round waited for its lock (other instances' rounds ran) takes the lock first
// and only then takes its batch, the requests that arrived during the wait included
// (prepareRound): the instances still take turns, but each turn carries what a lone
// instance's round would, at the price of one more round trip per round. A slot whose lock
// was free calmWaits times in a row goes back to sending at once.
//
// A busy slot does the same, on a lone instance too: when requests waited at the end of the
// slot's previous round, the database is what they wait for, and the next round takes its
// lock first, so that the requests that arrive during that round trip go with it. This is
// the spirit of PostgreSQL's commit_delay without a timer: the rounds grow by what arrives in
// one round trip, and only while rounds run back to back. The first round after the slot was
// idle leaves at once, so an idle server answers a lone request in one round trip.

// contendedWait is the wait for a round lock above which the slot's next round takes the
// lock before it takes its batch. An uncontended lock is granted in microseconds; any round
// of another instance holds it for longer than this.
const contendedWait = 250 * time.Microsecond

// calmWaits is how many short lock waits in a row make a contended slot send at once again:
// other instances' rounds come and go, and one lock that happened to be free says little.
const calmWaits = 8

// unpreparedFor is how long a slot whose preparation failed (no connection in time, a
// database that refused) sends its busy rounds at once: during an outage or with the pool
// used up, each busy round would otherwise wait twice, once to prepare and once to run.
const unpreparedFor = time.Second

// contended says whether the slot's rounds wait for other instances' (see waited): one of
// the reasons for which its next round takes its lock before its batch (prepareRound).
func (g *roundGate) contended() bool { return g.calm < calmWaits }

// waited records a wait of seconds for the slot's lock.
func (g *roundGate) waited(seconds float64) {
	if seconds > contendedWait.Seconds() {
		g.calm = 0
	} else {
		g.calm = min(g.calm+1, calmWaits)
	}
}

// newRoundGates returns the gates of n slots, calm: at first, rounds are sent at once.
func newRoundGates(n int) []roundGate {
	gates := make([]roundGate, n)
	for i := range gates {
		gates[i].calm = calmWaits
	}
	return gates
}

// roundGate is the state of one round slot between its rounds. Only the goroutine that holds
// the slot touches it (see coalescer.runSlot).
type roundGate struct {
	// calm counts the slot's lock waits in a row no longer than contendedWait, up to
	// calmWaits; below that the slot is contended.
	calm int
	// conn, between prepareRound and the round it prepared, holds an open transaction that
	// holds the slot's round lock.
	conn *pgxpool.Conn
	// failed is when the slot's last preparation failed.
	failed time.Time
}

// failedToPrepare records a preparation that failed: the slot is calm again, and its busy
// rounds leave at once for unpreparedFor.
func (g *roundGate) failedToPrepare() {
	g.calm = calmWaits
	g.failed = time.Now()
}

// prepareRound is the coalescer's prepare (see the comment at the top of this file): for a
// busy slot, a contended one, or any slot of a round leader that carries forwarded batches
// (forward.go), it opens a transaction on a connection of its own and waits in it for the
// slot's lock, and returns the undo that rolls it back. For any other slot, or when the
// database fails it, it does nothing: the round then takes the lock itself, and meets any
// error of the database as it would have.
func (s *MessageStore) prepareRound(slot int, busy bool) (undo func()) {
	g := &s.gates[slot]
	busy = busy && time.Since(g.failed) >= unpreparedFor
	if !busy && !g.contended() && !s.carrying() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), roundTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		g.failedToPrepare()
		return nil
	}
	// BEGIN and the lock in one round trip, as prepared statements: the transaction stays
	// open after the batch's end.
	results := conn.SendBatch(ctx, &pgx.Batch{QueuedQueries: []*pgx.QueuedQuery{
		{SQL: "BEGIN"}, {SQL: lockRoundSlot, Arguments: []any{advisoryLockClass, roundLockKey(slot)}}}})
	var wait float64
	_, err = results.Exec()
	if err == nil {
		err = results.QueryRow().Scan(&wait)
	}
	if closeErr := results.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		conn.Release() // with its transaction still open, the pool closes the connection
		g.failedToPrepare()
		return nil
	}
	g.waited(wait)
	g.conn = conn
	return func() {
		g.conn = nil
		releaseRolledBack(conn)
	}
}

// releaseRolledBack rolls back the transaction open on conn, if one is, and gives conn back
// to the pool, which closes it when the rollback failed.
func releaseRolledBack(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}
