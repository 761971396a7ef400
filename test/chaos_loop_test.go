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

	"github.com/retsu/retsu/test/history"
)

// The worker loop of Part 2 as the workload of its chaos scenarios: producers that send
// batches, with or without idempotency keys; consumers that take batches by long polling,
// extend the leases of slow jobs, release what they cannot do now, and acknowledge in
// batches; and, for the redrive scenario, a redriver that sends dead letters back while
// they run.
const (
	// slowLease is what a slow job extends its lease to, twice, slowBeat apart, before it
	// acknowledges: it holds the message past the queue's visibility timeout, so that an
	// extend the server ignored hands the message to another consumer within the lease.
	slowLease = 4 * time.Second
	slowBeat  = 1500 * time.Millisecond
	// loopMaxMessages and loopWait are the consumers' batch dequeues: up to 10 messages,
	// waiting up to a second when there are none.
	loopMaxMessages = 10
	loopWait        = 1
	// redriveLimit is how many dead letters a redrive asks for, every redriveInterval.
	redriveLimit    = 100
	redriveInterval = 200 * time.Millisecond
	// redriveTail is how long the redriver goes on once the producers are done: long enough
	// for the last messages that fail to reach the dead letters and be redriven once.
	redriveTail = chaosVisibilityTimeout + 1500*time.Millisecond
	// leaseQuiet is how long after every lease, extend and release delay may have ended a
	// consumer that finds the queue empty may call it drained.
	leaseQuiet = 2 * time.Second
)

// loopSize is how much work a worker loop does.
type loopSize struct {
	producers, perProducer, consumers int
	// batch is how many messages a producer sends in one request; mixed alternates such a
	// batch with a single enqueue.
	batch int
	mixed bool
	// pause is how long a producer waits between requests: production then lasts as long
	// as the strikes need.
	pause time.Duration
}

func (s loopSize) messages() int { return s.producers * s.perProducer }

func (s loopSize) String() string {
	mixed := ""
	if s.mixed {
		mixed = " and single enqueues"
	}
	return fmt.Sprintf("%d producers × %d messages in batches of %d%s, %d consumers", s.producers, s.perProducer, s.batch, mixed, s.consumers)
}

// loopKinds says what consumers do with a message, by its number: one in poisonEvery is
// never acknowledged, one in slowEvery is a slow job, one in releaseEvery is released at its
// first delivery, one in failEvery is left to its lease in its first life (and redriven);
// zero turns a kind off.
type loopKinds struct {
	poisonEvery, slowEvery, releaseEvery, failEvery int
}

// kind names what becomes of message n: the first word of its payloads.
func (k loopKinds) kind(n int) string {
	every := func(e, offset int) bool { return e > 0 && n%e == offset }
	switch {
	case every(k.poisonEvery, 0):
		return "poison"
	case every(k.slowEvery, 1):
		return "slow"
	case every(k.releaseEvery, 2):
		return "release"
	case every(k.failEvery, 3):
		return "fail"
	}
	return "job"
}

// loopOptions are the choices of a worker loop besides its size.
type loopOptions struct {
	kinds loopKinds
	// keyed sends every enqueue with an Idempotency-Key, and repeats a request whose
	// outcome is not OK with the same key and payloads until it is; without, a retry has
	// new payloads.
	keyed bool
	// resend sends every keyed request once more after its 201, as a producer that cannot
	// tell whether it sent it would: the second must be a replay.
	resend bool
	// redrive runs a redriver while the consumers run.
	redrive bool
}

// workerLoop is the state of one run of the workload.
type workerLoop struct {
	size    loopSize
	opts    loopOptions
	rec     *recorder
	queueID string
	// enqueued counts the messages answered 201.
	enqueued atomic.Int64
	// leaseUntil is when every lease, extend and release delay given so far may have ended,
	// in Unix nanoseconds.
	leaseUntil atomic.Int64
	produced   chan struct{} // closed once every producer is done
	redriven   chan struct{} // closed once the redriver is done
	// settled is when both were done, in Unix nanoseconds; zero before.
	settled atomic.Int64
	drained atomic.Bool
	// failed holds the payloads of "fail" messages already left to their lease once.
	failed sync.Map
	// side counts the slow jobs and late acknowledgements in flight.
	side sync.WaitGroup
	// The figures of the run beside the checker's.
	resent, slowJobs, releasesSent atomic.Int64
}

