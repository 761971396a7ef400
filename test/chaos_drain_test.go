package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retsu/retsu/test/history"
)

// The queue settings and consumer behaviour of every drain.
const (
	chaosVisibilityTimeout = 2 * time.Second
	chaosMaxAttempts       = 3
	// poisonEvery makes one message in so many a poison message, which no consumer ever
	// acknowledges, so that it ends as a dead letter.
	poisonEvery = 100
	// crashingConsumers of the consumers crash now and then: they abandon crashShare of
	// their deliveries, which come back after the visibility timeout, and acknowledge
	// lateShare of those afterwards, with a handle that may be stale by then.
	crashingConsumers = 2
	crashShare        = 0.25
	lateShare         = 0.5
	// quietBeforeDrained is how long no lease may have begun before a consumer that finds
	// the queue empty may call it drained: by then every lease taken has ended, and its
	// message came back and was taken again if it was still there.
	quietBeforeDrained = chaosVisibilityTimeout + 2*time.Second
)

// chaosLimits are the settings of the drains' queue, for the checker.
var chaosLimits = history.Limits{
	VisibilityTimeout:   chaosVisibilityTimeout,
	MaxDeliveryAttempts: chaosMaxAttempts,
	ClockMargin:         50 * time.Millisecond,
}

var chaosQueueSettings = map[string]any{
	"visibility_timeout_seconds": int(chaosVisibilityTimeout / time.Second),
	"max_delivery_attempts":      chaosMaxAttempts,
}

var priorities = []string{"HIGH", "MEDIUM", "LOW"}

// drainSize is how much work a drain does.
type drainSize struct {
	producers, perProducer, consumers int
}

func (s drainSize) messages() int { return s.producers * s.perProducer }

func (s drainSize) String() string {
	return fmt.Sprintf("%d producers × %d messages, %d consumers", s.producers, s.perProducer, s.consumers)
}

// drain is the workload of the scenarios: producers enqueue messages, retrying with a new
// payload until each gets its 201, while consumers take and acknowledge them, until the
// queue is empty and no lease is left.
type drain struct {
	size    drainSize
	rec     *recorder
	queueID string
	// enqueued counts the messages answered 201; lastEnqueued is when the latest such
	// answer arrived, in Unix nanoseconds.
	enqueued, lastEnqueued atomic.Int64
	// lastLease is when the latest dequeue that may have taken a message ended.
	lastLease atomic.Int64
	produced  chan struct{} // closed once every producer is done
	drained   atomic.Bool
	late      sync.WaitGroup // the late acknowledgements in flight
}

func newDrain(rec *recorder, queueID string, size drainSize) *drain {
	return &drain{size: size, rec: rec, queueID: queueID, produced: make(chan struct{})}
}

// run runs the drain and fails the test unless it finishes before ctx ends.
func (d *drain) run(ctx context.Context, t *testing.T) {
	t.Helper()
	var producers, consumers sync.WaitGroup
	for p := range d.size.producers {
		producers.Go(func() { d.produce(ctx, p) })
	}
	for c := range d.size.consumers {
		consumers.Go(func() { d.consume(ctx, c < crashingConsumers) })
	}
	producers.Wait()
	close(d.produced)
	consumers.Wait()
	d.late.Wait()
	if !d.drained.Load() {
		t.Fatalf("the drain did not finish in time: %d of %d messages enqueued; answers: %s",
			d.enqueued.Load(), d.size.messages(), d.rec.answers)
	}
}

// progress returns the share of the messages answered 201 so far.
func (d *drain) progress() float64 {
	return float64(d.enqueued.Load()) / float64(d.size.messages())
}

// waitProgress waits until the share of messages answered 201 reaches share; false if ctx
// ended first.
func (d *drain) waitProgress(ctx context.Context, share float64) bool {
	return waitShare(ctx, d.progress, share)
}

