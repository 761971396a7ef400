package test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/test/history"
)

// storageFault is a bug planted in the database under a running drain: the checker must
// report the kind of violation it causes. A checker that passes every history proves nothing.
type storageFault struct {
	name   string
	kind   history.Kind
	inject func(ctx context.Context, db *pgxpool.Pool, queueID string) error
}

// faultWindow is how long the faults that change the database's behaviour stay in place:
// longer than a visibility timeout, so that redeliveries happen meanwhile.
const faultWindow = chaosVisibilityTimeout + 500*time.Millisecond

var storageFaults = []storageFault{
	// A poison message is never acknowledged: nothing but the fault can remove it.
	{"a poison message vanishes", history.Lost, func(ctx context.Context, db *pgxpool.Pool, queueID string) error {
		return onOneRow(ctx, db, `DELETE FROM messages WHERE queue_id = $1 AND id = (
			SELECT id FROM messages WHERE queue_id = $1 AND convert_from(payload, 'UTF8') LIKE 'poison%' LIMIT 1)`, queueID)
	}},
	{"a message nobody enqueued appears", history.Unexpected, func(ctx context.Context, db *pgxpool.Pool, queueID string) error {
		_, err := db.Exec(ctx, `INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts)
			VALUES ($1, gen_random_uuid(), 1, 'forged', now() + interval '1 hour', $2, $3)`,
			queueID, int(chaosVisibilityTimeout/time.Second), chaosMaxAttempts)
		return err
	}},
	{"leases end early", history.Overlap, func(ctx context.Context, db *pgxpool.Pool, queueID string) error {
		for range 3 {
			if _, err := db.Exec(ctx, `UPDATE messages SET visible_at = now()
				WHERE queue_id = $1 AND delivery_attempts > 0 AND visible_at > now()`, queueID); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}},
	{"acknowledgements are ignored", history.Resurrected, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return forWhile(ctx, db, `
			CREATE FUNCTION chaos_ignore() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
			CREATE TRIGGER chaos_ignore_acknowledgements BEFORE DELETE ON messages FOR EACH ROW
				WHEN (OLD.delivery_attempts < OLD.max_delivery_attempts) EXECUTE FUNCTION chaos_ignore()`, `
			DROP TRIGGER chaos_ignore_acknowledgements ON messages; DROP FUNCTION chaos_ignore()`)
	}},
	{"redeliveries keep the old receipt handle", history.StaleAcknowledgement, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return forWhile(ctx, db, `
			CREATE FUNCTION chaos_keep_handle() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				IF OLD.receipt_handle IS NOT NULL THEN NEW.receipt_handle := OLD.receipt_handle; END IF;
				RETURN NEW;
			END $$;
			CREATE TRIGGER chaos_keep_handles BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION chaos_keep_handle()`, `
			DROP TRIGGER chaos_keep_handles ON messages; DROP FUNCTION chaos_keep_handle()`)
	}},
	// The dead letter comes back leased for an hour, so that no dequeue meets it again.
	{"a dead letter is back in the queue", history.TwoPlaces, func(ctx context.Context, db *pgxpool.Pool, queueID string) error {
		return onOneRow(ctx, db, `INSERT INTO messages (queue_id, id, priority, payload, enqueued_at, expires_at, visible_at,
				receipt_handle, delivery_attempts, max_delivery_attempts, visibility_timeout_seconds)
			SELECT queue_id, id, priority, payload, enqueued_at, now() + interval '1 hour', now() + interval '1 hour',
				gen_random_uuid(), delivery_attempts, delivery_attempts, 3600
			FROM dead_letters WHERE queue_id = $1 LIMIT 1`, queueID)
	}},
}

