package test

import (
	"context"
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

// violatingMessages returns the distinct messages of the violations of kind k.
func violatingMessages(r history.Report, k history.Kind) map[string]bool {
	ids := make(map[string]bool)
	for _, v := range r.Violations {
		if v.Kind == k {
			ids[v.MessageID] = true
		}
	}
	return ids
}
