package test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/test/history"
)

// chaosScale sizes the chaos scenarios. RETSU_CHAOS_SCALE=short (the default, which `make
// test` runs) keeps each under two minutes; long (`make chaos`) gives the figures of
// docs/reliability.md.
type chaosScale struct {
	name string
	// drain sizes the drain scenario's workload, and chaosDrain the workload of the
	// scenarios that break something.
	drain, chaosDrain drainSize
	// The worker loops of the scenarios of Part 2, and the drain of the one with three
	// instances.
	batches, redrives, keyed loopSize
	instances                drainSize
	// deadline bounds each scenario.
	deadline time.Duration
	// How often each scenario strikes.
	kills, postgresStops, redisCycles, shutdowns int
}

func chaosScaleOf(t *testing.T) chaosScale {
	t.Helper()
	switch scale := os.Getenv("RETSU_CHAOS_SCALE"); scale {
	case "", "short":
		return chaosScale{name: "short",
			drain:      drainSize{producers: 4, perProducer: 2500, consumers: 8},
			chaosDrain: drainSize{producers: 4, perProducer: 1000, consumers: 8},
			batches:    loopSize{producers: 4, perProducer: 600, consumers: 8, batch: 20, pause: 100 * time.Millisecond},
			redrives:   loopSize{producers: 4, perProducer: 300, consumers: 8, batch: 10, pause: 100 * time.Millisecond},
			keyed:      loopSize{producers: 4, perProducer: 400, consumers: 8, batch: 10, mixed: true, pause: 30 * time.Millisecond},
			instances:  drainSize{producers: 4, perProducer: 300, consumers: 8},
			deadline:   110 * time.Second, kills: 3, postgresStops: 1, redisCycles: 1, shutdowns: 2}
	case "long":
		return chaosScale{name: "long",
			drain:      drainSize{producers: 4, perProducer: 10000, consumers: 8},
			chaosDrain: drainSize{producers: 4, perProducer: 10000, consumers: 8},
			batches:    loopSize{producers: 4, perProducer: 10000, consumers: 8, batch: 20, pause: 100 * time.Millisecond},
			redrives:   loopSize{producers: 4, perProducer: 5000, consumers: 8, batch: 10, pause: 100 * time.Millisecond},
			keyed:      loopSize{producers: 4, perProducer: 6000, consumers: 8, batch: 10, mixed: true, pause: 20 * time.Millisecond},
			instances:  drainSize{producers: 4, perProducer: 5000, consumers: 8},
			deadline:   10 * time.Minute, kills: 10, postgresStops: 3, redisCycles: 3, shutdowns: 5}
	default:
		t.Fatalf("RETSU_CHAOS_SCALE must be short or long, not %q", scale)
		return chaosScale{}
	}
}

// chaosEnv is what the scenarios share: a PostgreSQL cluster and a Retsu binary built
// without the race detector, which would make the process too slow to load. The scenarios
// run one after another, each on a database, a Redis and a Retsu process of its own.
type chaosEnv struct {
	scale     chaosScale
	binary    string
	pg        *pgCluster
	databases int
}

