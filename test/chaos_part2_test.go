package test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/test/history"
)

// The chaos scenarios of Part 2 of the contract: the worker loop (batches, long polls,
// leases extended and released) and redrives through kill -9s and PostgreSQL crashes,
// idempotent producers that retry through them, and several instances killed one at a time.

// oneAttemptLimits are the settings of the redrive scenario's queue, which allows one
// attempt, so that every message that a consumer fails goes to the dead letters.
var oneAttemptLimits = history.Limits{
	VisibilityTimeout:   chaosVisibilityTimeout,
	MaxDeliveryAttempts: 1,
	ClockMargin:         chaosLimits.ClockMargin,
}

// loopScenario is a worker loop against a Retsu of its own, on a database and a Redis of its
// own.
type loopScenario struct {
	env       *chaosEnv
	db        *pgxpool.Pool
	instances []*retsuProcess
	rec       *recorder
	loop      *workerLoop
	limits    history.Limits
	start     time.Time
	// struck lists what struck, in order.
	struck []string
}

// newLoopScenario starts Retsu on a new database and Redis and creates a queue of limits for
// a worker loop.
func (e *chaosEnv) newLoopScenario(t *testing.T, size loopSize, opts loopOptions, limits history.Limits) *loopScenario {
	t.Helper()
	s := &loopScenario{env: e, limits: limits}
	s.db, _, s.instances = e.startServices(t, 1)
	s.rec = newRecorder(true, s.instances[0].URL())
	queueID := s.rec.createQueue(t, map[string]any{
		"visibility_timeout_seconds": int(limits.VisibilityTimeout / time.Second),
		"max_delivery_attempts":      limits.MaxDeliveryAttempts,
	})
	s.loop = newWorkerLoop(s.rec, queueID, size, opts)
	return s
}

// run runs the loop while chaos strikes, and fails the test if either fails or the
// scenario's deadline passes.
func (s *loopScenario) run(t *testing.T, chaos func(ctx context.Context) error) {
	t.Helper()
	runStruck(t, s.env.scale.deadline, &s.start, s.loop.run, chaos)
}

// strikes strikes in turn as the plan says (see strikeInTurn).
func (s *loopScenario) strikes(plan []string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var err error
		s.struck, err = s.env.strikeInTurn(ctx, plan, s.loop.waitProgress, s.instances)
		return err
	}
}

// check checks the history against the final state, logs the figures, and asserts what
// every worker loop promises: every promise of the checker, every message enqueued, a
// drained queue, each message ended acknowledged or dead-lettered, and answers that keep
// the HTTP contract.
func (s *loopScenario) check(t *testing.T) history.Report {
	t.Helper()
	is := is.New(t)
	final, err := finalState(t.Context(), s.db, s.loop.queueID)
	is.NoErr(err) // the final state can be read
	report := history.Check(s.rec.h, final, s.limits)
	t.Logf("figures (%s, %v): %s\nanswers: %s\nstruck: %s; slow jobs %d, releases %d",
		s.env.scale.name, time.Since(s.start).Round(time.Second), report, s.rec.answers, summarize(s.struck),
		s.loop.slowJobs.Load(), s.loop.releasesSent.Load())
	is.True(report.OK())                                               // every promise holds
	is.Equal(int(s.loop.enqueued.Load()), s.loop.size.messages())      // every message was enqueued
	is.Equal(report.Remaining, 0)                                      // and the queue drained
	is.Equal(report.Expired, 0)                                        // with nothing expired on the way
	is.Equal(s.rec.answers.breaches, []string(nil))                    // every answer kept the HTTP contract
	is.Equal(report.Acknowledged+report.DeadLettered, report.Messages) // each message ended acknowledged or dead-lettered
	is.True(report.Messages >= s.loop.size.messages())                 // at least the messages answered 201 existed
	return report
}

// strikePlan lists kills kill -9s with postgresStops PostgreSQL crashes spread evenly among
// them.
func strikePlan(kills, postgresStops int) []string {
	total := kills + postgresStops
	plan := slices.Repeat([]string{"kill"}, total)
	for j := range postgresStops {
		plan[(j+1)*total/(postgresStops+1)] = "postgres"
	}
	return plan
}

// summarize counts what struck by kind, in the order of their first strikes.
func summarize(struck []string) string {
	counts := map[string]int{}
	var kinds []string
	for _, s := range struck {
		if counts[s] == 0 {
			kinds = append(kinds, s)
		}
		counts[s]++
	}
	parts := make([]string, len(kinds))
	for i, kind := range kinds {
		parts[i] = fmt.Sprintf("%d × %s", counts[kind], kind)
	}
	return strings.Join(parts, ", ")
}

