package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/domain"
)

// PoolOptions bound the connection pool.
type PoolOptions struct {
	// MaxConns caps the connections the pool opens.
	MaxConns int32
	// ConnectTimeout bounds each attempt to open a connection.
	ConnectTimeout time.Duration
}

// ErrMalformedURL reports a database URL that cannot be parsed. It never quotes the URL,
// which may hold a password.
var ErrMalformedURL = errors.New("postgres: the database URL is malformed")

// OpenPool returns a pool of connections to the database at url, once one connection has
// answered. Returns a service_unavailable error when the database cannot be reached.
//
// Its connections run with enable_seqscan off. Every statement of the adapter is written
// for an index, and the planner's statistics of a queue table are often far from the truth
// (the table may grow from empty to millions of rows between two automatic ANALYZEs): a
// plan cached while the table was small must not scan it sequentially once it is large.
//
// And with enable_sort off, for the same reason: each statement reads an index in the order
// it needs and stops at its limit, and from statistics that estimate one row for a queue
// (an ANALYZE taken while a backlog was being inserted counts only the rows committed then)
// the planner took the primary key and a sort instead, so that a claim, or the expired-
// message cleaner, read every message of the queue on each run until the next ANALYZE.
// Where no index gives the order (the claim's last sort of the messages it took), a sort is
// still made: the setting only stops one from winning over an index that gives the order.
//
// And with jit off: a plan that still holds a disabled node (that sort) carries its 10^10
// cost, far past jit_above_cost, and PostgreSQL compiled the enqueue's statement, a
// millisecond's work, for close to a second on each execution. Statements that read a few
// rows by index never gain from compilation.
//
// They also run with plan_cache_mode force_generic_plan: one plan suits every parameter of
// these statements, and left to choose, PostgreSQL planned the claim and the
// acknowledgement anew on up to every execution of a prepared statement, which cost more
// CPU than running them (docs/performance.md has the measurement).
func OpenPool(ctx context.Context, url string, o PoolOptions) (*pgxpool.Pool, error) {
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error may quote the URL, password included: keep only its kind.
		return nil, ErrMalformedURL
	}
	if o.MaxConns > 0 {
		config.MaxConns = o.MaxConns
	}
	config.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	config.ConnConfig.RuntimeParams["enable_sort"] = "off"
	config.ConnConfig.RuntimeParams["jit"] = "off"
	config.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	if o.ConnectTimeout > 0 {
		config.ConnConfig.ConnectTimeout = o.ConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", translate(err))
	}
	return pool, nil
}

// translate turns a driver error into a service_unavailable error when the database could
// not be reached or dropped the connection, since the same request may succeed when it is
// retried. Other errors are returned unchanged, to be wrapped as internal errors.
func translate(err error) error {
	if err == nil || !unreachable(err) {
		return err
	}
	return domain.Unavailable(err)
}

// unreachable reports whether err means that the database is down, restarting, refusing
// connections or lost the connection.
func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code[:2] == "08": // connection_exception
			return true
		case pgErr.Code == "57P01", // admin_shutdown, also pg_terminate_backend
			pgErr.Code == "57P02", // crash_shutdown
			pgErr.Code == "57P03", // cannot_connect_now: starting up or shutting down
			pgErr.Code == "53300": // too_many_connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) ||
		errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) ||
		pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err)
}

// isTransient reports whether err is a deadlock_detected or a serialization_failure: the
// transaction was rolled back for a collision with another, and running it again may
// succeed.
func isTransient(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// isLockNotAvailable reports whether err is a lock_not_available: a NOWAIT lock met a row
// another transaction holds.
func isLockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// isUniqueViolation reports whether err is a unique_violation of the named constraint.
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == constraint
}

// redact hides the password of databaseURL in err's text, which some drivers quote.
func redact(err error, databaseURL string) error {
	u, parseErr := url.Parse(databaseURL)
	if parseErr != nil {
		return err
	}
	password, ok := u.User.Password()
	if !ok || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return &redactedError{text: strings.ReplaceAll(err.Error(), password, "xxxxx"), err: err}
}

type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
