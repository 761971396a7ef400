package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/ports"
	"github.com/retsu/retsu/ports/porttest"
)

// pool is connected to the migrated test database for the whole package.
var pool *pgxpool.Pool

// TestMain migrates the database named by RETSU_TEST_DATABASE_URL and fails when it is
// missing: these tests are the proof that the SQL keeps the contract, so they never skip.
func TestMain(m *testing.M) {
	url := os.Getenv("RETSU_TEST_DATABASE_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "RETSU_TEST_DATABASE_URL is not set: start the services with `make test` (or scripts/services.sh up and its env)")
		os.Exit(1)
	}
	if err := migrateUp(url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var err error
	pool, err = postgres.OpenPool(context.Background(), url, postgres.PoolOptions{MaxConns: 32})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pool.Close()
	os.Exit(code)
}

func migrateUp(url string) error {
	migrator, err := postgres.NewMigrator(url)
	if err != nil {
		return err
	}
	defer migrator.Close()
	return migrator.Up()
}

func TestQueueStore(t *testing.T) {
	t.Parallel()
	store := postgres.NewQueueStore(pool)
	porttest.TestQueueStore(t, func(*testing.T) ports.QueueStore { return store })
}

// newHarness returns the package's message store, with the QueueStore on the same database;
// each test works in queues of its own.
func newHarness(t *testing.T) func(*testing.T) porttest.MessageHarness {
	store := newMessageStore(t, postgres.MessageStoreOptions{})
	queues := postgres.NewQueueStore(pool)
	return func(*testing.T) porttest.MessageHarness {
		return porttest.MessageHarness{
			Store: store, DeadLetters: store, Cleaning: store, Wakeups: store, Queues: queues, Wait: time.Sleep,
		}
	}
}

func TestMessageStore(t *testing.T) {
	t.Parallel()
	porttest.TestMessageStore(t, newHarness(t))
}

func TestDeadLetterStore(t *testing.T) {
	t.Parallel()
	porttest.TestDeadLetterStore(t, newHarness(t))
}

func TestCleaning(t *testing.T) {
	t.Parallel()
	porttest.TestCleaning(t, newHarness(t))
}

func TestCleanerPasses(t *testing.T) {
	t.Parallel()
	porttest.TestCleanerPasses(t, newHarness(t))
}

func TestWakeups(t *testing.T) {
	t.Parallel()
	porttest.TestWakeups(t, newHarness(t))
}

// The settings every statement is written for hold on each connection of the pool, the
// first and the ones opened later alike.
func TestOpenPool_ConnectionsRunWithIndexOnlyGenericPlans(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	conns := make([]*pgxpool.Conn, 3)
	for i := range conns {
		c, err := pool.Acquire(ctx)
		is.NoErr(err)
		defer c.Release()
		conns[i] = c
	}
	for _, c := range conns {
		var seqscan, sort, jit, planCache string
		err := c.QueryRow(ctx, "SELECT current_setting('enable_seqscan'), current_setting('enable_sort'), current_setting('jit'), current_setting('plan_cache_mode')").Scan(&seqscan, &sort, &jit, &planCache)
		is.NoErr(err)
		is.Equal(seqscan, "off")
		is.Equal(sort, "off")
		is.Equal(jit, "off")
		is.Equal(planCache, "force_generic_plan")
	}
}