func newWorkerLoop(rec *recorder, queueID string, size loopSize, opts loopOptions) *workerLoop {
	return &workerLoop{size: size, opts: opts, rec: rec, queueID: queueID, produced: make(chan struct{}), redriven: make(chan struct{})}
}

// run runs the loop and fails the test unless it finishes before ctx ends.
func (l *workerLoop) run(ctx context.Context, t *testing.T) {
	t.Helper()
	var producers, others sync.WaitGroup
	for p := range l.size.producers {
		producers.Go(func() { l.produce(ctx, p) })
	}
	for c := range l.size.consumers {
		others.Go(func() { l.consume(ctx, c < crashingConsumers) })
	}
	if l.opts.redrive {
		others.Go(func() { l.redrive(ctx) })
	} else {
		close(l.redriven)
	}
	others.Go(func() {
		producers.Wait()
		close(l.produced)
		<-l.redriven
		l.settled.Store(time.Now().UnixNano())
	})
	others.Wait()
	l.side.Wait()
	if !l.drained.Load() {
		t.Fatalf("the worker loop did not finish in time: %d of %d messages enqueued; answers: %s",
			l.enqueued.Load(), l.size.messages(), l.rec.answers)
	}
}

// progress returns the share of the messages answered 201 so far.
func (l *workerLoop) progress() float64 {
	return float64(l.enqueued.Load()) / float64(l.size.messages())
}

// waitProgress waits until the share of messages answered 201 reaches share; false if ctx
// ended first.
func (l *workerLoop) waitProgress(ctx context.Context, share float64) bool {
	return waitShare(ctx, l.progress, share)
}

// noteLease records that a lease, an extend or a release delay may run until until.
func (l *workerLoop) noteLease(until time.Time) {
	for {
		old := l.leaseUntil.Load()
		if old >= until.UnixNano() || l.leaseUntil.CompareAndSwap(old, until.UnixNano()) {
			return
		}
	}
}

// produce sends the producer's messages, a request at a time, each until it is answered 201.
func (l *workerLoop) produce(ctx context.Context, producer int) {
	for first, request := 0, 0; first < l.size.perProducer && ctx.Err() == nil; request++ {
		n := min(l.size.batch, l.size.perProducer-first)
		single := l.size.batch <= 1 || l.size.mixed && request%2 == 1
		if single {
			n = 1
		}
		key := "" // keys are per queue: one per producer and first message will do
		if l.opts.keyed {
			key = fmt.Sprintf("producer-%d-%d", producer, first)
		}
		for attempt := 0; ctx.Err() == nil; {
			entries := make([]batchEntry, n)
			for i := range entries {
				number := producer*l.size.perProducer + first + i
				entries[i] = batchEntry{fmt.Sprintf("%s %d.%d.%d", l.opts.kinds.kind(number), producer, first+i, attempt), priorities[number%len(priorities)]}
			}
			if l.send(entries, single, key) == history.OK {
				l.enqueued.Add(int64(n))
				if l.opts.resend {
					l.resent.Add(1)
					l.send(entries, single, key)
				}
				break
			}
			if !l.opts.keyed {
				attempt++ // a retry without a key is a new message: a new payload
			}
			time.Sleep(50 * time.Millisecond)
		}
		first += n
		time.Sleep(l.size.pause)
	}
}

// send sends one enqueue request, single or batch.
func (l *workerLoop) send(entries []batchEntry, single bool, key string) history.Outcome {
	if single {
		outcome, _ := l.rec.enqueueKeyed(l.queueID, entries[0].Payload, entries[0].Priority, key)
		return outcome
	}
	outcome, _ := l.rec.enqueueBatch(l.queueID, entries, key)
	return outcome
}

func (l *workerLoop) consume(ctx context.Context, crashing bool) {
	for ctx.Err() == nil && !l.drained.Load() {
		sent := time.Now()
		deliveries, outcome := l.rec.dequeueBatch(l.queueID, loopMaxMessages, loopWait)
		switch {
		case outcome == history.Unknown:
			l.noteLease(time.Now().Add(chaosVisibilityTimeout))
			time.Sleep(20 * time.Millisecond)
		case outcome == history.Failed:
			time.Sleep(20 * time.Millisecond)
		case len(deliveries) == 0:
			l.noteEmpty(sent)
		default:
			l.noteLease(time.Now().Add(chaosVisibilityTimeout))
			l.handle(ctx, deliveries, sent, crashing)
		}
	}
}