// TestChaos runs the chaos scenarios of docs/reliability.md. Each checks the history of its
// clients with package history: nothing lost, nothing unexpected, no overlapping leases, no
// stale acknowledgement that removes a newer delivery, exhausted messages in one place. It
// does not run in parallel: the scenarios stop the cluster they share, and load that other
// tests added on this 2-core machine would only slow them down.
func TestChaos(t *testing.T) {
	env := &chaosEnv{scale: chaosScaleOf(t), binary: buildPlainBinary(t), pg: startPGCluster(t)}
	t.Logf("chaos scale %s: drains of %v; under chaos, %v; worker loops of %v (batches and leases), %v (redrive), %v (idempotent producers); "+
		"on three instances, %v", env.scale.name, env.scale.drain, env.scale.chaosDrain, env.scale.batches, env.scale.redrives, env.scale.keyed, env.scale.instances)
	t.Run("Drain_CrashingConsumers_NothingLostOrDoubled", env.testDrain)
	t.Run("KilledAndRestarted_No201Lost", env.testKilled)
	t.Run("SQSWorkers_KilledAndRestarted_NothingLost", env.testSQSWorker)
	t.Run("PostgreSQLCrashed_503ThenRecoversWithoutRestart", env.testPostgresCrashed)
	t.Run("BackendsTerminatedEvery200ms_NothingLost", env.testBackendsTerminated)
	t.Run("RedisStoppedAndFlushed_RequestsKeepSucceeding", env.testRedisLost)
	t.Run("SIGTERM_DrainsRequestsInFlight", env.testGracefulShutdown)
	t.Run("SlowClients_ClosedByTimeouts_OthersServedPromptly", env.testSlowClients)
	t.Run("Checker_CatchesInjectedFaults", env.testInjectedFaults)
	t.Run("BatchesAndLeases_KilledAndPostgreSQLCrashed_AllOrNothing", env.testBatchesAndLeases)
	t.Run("Redrive_KilledAndPostgreSQLCrashed_EachMessageInOnePlace", env.testRedrive)
	t.Run("IdempotentProducers_KilledAndPostgreSQLCrashed_NoDuplicateEnqueue", env.testIdempotentProducers)
	t.Run("ThreeInstances_OneKilledAtATime_NothingLost", env.testThreeInstances)
	t.Run("ThreeInstancesForwardingRounds_OneKilledAtATime_NothingLost", env.testThreeInstancesWithPeers)
	t.Run("Checker_CatchesInjectedFaults_Part2", env.testInjectedFaultsPart2)
}

// buildPlainBinary builds retsu without the race detector, for the test's lifetime.
func buildPlainBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retsu")
	if out, err := exec.Command("go", "build", "-o", path, "../cmd/retsu").CombinedOutput(); err != nil {
		t.Fatalf("build retsu: %v\n%s", err, out)
	}
	return path
}

// scenario is one drain against a Retsu of its own (or several instances of its own), with
// its own database and Redis.
type scenario struct {
	env       *chaosEnv
	db        *pgxpool.Pool // the test's own connections, which no chaos terminates
	redis     *redisServer
	retsu     *retsuProcess // the first of instances
	instances []*retsuProcess
	rec       *recorder
	drain     *drain
	start     time.Time
}

// newScenario starts Retsu on a new database and Redis, with the extra environment given,
// and creates the queue of the drain.
func (e *chaosEnv) newScenario(t *testing.T, keepAlive bool, size drainSize, env ...string) *scenario {
	t.Helper()
	return e.newScenarioOf(t, 1, keepAlive, size, env...)
}

// newScenarioOf starts n Retsu instances on a new database and Redis, with the extra
// environment given, and creates the queue of the drain, whose requests go to each
// instance in turn.
func (e *chaosEnv) newScenarioOf(t *testing.T, n int, keepAlive bool, size drainSize, env ...string) *scenario {
	t.Helper()
	s := &scenario{env: e}
	s.db, s.redis, s.instances = e.startServices(t, n, env...)
	s.retsu = s.instances[0]
	var bases []string
	for _, instance := range s.instances {
		bases = append(bases, instance.URL())
	}
	s.rec = newRecorder(keepAlive, bases...)
	s.drain = newDrain(s.rec, s.rec.createQueue(t, chaosQueueSettings), size)
	return s
}

// startServices creates a database and starts a Redis of a scenario's own, and n Retsu
// instances on them, the first of which migrates the database.
func (e *chaosEnv) startServices(t *testing.T, n int, env ...string) (*pgxpool.Pool, *redisServer, []*retsuProcess) {
	t.Helper()
	e.databases++
	url, db := e.pg.createDatabase(t, fmt.Sprintf("chaos_%d", e.databases))
	redis := startRedis(t)
	instances := make([]*retsuProcess, n)
	for i := range instances {
		instances[i] = startRetsu(t, e.binary, append([]string{
			"RETSU_DATABASE_URL=" + url, "RETSU_REDIS_URL=" + redis.URL(), "RETSU_MIGRATE=true", "RETSU_LOG_LEVEL=warn",
		}, peerEnv(env)...)...)
	}
	return db, redis, instances
}

// withPeers, in the env of startServices, gives each instance a peer listener of its own and
// the token they share: the instances forward rounds to their leader.
const withPeers = "RETSU_PEER_ADDR=(one per instance)"

// peerEnv returns env with withPeers replaced by a free peer address and the token.
func peerEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, v := range env {
		if v == withPeers {
			out = append(out, "RETSU_PEER_ADDR="+freeAddress(), "RETSU_PEER_TOKEN=chaos-peer-token-0123456789")
			continue
		}
		out = append(out, v)
	}
	return out
}