// onOneRow runs statement until it changes a row, for a fault that needs a message in a
// state that may not exist yet.
func onOneRow(ctx context.Context, db *pgxpool.Pool, statement, queueID string) error {
	for {
		tag, err := db.Exec(ctx, statement, queueID)
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// forWhile runs install, waits faultWindow, and runs remove.
func forWhile(ctx context.Context, db *pgxpool.Pool, install, remove string) error {
	if _, err := db.Exec(ctx, install); err != nil {
		return err
	}
	time.Sleep(faultWindow)
	_, err := db.Exec(ctx, remove)
	return err
}

func (e *chaosEnv) testInjectedFaults(t *testing.T) {
	is := is.New(t)
	s := e.newScenario(t, true, drainSize{producers: 4, perProducer: 500, consumers: 8})

	s.run(t, func(ctx context.Context) error {
		for i, fault := range storageFaults {
			if !s.drain.waitProgress(ctx, float64(i+1)/float64(len(storageFaults)+1)) {
				return ctx.Err()
			}
			if err := fault.inject(ctx, s.db, s.drain.queueID); err != nil {
				return err
			}
		}
		return nil
	})

	final, err := finalState(t.Context(), s.db, s.drain.queueID)
	is.NoErr(err)
	report := history.Check(s.rec.h, final, chaosLimits)
	t.Logf("with %d faults planted: %s", len(storageFaults), report)
	for _, fault := range storageFaults {
		if report.Count(fault.kind) == 0 {
			t.Errorf("the checker missed the fault %q: no %s", fault.name, fault.kind)
		}
	}
	// The forged message may be delivered more than once, as the faults after it end its
	// lease early or ignore its acknowledgement: each delivery is reported, of one message.
	is.Equal(len(violatingMessages(report, history.Lost)), 1)       // exactly the vanished message is lost
	is.Equal(len(violatingMessages(report, history.Unexpected)), 1) // exactly the forged message is unexpected
}

// violatingMessages returns the distinct messages of the violations of kind k, or of every
// kind when k is empty.
func violatingMessages(r history.Report, k history.Kind) map[string]bool {
	ids := make(map[string]bool)
	for _, v := range r.Violations {
		if v.Kind == k || k == "" {
			ids[v.MessageID] = true
		}
	}
	return ids
}

// part2Faults are bugs of Part 2 planted in the database under a running worker loop, one
// after the other, those that need enqueues first. Each records in chaos_struck every time
// it strikes, with the ID of each message it makes vanish, so that the lost messages the
// checker reports can be compared with exactly those.
var part2Faults = []storageFault{
	// The eighth entry of each batch is not stored, while the batch is answered 201.
	{"a batch is stored in part", history.BatchSplit, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return plantUntil(ctx, db, "split", 3, 0, `
			CREATE FUNCTION chaos_split() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO chaos_struck VALUES ('split', NEW.id); RETURN NULL;
			END $$;
			CREATE TRIGGER chaos_split BEFORE INSERT ON messages FOR EACH ROW
				WHEN (split_part(split_part(convert_from(NEW.payload, 'UTF8'), ' ', 2), '.', 2)::int % 10 = 7)
				EXECUTE FUNCTION chaos_split()`, `
			DROP TRIGGER chaos_split ON messages; DROP FUNCTION chaos_split()`)
	}},
	// Idempotency keys are stored expired: the producers' second send of each request, which
	// must be a replay, stores its messages again.
	{"idempotency keys expire at once", history.DuplicateEnqueue, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return plantUntil(ctx, db, "key", 5, 0, `
			CREATE FUNCTION chaos_expire_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO chaos_struck VALUES ('key', NULL); NEW.expires_at := NEW.created_at; RETURN NEW;
			END $$;
			CREATE TRIGGER chaos_expire_keys BEFORE INSERT OR UPDATE ON idempotency_keys FOR EACH ROW
				EXECUTE FUNCTION chaos_expire_key()`, `
			DROP TRIGGER chaos_expire_keys ON idempotency_keys; DROP FUNCTION chaos_expire_key()`)
	}},
	// An extend answers 204 but leaves the lease's end as it was. It stays in place for as
	// long as a slow job extends, so that both extends of some are ignored.
	{"extends are ignored", history.Overlap, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return plantUntil(ctx, db, "extend", 4, slowBeat+time.Second, `
			CREATE FUNCTION chaos_ignore_extend() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO chaos_struck VALUES ('extend', NULL); NEW.visible_at := OLD.visible_at; RETURN NEW;
			END $$;
			CREATE TRIGGER chaos_ignore_extends BEFORE UPDATE ON messages FOR EACH ROW
				WHEN (OLD.state = 2 AND NEW.state = 2 AND OLD.receipt_handle = NEW.receipt_handle
					AND OLD.delivery_attempts = NEW.delivery_attempts AND NEW.visible_at > OLD.visible_at)
				EXECUTE FUNCTION chaos_ignore_extend()`, `
			DROP TRIGGER chaos_ignore_extends ON messages; DROP FUNCTION chaos_ignore_extend()`)
	}},
	// A release answers 204 and deletes the message (a claim taken back, which gives back
	// its attempt, is left alone).
	{"a release loses the message", history.Lost, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return plantUntil(ctx, db, "release", 3, 0, `
			CREATE FUNCTION chaos_lose_released() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				DELETE FROM messages WHERE queue_id = NEW.queue_id AND id = NEW.id;
				INSERT INTO chaos_struck VALUES ('release', NEW.id); RETURN NULL;
			END $$;
			CREATE TRIGGER chaos_lose_released AFTER UPDATE ON messages FOR EACH ROW
				WHEN (OLD.state = 2 AND NEW.receipt_handle IS NULL AND OLD.delivery_attempts = NEW.delivery_attempts)
				EXECUTE FUNCTION chaos_lose_released()`, `
			DROP TRIGGER chaos_lose_released ON messages; DROP FUNCTION chaos_lose_released()`)
	}},
	// A redrive deletes the dead letter but does not store the message: a redriven message is
	// the one insert whose UUID v7 is older than its enqueue time by more than a second.
	{"a redrive loses what it moves", history.Lost, func(ctx context.Context, db *pgxpool.Pool, _ string) error {
		return plantUntil(ctx, db, "redrive", 1, 0, `
			CREATE FUNCTION chaos_lose_redriven() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO chaos_struck VALUES ('redrive', NEW.id); RETURN NULL;
			END $$;
			CREATE TRIGGER chaos_lose_redriven BEFORE INSERT ON messages FOR EACH ROW
				WHEN (NEW.enqueued_at - to_timestamp(('x' || substr(replace(NEW.id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
					> interval '1 second')
				EXECUTE FUNCTION chaos_lose_redriven()`, `
			DROP TRIGGER chaos_lose_redriven ON messages; DROP FUNCTION chaos_lose_redriven()`)
	}},
}