// noteEmpty ends the loop when a dequeue sent after the producers and the redriver were done
// found nothing, and no lease, extend or release delay can still be running.
func (l *workerLoop) noteEmpty(sent time.Time) {
	settled := l.settled.Load()
	if settled == 0 || sent.UnixNano() < settled {
		return
	}
	if time.Since(time.Unix(0, l.leaseUntil.Load())) > leaseQuiet {
		l.drained.Store(true)
	}
}

// handle does with each delivery of a batch what its kind asks, and acknowledges the
// ordinary jobs in one request.
func (l *workerLoop) handle(ctx context.Context, deliveries []history.Delivery, sent time.Time, crashing bool) {
	var done []history.Delivery
	for _, m := range deliveries {
		kind, _, _ := strings.Cut(m.Payload, " ")
		switch {
		case kind == "poison":
		case kind == "fail" && l.failOnce(m.Payload):
		case crashing && rand.Float64() < crashShare:
			if rand.Float64() < lateShare {
				l.side.Go(func() { l.acknowledgeLate(ctx, m, sent) })
			}
		case kind == "slow":
			l.slowJobs.Add(1)
			l.side.Go(func() { l.slowJob(ctx, m) })
		case kind == "release" && m.Attempts == 1:
			l.release(m, sent)
		default:
			done = append(done, m)
		}
	}
	if len(done) > 0 {
		l.acknowledgeInTime(done, sent)
	}
}

// failOnce reports whether a "fail" message is met for the first time, which its consumer
// then leaves to its lease, as one that crashed on it.
func (l *workerLoop) failOnce(payload string) bool {
	_, before := l.failed.LoadOrStore(payload, true)
	return !before
}

// acknowledgeInTime acknowledges deliveries in one request, again while its outcome is
// unknown and the visibility timeout may still run; entries answered false stay as they are.
func (l *workerLoop) acknowledgeInTime(deliveries []history.Delivery, sent time.Time) {
	for time.Since(sent) < chaosVisibilityTimeout {
		if l.rec.acknowledgeBatch(l.queueID, deliveries) != history.Unknown {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// acknowledgeLate acknowledges a delivery once its visibility timeout has ended, as a
// consumer back from a long pause would.
func (l *workerLoop) acknowledgeLate(ctx context.Context, m history.Delivery, sent time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(sent.Add(chaosVisibilityTimeout + 300*time.Millisecond))):
		l.rec.acknowledgeBatch(l.queueID, []history.Delivery{m})
	}
}

// slowJob works on a message for longer than the visibility timeout, extending its lease
// before it would end (a heartbeat), then acknowledges it. A lease_lost answer means the
// lease ended and another consumer may have the message: the job stops there.
func (l *workerLoop) slowJob(ctx context.Context, m history.Delivery) {
	var holds time.Time
	for range 2 {
		switch l.rec.extend(l.queueID, m, slowLease) {
		case history.Failed:
			return
		case history.OK:
			holds = time.Now().Add(slowLease - time.Second)
		}
		l.noteLease(time.Now().Add(slowLease))
		select {
		case <-ctx.Done():
			return
		case <-time.After(slowBeat):
		}
	}
	for time.Now().Before(holds) {
		if l.rec.acknowledge(l.queueID, &m) == history.OK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// release gives a message back at once, or after a second one time in four, again while the
// outcome is unknown and the lease may still run.
func (l *workerLoop) release(m history.Delivery, sent time.Time) {
	delay := time.Duration(0)
	if rand.IntN(4) == 0 {
		delay = time.Second
	}
	l.releasesSent.Add(1)
	for time.Since(sent) < chaosVisibilityTimeout {
		l.noteLease(time.Now().Add(delay))
		if l.rec.release(l.queueID, m, delay) != history.Unknown {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// redrive sends the oldest dead letters back to the queue while the consumers run, until
// redriveTail after the producers are done.
func (l *workerLoop) redrive(ctx context.Context) {
	defer close(l.redriven)
	var tailEnd <-chan time.Time
	for ctx.Err() == nil {
		select {
		case <-l.produced:
			if tailEnd == nil {
				tailEnd = time.After(redriveTail)
			}
		default:
		}
		select {
		case <-tailEnd:
			return
		default:
		}
		l.rec.redrive(l.queueID, redriveLimit)
		time.Sleep(redriveInterval)
	}
}
