package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"
)

func TestPrepareRound_Failed_BusyRoundsLeaveAtOnceForAWhile(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	// A pool whose database refuses: nothing listens on port 1.
	pool, err := pgxpool.New(context.Background(), "postgres://retsu@127.0.0.1:1/retsu?connect_timeout=2")
	is.NoErr(err)
	defer pool.Close()
	s := &MessageStore{pool: pool, gates: newRoundGates(1)}
	g := &s.gates[0]

	is.Equal(s.prepareRound(0, true), nil) // a busy slot tried to prepare, and failed
	failed := g.failed
	is.True(!failed.IsZero())
	is.Equal(s.prepareRound(0, true), nil) // the next busy round did not try again
	is.Equal(g.failed, failed)

	g.failed = time.Now().Add(-unpreparedFor) // a while later, it does
	is.Equal(s.prepareRound(0, true), nil)
	is.True(g.failed.After(failed))
	is.True(!g.contended()) // and a failure leaves the slot calm
}