// plantUntil runs install, waits until the fault named name struck n times (its rows in
// chaos_struck), and then for hold, and runs remove.
func plantUntil(ctx context.Context, db *pgxpool.Pool, name string, n int, hold time.Duration, install, remove string) error {
	if _, err := db.Exec(ctx, install); err != nil {
		return err
	}
	for struck := 0; struck < n; time.Sleep(10 * time.Millisecond) {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM chaos_struck WHERE fault = $1`, name).Scan(&struck); err != nil {
			return err
		}
	}
	time.Sleep(hold)
	_, err := db.Exec(ctx, remove)
	return err
}

// testInjectedFaultsPart2 plants the faults of Part 2 in turn under a worker loop with every
// operation of Part 2 (keyed batches each sent twice, batch dequeues and acknowledgements,
// slow jobs that extend, releases, a redriver), and requires the checker to report each,
// every message the faults made vanish, and as lost only those.
func (e *chaosEnv) testInjectedFaultsPart2(t *testing.T) {
	is := is.New(t)
	// A queue that allows one attempt, so that poison messages are soon dead letters to
	// redrive.
	size := loopSize{producers: 4, perProducer: 400, consumers: 8, batch: 10, pause: 100 * time.Millisecond}
	s := e.newLoopScenario(t, size, loopOptions{kinds: loopKinds{poisonEvery: 50, slowEvery: 20, releaseEvery: 20},
		keyed: true, resend: true, redrive: true}, oneAttemptLimits)
	_, err := s.db.Exec(t.Context(), `CREATE TABLE chaos_struck (fault text NOT NULL, id uuid)`)
	is.NoErr(err)

	s.run(t, func(ctx context.Context) error {
		for i, fault := range part2Faults {
			if !s.loop.waitProgress(ctx, float64(i+1)/float64(len(part2Faults)+1)) {
				return ctx.Err()
			}
			if err := fault.inject(ctx, s.db, s.loop.queueID); err != nil {
				return fmt.Errorf("%s: %w", fault.name, err)
			}
		}
		return nil
	})

	final, err := finalState(t.Context(), s.db, s.loop.queueID)
	is.NoErr(err)
	report := history.Check(s.rec.h, final, oneAttemptLimits)
	t.Logf("with %d faults of Part 2 planted: %s", len(part2Faults), report)
	for _, fault := range part2Faults {
		if report.Count(fault.kind) == 0 {
			t.Errorf("the checker missed the fault %q: no %s", fault.name, fault.kind)
		}
	}
	vanished := map[string]bool{}
	rows, err := s.db.Query(t.Context(), `SELECT id::text FROM chaos_struck WHERE id IS NOT NULL`)
	is.NoErr(err)
	for rows.Next() {
		var id string
		is.NoErr(rows.Scan(&id))
		vanished[id] = true
	}
	is.NoErr(rows.Err())
	// A vanished message may be reported otherwise than lost: a slow job's acknowledgement
	// within the lease that an ignored extend promised explains its absence, and the
	// redrive of it while that lease ran is reported; a duplicate's second message is
	// reported as a duplicate enqueue.
	named := violatingMessages(report, "")
	for id := range vanished {
		if !named[id] {
			t.Errorf("message %s vanished, and the checker reported nothing of it", id)
		}
	}
	for id := range violatingMessages(report, history.Lost) {
		if !vanished[id] {
			t.Errorf("message %s is reported lost, but no fault made it vanish", id)
		}
	}
	is.Equal(report.Count(history.Unexpected), 0) // and nothing unexpected came out
}