// strikeInTurn strikes as the plan says at evenly spaced shares of the workload's progress:
// "kill" kills the next of the instances, in turn, with SIGKILL and starts it again on its
// address 200 ms later; "postgres" crashes PostgreSQL (`pg_ctl stop -m immediate`) and starts
// it again 2 s later. It returns what struck, a kill named by its instance when there are
// several.
func (e *chaosEnv) strikeInTurn(ctx context.Context, plan []string, waitProgress func(context.Context, float64) bool,
	instances []*retsuProcess) ([]string, error) {
	var struck []string
	kills := 0
	for i, strike := range plan {
		if !waitProgress(ctx, float64(i+1)/float64(len(plan)+1)) {
			return struck, ctx.Err()
		}
		switch strike {
		case "kill":
			instance := instances[kills%len(instances)]
			kills++
			instance.kill()
			time.Sleep(200 * time.Millisecond) // clients meet a closed port
			if err := instance.start(); err != nil {
				return struck, err
			}
			if len(instances) > 1 {
				strike = fmt.Sprintf("kill of instance %d", (kills-1)%len(instances)+1)
			}
		case "postgres":
			if err := e.pg.stop("immediate"); err != nil {
				return struck, err
			}
			time.Sleep(2 * time.Second) // requests meanwhile get 503
			if err := e.pg.start(); err != nil {
				return struck, err
			}
		}
		struck = append(struck, strike)
	}
	return struck, nil
}

// testBatchesAndLeases runs the worker loop with its batches, slow jobs that extend their
// leases past the visibility timeout, and releases, through kill -9s and PostgreSQL crashes:
// every batch all or nothing, no extended lease handed to another consumer before it ended,
// no released message lost.
func (e *chaosEnv) testBatchesAndLeases(t *testing.T) {
	is := is.New(t)
	s := e.newLoopScenario(t, e.scale.batches, loopOptions{kinds: loopKinds{poisonEvery: 100, slowEvery: 50, releaseEvery: 20}}, chaosLimits)

	s.run(t, s.strikes(strikePlan(e.scale.kills, e.scale.postgresStops)))

	report := s.check(t)
	is.True(report.BatchEnqueues.OK > 0) // messages came in batches
	is.True(report.Extends.OK > 0)       // slow jobs extended their leases
	is.True(report.Releases.OK > 0)      // messages were released
	is.True(report.DeadLettered > 0)     // poison messages ended as dead letters
	is.True(report.Unknown() > 0)        // the strikes left outcomes unknown, which the checker allowed for
}

// testRedrive runs consumers that fail some messages, on a queue that allows one attempt, so
// that those go to the dead letters, and a redriver that sends them back while the consumers
// run, through kill -9s and PostgreSQL crashes: every message ends in exactly one place.
func (e *chaosEnv) testRedrive(t *testing.T) {
	is := is.New(t)
	s := e.newLoopScenario(t, e.scale.redrives, loopOptions{kinds: loopKinds{poisonEvery: 100, failEvery: 10}, redrive: true}, oneAttemptLimits)

	s.run(t, s.strikes(strikePlan(e.scale.kills, e.scale.postgresStops)))

	report := s.check(t)
	is.True(report.Redriven > 0)     // dead letters went back to the queue
	is.True(report.DeadLettered > 0) // and poison messages ended there
}

// testIdempotentProducers runs producers that send every message with an idempotency key and
// retry each request whose outcome is unknown with the same key and payloads until it is
// answered, through kill -9s and PostgreSQL crashes: no duplicate enqueue, nothing lost, one
// message for each one sent.
func (e *chaosEnv) testIdempotentProducers(t *testing.T) {
	is := is.New(t)
	s := e.newLoopScenario(t, e.scale.keyed, loopOptions{keyed: true}, chaosLimits)

	s.run(t, s.strikes(strikePlan(e.scale.kills, e.scale.postgresStops)))

	report := s.check(t)
	t.Logf("idempotent producers: %d unknown outcomes retried with their key, %d replays, duplicate enqueues %d, lost %d",
		report.RetriedUnknown, report.Replays, report.Count(history.DuplicateEnqueue), report.Count(history.Lost))
	is.Equal(report.Count(history.DuplicateEnqueue), 0)  // no payload stored under two IDs
	is.Equal(report.Messages, s.loop.size.messages())    // exactly one message for each one sent
	is.Equal(report.UnknownEnqueuesApplied, 0)           // every request of unknown outcome was retried to its 201
	is.True(report.RetriedUnknown > 0)                   // the strikes left some to retry
	is.True(s.rec.answers.count(http.StatusCreated) > 0) // answered 201
}

// testThreeInstances runs the drain on three instances on one PostgreSQL and Redis, each
// request going to the next instance in turn, as behind a load balancer, and kills one
// instance at a time with SIGKILL and starts it again: every promise holds across them.
func (e *chaosEnv) testThreeInstances(t *testing.T) { e.threeInstances(t) }

// testThreeInstancesWithPeers is testThreeInstances with round forwarding: the kills strike
// the round leader in its turn, with batches of the others in flight.
func (e *chaosEnv) testThreeInstancesWithPeers(t *testing.T) { e.threeInstances(t, withPeers) }

func (e *chaosEnv) threeInstances(t *testing.T, env ...string) {
	is := is.New(t)
	s := e.newScenarioOf(t, 3, true, e.scale.instances, env...)
	var struck []string

	s.run(t, func(ctx context.Context) error {
		var err error
		struck, err = e.strikeInTurn(ctx, strikePlan(e.scale.kills, 0), s.drain.waitProgress, s.instances)
		return err
	})

	s.check(t)
	t.Logf("struck: %s", summarize(struck))
	is.Equal(len(struck), e.scale.kills) // every kill struck
	for _, instance := range s.instances {
		is.True(instance.running()) // and every instance serves at the end
	}
}
