package test

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// cleanerRig is a service and cleaners in this process, on a schema of the test database
// that only its test uses: cleaners walk every queue they can see, so a test of them must
// not see, or clean, the queues of the tests running beside it.
type cleanerRig struct {
	url      string // the database URL that selects the rig's schema
	db       *pgxpool.Pool
	service  *app.Service
	queues   *postgres.QueueStore
	messages *boundedStore
	logs     *syncBuffer
}

func newCleanerRig(t *testing.T) *cleanerRig {
	t.Helper()
	url, pool := newSchema(t)
	queues := postgres.NewQueueStore(pool)
	messages := &boundedStore{MessageStore: postgres.NewMessageStore(pool, postgres.MessageStoreOptions{})}
	return &cleanerRig{
		url:      url,
		db:       pool,
		service:  app.NewService(app.Ports{Queues: queues, Messages: messages, Cache: memory.NewQueueCache(memory.QueueCacheOptions{})}, app.Options{}),
		queues:   queues,
		messages: messages,
		logs:     &syncBuffer{},
	}
}

// cleaners returns a new set of cleaners, as another process would run.
func (r *cleanerRig) cleaners(settings app.CleanerSettings) *app.Cleaners {
	log := slog.New(slog.NewTextHandler(r.logs, nil))
	return app.NewCleaners(app.Ports{Queues: r.queues, Messages: r.messages, Logger: log}, settings)
}

// boundedStore records the largest number of rows one cleaning statement deleted.
type boundedStore struct {
	*postgres.MessageStore
	mu         sync.Mutex
	statements int
	largest    int
}