// run runs the drain while chaos strikes, and fails the test if either fails or the
// scenario's deadline passes.
func (s *scenario) run(t *testing.T, chaos func(ctx context.Context) error) {
	t.Helper()
	runStruck(t, s.env.scale.deadline, &s.start, s.drain.run, chaos)
}

// runStruck runs work while chaos strikes, with start set when work begins, and fails the
// test if either fails or deadline passes.
func runStruck(t *testing.T, deadline time.Duration, start *time.Time,
	work func(context.Context, *testing.T), chaos func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	struck := make(chan error, 1)
	go func() { struck <- chaos(ctx) }()
	*start = time.Now()
	work(ctx, t)
	if err := <-struck; err != nil {
		t.Fatal(err)
	}
}

// noChaos strikes nothing.
func noChaos(context.Context) error { return nil }

// check checks the history against the final state, logs the figures, and asserts what
// every scenario promises: every promise of the checker, a drained queue, every message
// enqueued, and answers that keep the HTTP contract.
func (s *scenario) check(t *testing.T) history.Report {
	t.Helper()
	is := is.New(t)
	final, err := finalState(t.Context(), s.db, s.drain.queueID)
	is.NoErr(err) // the final state can be read
	report := history.Check(s.rec.h, final, chaosLimits)
	t.Logf("figures (%s, %v): %s\nanswers: %s", s.env.scale.name, time.Since(s.start).Round(time.Second), report, s.rec.answers)
	is.True(report.OK())                                               // every promise holds
	is.Equal(report.Enqueues.OK, s.drain.size.messages())              // every message was enqueued
	is.Equal(report.Remaining, 0)                                      // and the queue drained
	is.Equal(report.Expired, 0)                                        // with nothing expired on the way
	is.Equal(s.rec.answers.breaches, []string(nil))                    // every answer kept the HTTP contract
	is.Equal(report.Acknowledged+report.DeadLettered, report.Messages) // each message ended acknowledged or dead-lettered
	return report
}

func (e *chaosEnv) testDrain(t *testing.T) {
	is := is.New(t)
	s := e.newScenario(t, true, e.scale.drain)

	s.run(t, noChaos)

	report := s.check(t)
	is.True(report.Duplicates > 0)   // crashed consumers' messages were delivered again
	is.True(report.DeadLettered > 0) // poison messages ended as dead letters
	is.Equal(report.Unknown(), 0)    // with nothing broken, every outcome is known
}

func (e *chaosEnv) testKilled(t *testing.T) {
	s := e.newScenario(t, true, e.scale.chaosDrain)

	s.run(t, func(ctx context.Context) error {
		for i := range e.scale.kills {
			if !s.drain.waitProgress(ctx, float64(i+1)/float64(e.scale.kills+1)) {
				return ctx.Err()
			}
			s.retsu.kill()
			time.Sleep(200 * time.Millisecond) // clients meet a closed port
			if err := s.retsu.start(); err != nil {
				return err
			}
		}
		return nil
	})

	s.check(t)
}

func (e *chaosEnv) testPostgresCrashed(t *testing.T) {
	is := is.New(t)
	s := e.newScenario(t, true, e.scale.chaosDrain)
	var recoveries []time.Duration
	var readyDuringOutage []int

	s.run(t, func(ctx context.Context) error {
		for i := range e.scale.postgresStops {
			if !s.drain.waitProgress(ctx, float64(i+1)/float64(e.scale.postgresStops+1)) {
				return ctx.Err()
			}
			if err := e.pg.stop("immediate"); err != nil {
				return err
			}
			time.Sleep(2 * time.Second) // requests meanwhile get 503
			readyDuringOutage = append(readyDuringOutage, s.rec.send(http.MethodGet, "/readyz", nil).status)
			if err := e.pg.start(); err != nil {
				return err
			}
			recovery, err := s.drain.waitEnqueuedAfter(ctx, time.Now())
			if err != nil {
				return err
			}
			recoveries = append(recoveries, recovery)
		}
		return nil
	})

	s.check(t)
	t.Logf("first 201 after each PostgreSQL start: %v", recoveries)
	is.True(s.rec.answers.count(http.StatusServiceUnavailable) > 0) // requests during the outage got 503
	for _, status := range readyDuringOutage {
		is.Equal(status, http.StatusServiceUnavailable) // /readyz said so too
	}
	for _, recovery := range recoveries {
		is.True(recovery < 10*time.Second) // retsu served again within seconds of PostgreSQL's return
	}
	is.True(s.retsu.running()) // retsu served again without a restart: it never exited
}