// waitShare waits until progress reaches share, looking every 10 ms; false if ctx ended
// first.
func waitShare(ctx context.Context, progress func() float64, share float64) bool {
	for progress() < share {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// waitEnqueuedAfter waits for a 201 that arrives after since and returns how long after.
func (d *drain) waitEnqueuedAfter(ctx context.Context, since time.Time) (time.Duration, error) {
	for {
		if last := time.Unix(0, d.lastEnqueued.Load()); last.After(since) {
			return last.Sub(since), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no enqueue succeeded after %v: %w", since.Format(time.TimeOnly), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (d *drain) produce(ctx context.Context, producer int) {
	for i := range d.size.perProducer {
		kind := "job"
		if (producer*d.size.perProducer+i)%poisonEvery == 0 {
			kind = "poison"
		}
		for attempt := 0; ctx.Err() == nil; attempt++ {
			payload := fmt.Sprintf("%s %d.%d.%d", kind, producer, i, attempt)
			if d.rec.enqueue(d.queueID, payload, priorities[i%len(priorities)]) == history.OK {
				d.enqueued.Add(1)
				d.lastEnqueued.Store(time.Now().UnixNano())
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (d *drain) consume(ctx context.Context, crashing bool) {
	for ctx.Err() == nil && !d.drained.Load() {
		sent := time.Now()
		delivery, outcome := d.rec.dequeue(d.queueID)
		switch {
		case outcome == history.Unknown:
			d.lastLease.Store(time.Now().UnixNano())
			time.Sleep(20 * time.Millisecond)
		case outcome == history.Failed:
			time.Sleep(20 * time.Millisecond)
		case delivery == nil:
			d.noteEmpty()
			time.Sleep(10 * time.Millisecond)
		default:
			d.lastLease.Store(time.Now().UnixNano())
			d.handle(ctx, delivery, sent, crashing)
		}
	}
}

// noteEmpty ends the drain when the producers are done and no lease can still be running.
func (d *drain) noteEmpty() {
	select {
	case <-d.produced:
	default:
		return
	}
	if time.Since(time.Unix(0, d.lastLease.Load())) > quietBeforeDrained {
		d.drained.Store(true)
	}
}

// handle acknowledges a delivery, unless it is poison or its consumer crashes.
func (d *drain) handle(ctx context.Context, m *history.Delivery, sent time.Time, crashing bool) {
	switch {
	case strings.HasPrefix(m.Payload, "poison"):
	case crashing && rand.Float64() < crashShare:
		if rand.Float64() < lateShare {
			d.late.Go(func() { d.acknowledgeLate(ctx, m, sent) })
		}
	default:
		d.acknowledgeInTime(m, sent)
	}
}

// acknowledgeInTime acknowledges a delivery, again while the outcome is not OK and the
// visibility timeout may still run.
func (d *drain) acknowledgeInTime(m *history.Delivery, sent time.Time) {
	for time.Since(sent) < chaosVisibilityTimeout {
		if d.rec.acknowledge(d.queueID, m) == history.OK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// acknowledgeLate acknowledges a delivery once its visibility timeout has ended, as a
// consumer back from a long pause would.
func (d *drain) acknowledgeLate(ctx context.Context, m *history.Delivery, sent time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(sent.Add(chaosVisibilityTimeout + 300*time.Millisecond))):
		d.rec.acknowledge(d.queueID, m)
	}
}

// finalState reads what storage holds for the queue at the end of a run.
func finalState(ctx context.Context, db *pgxpool.Pool, queueID string) (history.Final, error) {
	final := history.Final{Queued: map[string]history.Stored{}, DeadLetters: map[string]history.Stored{}}
	for query, into := range map[string]map[string]history.Stored{
		`SELECT id::text, payload, delivery_attempts, expires_at <= now() FROM messages WHERE queue_id = $1`: final.Queued,
		`SELECT id::text, payload, delivery_attempts, false FROM dead_letters WHERE queue_id = $1`:           final.DeadLetters,
	} {
		rows, err := db.Query(ctx, query, queueID)
		if err != nil {
			return history.Final{}, err
		}
		for rows.Next() {
			var id string
			var payload []byte
			var s history.Stored
			if err := rows.Scan(&id, &payload, &s.Attempts, &s.Expired); err != nil {
				rows.Close()
				return history.Final{}, err
			}
			s.Payload = string(payload)
			into[id] = s
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return history.Final{}, err
		}
	}
	return final, nil
}