func (s *boundedStore) DeleteExpired(ctx context.Context, queueID domain.ID, limit int) (int, error) {
	n, err := s.MessageStore.DeleteExpired(ctx, queueID, limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statements++
	s.largest = max(s.largest, n)
	return n, err
}

func (r *cleanerRig) queue(t *testing.T, settings domain.SettingsUpdate) domain.Queue {
	t.Helper()
	q, err := r.service.CreateQueue(t.Context(), domain.NewQueue{Name: uniqueName("cleaner"), SettingsUpdate: settings})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func (r *cleanerRig) enqueue(t *testing.T, q domain.Queue, ttl time.Duration) {
	t.Helper()
	if _, err := r.service.Enqueue(t.Context(), q.ID, domain.NewMessage{Payload: "x", Priority: domain.PriorityMedium, TTL: &ttl}); err != nil {
		t.Fatal(err)
	}
}

// stored counts the queue's rows in the messages and dead_letters tables.
func (r *cleanerRig) stored(t *testing.T, q domain.Queue) (messages, deadLetters int) {
	t.Helper()
	err := r.db.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM messages WHERE queue_id = $1),
		(SELECT count(*) FROM dead_letters WHERE queue_id = $1)`, q.ID).Scan(&messages, &deadLetters)
	if err != nil {
		t.Fatal(err)
	}
	return messages, deadLetters
}

// insertExpired stores n messages of the queue that expired a minute ago, in one statement.
func (r *cleanerRig) insertExpired(t *testing.T, q domain.Queue, n int) {
	t.Helper()
	_, err := r.db.Exec(t.Context(), `
		INSERT INTO messages (queue_id, id, priority, payload, enqueued_at, expires_at, visibility_timeout_seconds, max_delivery_attempts)
		SELECT $1, gen_random_uuid(), 2, 'expired', now() - interval '2 minutes', now() - interval '1 minute', 30, 5
		FROM generate_series(1, $2)`, q.ID, n)
	if err != nil {
		t.Fatal(err)
	}
}

var testCleanerSettings = app.CleanerSettings{Interval: time.Second, BatchSize: 1000, DeadLetterRetention: 2 * time.Second}

func TestCleaners_ExpiredWaitingMessage_DisappearsFromStorage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	q := r.queue(t, domain.SettingsUpdate{})
	r.enqueue(t, q, time.Second)
	r.enqueue(t, q, time.Hour)
	time.Sleep(1200 * time.Millisecond)

	r.cleaners(testCleanerSettings).RunOnce(t.Context())
	messages, _ := r.stored(t, q)
	is.Equal(messages, 1) // the expired message is gone from storage, the live one stays
}

func TestCleaners_ExpiredInFlightMessage_StaysUntilItsVisibilityTimeoutEnds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	ctx := t.Context()
	q := r.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(3 * time.Second)})
	r.enqueue(t, q, time.Second)
	r.enqueue(t, q, time.Second)
	acknowledged, _, err := r.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	_, _, err = r.service.Dequeue(ctx, q.ID)
	is.NoErr(err)
	time.Sleep(1200 * time.Millisecond) // both expired, both in flight

	cleaners := r.cleaners(testCleanerSettings)
	cleaners.RunOnce(ctx)
	messages, _ := r.stored(t, q)
	is.Equal(messages, 2) // an expired message in flight is not removed
	is.NoErr(r.service.Acknowledge(ctx, q.ID, acknowledged.MessageID, acknowledged.ReceiptHandle))
	messages, _ = r.stored(t, q)
	is.Equal(messages, 1) // and can still be acknowledged

	time.Sleep(2 * time.Second) // the other's visibility timeout ends
	cleaners.RunOnce(ctx)
	messages, _ = r.stored(t, q)
	is.Equal(messages, 0) // then it is removed
}

func TestCleaners_DeadLettersOlderThanRetention_AreRemoved(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	ctx := t.Context()
	q := r.queue(t, domain.SettingsUpdate{VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(1)})
	deadLetter := func() {
		r.enqueue(t, q, time.Hour)
		_, _, err := r.service.Dequeue(ctx, q.ID)
		is.NoErr(err)
		time.Sleep(1100 * time.Millisecond)
		_, ok, err := r.service.Dequeue(ctx, q.ID) // moves the exhausted message
		is.NoErr(err)
		is.True(!ok)
	}
	deadLetter()
	time.Sleep(time.Second)
	deadLetter() // the first dead letter is now about 2.1 s old, past the 2 s retention

	r.cleaners(testCleanerSettings).RunOnce(ctx)
	_, deadLetters := r.stored(t, q)
	is.Equal(deadLetters, 1) // the old dead letter is removed, the young one stays
}

func TestCleaners_TwoAtOnce_FinishWithoutErrorsAndLeaveTheSameResult(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	q := r.queue(t, domain.SettingsUpdate{})
	r.insertExpired(t, q, 20000)
	r.enqueue(t, q, time.Hour)

	settings := app.CleanerSettings{Interval: time.Second, BatchSize: 500, DeadLetterRetention: time.Hour}
	var wg sync.WaitGroup
	for range 2 {
		cleaners := r.cleaners(settings) // as two processes would
		wg.Go(func() { cleaners.RunOnce(t.Context()) })
	}
	wg.Wait()
	is.True(!strings.Contains(r.logs.String(), "level=ERROR")) // neither cleaner failed
	messages, _ := r.stored(t, q)
	is.Equal(messages, 1) // together they removed every expired message and only those
}

func TestCleaners_Backlog_RemovedInBoundedBatches(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	q := r.queue(t, domain.SettingsUpdate{})
	const backlog = 50000
	r.insertExpired(t, q, backlog)

	start := time.Now()
	r.cleaners(testCleanerSettings).RunOnce(t.Context())
	took := time.Since(start)
	messages, _ := r.stored(t, q)
	is.Equal(messages, 0)                         // the whole backlog is removed in one pass
	is.True(r.messages.statements > backlog/1000) // by many statements
	is.True(r.messages.largest <= 1000)           // none deleting more than the batch size
	t.Logf("removed a backlog of %d expired messages in %v (%d statements of at most %d rows)",
		backlog, took.Round(time.Millisecond), r.messages.statements, r.messages.largest)
}

func TestWork_RunsTheCleanersAlone(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	q := r.queue(t, domain.SettingsUpdate{})
	r.insertExpired(t, q, 10)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out := &syncBuffer{}
	cmd := exec.CommandContext(ctx, binary, "work", "--migrate=false", "--cleanup-interval=1s")
	cmd.Env = append(cmd.Environ(), "RETSU_DATABASE_URL="+r.url)
	cmd.Stdout, cmd.Stderr = out, out
	is.NoErr(cmd.Start())
	for {
		messages, _ := r.stored(t, q)
		if messages == 0 && strings.Contains(out.String(), "cleaner=expired-messages") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("retsu work did not remove the expired messages:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	is.NoErr(cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(cmd.Wait())                                        // it stops cleanly on a signal
	is.True(strings.Contains(out.String(), "cleaners stopped")) // after saying so
}

func TestWork_SeveralInstances_MakeOnePassAnIntervalBetweenThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newCleanerRig(t)
	q := r.queue(t, domain.SettingsUpdate{})
	r.insertExpired(t, q, 10)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	passes := func(out *syncBuffer) int {
		return strings.Count(out.String(), `msg="cleaner pass" cleaner=expired-messages`)
	}
	var workers []*exec.Cmd
	var outputs []*syncBuffer
	for range 3 {
		out := &syncBuffer{}
		cmd := exec.CommandContext(ctx, binary, "work", "--migrate=false", "--cleanup-interval=1s")
		cmd.Env = append(cmd.Environ(), "RETSU_DATABASE_URL="+r.url)
		cmd.Stdout, cmd.Stderr = out, out
		is.NoErr(cmd.Start())
		workers, outputs = append(workers, cmd), append(outputs, out)
	}
	total := func() int {
		n := 0
		for _, out := range outputs {
			n += passes(out)
		}
		return n
	}
	// Each claims a pass for 0.9 of an interval (cleaner_passes), so over any window of E
	// seconds the three make at most E/0.9 + 1 passes between them (and may log one more each
	// that they claimed before it), where they would make 3E on their own. The window opens
	// once the first pass is logged (the processes started).
	waitFor(t, "a first pass", 30*time.Second, func() bool { return total() >= 1 })
	opened, before := time.Now(), total()
	time.Sleep(4500 * time.Millisecond)
	made, elapsed := total()-before, time.Since(opened).Seconds()
	t.Logf("three instances made %d expired-message passes in %.1f s", made, elapsed)
	is.True(float64(made) <= elapsed/0.9+1+3) // about once a second between them, not once a second each
	waitFor(t, "three more passes", 30*time.Second, func() bool { return total() >= before+3 })

	// Two instances die, in the middle of whatever they were doing; the one left goes on alone.
	for _, cmd := range workers[:2] {
		is.NoErr(cmd.Process.Kill())
		_ = cmd.Wait()
	}
	survivor := passes(outputs[2])
	waitFor(t, "two passes of the survivor", 30*time.Second, func() bool { return passes(outputs[2]) >= survivor+2 }) // it takes over the passes
	is.NoErr(workers[2].Process.Signal(syscall.SIGTERM))
	is.NoErr(workers[2].Wait())
	messages, _ := r.stored(t, q)
	is.Equal(messages, 0) // and the expired messages are gone
}