func (e *chaosEnv) testBackendsTerminated(t *testing.T) {
	is := is.New(t)
	// Connections cost some 40 ms of this machine's time to open, and ten times that when
	// sixteen open at once: with the default pool every 200 ms would be spent reconnecting.
	s := e.newScenario(t, true, e.scale.chaosDrain, "RETSU_DB_MAX_CONNS=4")
	terminated := 0

	s.run(t, func(ctx context.Context) error {
		admin, err := pgx.Connect(ctx, e.pg.url("postgres"))
		if err != nil {
			return err
		}
		defer admin.Close(context.Background())
		if !s.drain.waitProgress(ctx, 0.05) {
			return ctx.Err()
		}
		for s.drain.progress() < 0.95 && ctx.Err() == nil {
			n, err := terminateRetsuBackends(ctx, admin, s.db.Config().ConnConfig.Database)
			if err != nil {
				return err
			}
			terminated += n
			time.Sleep(200 * time.Millisecond)
		}
		return nil
	})

	s.check(t)
	t.Logf("terminated %d backends", terminated)
	is.True(terminated > 0) // retsu's connections were terminated
}

// terminateRetsuBackends terminates every connection to database except the test's own,
// and returns how many.
func terminateRetsuBackends(ctx context.Context, admin *pgx.Conn, database string) (int, error) {
	var n int
	err := admin.QueryRow(ctx, `
		SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = $1 AND backend_type = 'client backend' AND application_name <> $2`,
		database, testApplicationName).Scan(&n)
	return n, err
}

func (e *chaosEnv) testRedisLost(t *testing.T) {
	is := is.New(t)
	s := e.newScenario(t, true, e.scale.chaosDrain)

	s.run(t, func(ctx context.Context) error {
		steps := 3 * e.scale.redisCycles
		for i := range steps {
			if !s.drain.waitProgress(ctx, float64(i+1)/float64(steps+1)) {
				return ctx.Err()
			}
			var err error
			switch i % 3 {
			case 0:
				s.redis.stop()
			case 1:
				err = s.redis.start() // empty: the server keeps nothing on disk
			case 2:
				_, err = s.redis.do("FLUSHALL")
			}
			if err != nil {
				return err
			}
		}
		return nil
	})

	report := s.check(t)
	is.Equal(report.Unknown(), 0)                                                         // no request failed for want of Redis
	is.Equal(report.Enqueues.Failed+report.Dequeues.Failed+report.Acknowledges.Failed, 0) // none at all
	is.Equal(s.rec.send(http.MethodGet, "/v1/queues/"+s.drain.queueID, nil).status, http.StatusOK)
	entry, err := s.redis.do("GET retsu:queue:" + s.drain.queueID)
	is.NoErr(err)
	is.True(entry != "(nil)") // the cache refilled after the flush
}

func (e *chaosEnv) testGracefulShutdown(t *testing.T) {
	is := is.New(t)
	// Without keep-alive, no request can be sent on a connection the server is closing as
	// idle: every request that reaches the server while it stops is one in flight.
	s := e.newScenario(t, false, e.scale.chaosDrain)
	var stops []time.Duration

	s.run(t, func(ctx context.Context) error {
		for i := range e.scale.shutdowns {
			if !s.drain.waitProgress(ctx, float64(i+1)/float64(e.scale.shutdowns+1)) {
				return ctx.Err()
			}
			took, err := s.retsu.terminate()
			if err != nil {
				return err
			}
			stops = append(stops, took)
			if err := s.retsu.start(); err != nil {
				return err
			}
		}
		return nil
	})

	report := s.check(t)
	t.Logf("SIGTERM to exit: %v", stops)
	is.Equal(s.rec.answers.truncated, 0)       // no answer was cut off once it began
	is.Equal(report.UnknownEnqueuesApplied, 0) // no enqueue took effect without its answer reaching the client
	is.Equal(report.HiddenDeliveries, 0)       // no dequeue did either
}
