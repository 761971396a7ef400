package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadConfig is the configuration of `retsu-bench run`.
type loadConfig struct {
	// urls are the servers; producers and consumers are spread over them in turn.
	urls                 []string
	token, name, out     string
	producers, consumers int
	// batch is the messages of each enqueue, dequeue and acknowledgement; 1 uses the
	// single-message routes, more the batch routes.
	batch int
	// wait is the wait_seconds of the consumers' dequeues: long polls when positive.
	wait time.Duration
	// keyed sends every enqueue with an Idempotency-Key of its own.
	keyed            bool
	warmup, duration time.Duration
	progress         time.Duration
	// emptyWait is how long a consumer that found the queue empty waits before it asks again.
	emptyWait time.Duration
	// maxBacklog pauses the producers while that many of their messages wait to be
	// acknowledged, so that the run measures a steady state; 0 means no bound.
	maxBacklog int64
	// rate caps the enqueues per second of all producers together; 0 means no cap.
	rate float64
	// serverPID, when set, is the server process whose peak memory the result reports.
	serverPID int
}

func parseLoadConfig(args []string, stderr io.Writer) (loadConfig, error) {
	var c loadConfig
	fs := flag.NewFlagSet("retsu-bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("url", "http://127.0.0.1:2424", "base URL of the Retsu server, or several, comma-separated: the workers are spread over them")
	fs.IntVar(&c.batch, "batch", 1, "messages per enqueue, dequeue and acknowledgement (1: the single-message routes; up to 100: the batch routes)")
	fs.DurationVar(&c.wait, "wait", 0, "wait_seconds of the consumers' dequeues, in whole seconds up to 20s (0: no long polling)")
	fs.BoolVar(&c.keyed, "keyed", false, "send every enqueue with an Idempotency-Key of its own")
	fs.StringVar(&c.token, "token", os.Getenv("RETSU_BENCH_TOKEN"), "bearer token, if the server requires one [RETSU_BENCH_TOKEN]")
	fs.StringVar(&c.name, "name", "retsu", "name of this run in the result and the report")
	fs.StringVar(&c.out, "out", "", "file to write the result to, as JSON, for `retsu-bench report`")
	fs.IntVar(&c.producers, "producers", 16, "producers, each enqueueing one message per request")
	fs.IntVar(&c.consumers, "consumers", 16, "consumers, each dequeueing one message and acknowledging it")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "load before the measurement starts")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "length of the measurement")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "interval of the progress lines on stderr")
	fs.DurationVar(&c.emptyWait, "empty-wait", 5*time.Millisecond, "pause of a consumer after an empty dequeue")
	fs.Float64Var(&c.rate, "rate", 0, "enqueues per second of all producers together (0: as fast as they can)")
	fs.Int64Var(&c.maxBacklog, "max-backlog", 1000, "messages enqueued and not yet acknowledged past which producers pause (0: no bound); "+
		"without a bound, producers outrun consumers, the queue grows without end and part of the work is never completed")
	fs.IntVar(&c.serverPID, "server-pid", 0, "process ID of the server, to report its peak memory (Linux)")
	if err := parseFlags(fs, args, false); err != nil {
		return loadConfig{}, err
	}
	c.urls = strings.Split(*urls, ",")
	if c.producers < 1 || c.consumers < 1 || c.duration <= 0 || c.progress <= 0 || c.rate < 0 || c.maxBacklog < 0 {
		fmt.Fprintln(stderr, "producers and consumers must be at least 1; duration and progress positive; rate and max-backlog not negative")
		return loadConfig{}, errUsage
	}
	if c.batch < 1 || c.batch > 100 || c.wait < 0 || c.wait > 20*time.Second || c.wait%time.Second != 0 {
		fmt.Fprintln(stderr, "batch must be 1 to 100, and wait whole seconds from 0 to 20")
		return loadConfig{}, errUsage
	}
	return c, nil
}

// The three operations of a lifecycle.
const (
	opEnqueue = iota
	opDequeue
	opAcknowledge
	operations
)

var operationNames = [operations]string{"enqueue", "dequeue", "acknowledge"}

// priorities are sent in turn, so that the server orders three priorities.
var priorities = [...]string{"HIGH", "MEDIUM", "LOW"}

// payloadText follows each message's token; it is the payload of the PostgreSQL ceiling.
const payloadText = "send welcome email to user 12345"

// load is one run: its workers, its ledger and what it measured.
type load struct {
	cfg loadConfig
	// clients talk to the servers, one each; worker i uses clients[i % len(clients)].
	clients []*client
	queue   queue
	ledger  *ledger
	stopped atomic.Bool
	// measuring is set during the measurement; only then are outcomes recorded.
	measuring atomic.Bool
	// completed counts every completed lifecycle, for the progress lines.
	completed atomic.Int64
	// backlog counts the messages enqueued and not yet acknowledged, for maxBacklog.
	backlog atomic.Int64
	pacer   *pacer
	stats   stats
}

// stats are the outcomes recorded during the measurement.
type stats struct {
	latencies            [operations]histogram
	errors               [operations]atomic.Int64
	lifecycles           atomic.Int64
	emptyDequeues        atomic.Int64
	unknownDeliveries    atomic.Int64
	duplicateDeliveries  atomic.Int64
	lateAcknowledgements atomic.Int64

	mu           sync.Mutex
	errorSamples []string
}

// maxErrorSamples bounds the error texts a result keeps.
const maxErrorSamples = 5

// runLoad creates a queue, runs the producers and consumers against it and reports.
func runLoad(ctx context.Context, cfg loadConfig, stdout, stderr io.Writer) error {
	l := &load{cfg: cfg}
	for _, url := range cfg.urls {
		l.clients = append(l.clients, newClient(url, cfg.token, (cfg.producers+cfg.consumers)/len(cfg.urls)+1))
	}
	q, err := l.clients[0].createQueue(ctx, "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		return err
	}
	l.queue = q
	l.ledger = newLedger(time.Duration(q.VisibilityTimeoutSeconds) * time.Second)
	if cfg.rate > 0 {
		l.pacer = newPacer(cfg.rate)
	}
	fmt.Fprintf(stderr, "%s: %d producers, %d consumers, %d messages a request, wait %s, keyed %v, against %s; %s warm-up, %s measured\n",
		cfg.name, cfg.producers, cfg.consumers, cfg.batch, cfg.wait, cfg.keyed, strings.Join(cfg.urls, ", "), cfg.warmup, cfg.duration)
	var workers sync.WaitGroup
	for p := range cfg.producers {
		workers.Go(func() { l.produce(ctx, p, l.clients[p%len(l.clients)]) })
	}
	for i := range cfg.consumers {
		workers.Go(func() { l.consume(ctx, l.clients[i%len(l.clients)]) })
	}
	measured, intervals := l.pace(ctx, stderr)
	l.stopped.Store(true)
	workers.Wait()
	r := l.result(measured, intervals)
	printResult(stdout, r)
	if cfg.out != "" {
		return writeResult(cfg.out, r)
	}
	return ctx.Err()
}

// pace runs the warm-up and the measurement, printing progress, and returns how long the
// measurement lasted and the lifecycles/s of each progress interval within it.
func (l *load) pace(ctx context.Context, stderr io.Writer) (time.Duration, []float64) {
	start := time.Now()
	warmedUp := time.After(l.cfg.warmup)
	var measureFrom time.Time
	var measured <-chan time.Time // fires when the measurement is over
	ticker := time.NewTicker(l.cfg.progress)
	defer ticker.Stop()
	var intervals []float64
	last, lastCount := start, int64(0)
	for {
		select {
		case now := <-warmedUp:
			measureFrom, measured = now, time.After(l.cfg.duration)
			last, lastCount = now, l.completed.Load()
			ticker.Reset(l.cfg.progress) // progress intervals start with the measurement
			l.measuring.Store(true)
		case now := <-ticker.C:
			count := l.completed.Load()
			rate := l.progressLine(stderr, now.Sub(start), count-lastCount, now.Sub(last))
			if l.measuring.Load() {
				intervals = append(intervals, rate)
			}
			last, lastCount = now, count
		case now := <-measured:
			if now.Sub(last) > l.cfg.progress/4 {
				// The last interval, unless a tick just ended it.
				count := l.completed.Load()
				intervals = append(intervals, l.progressLine(stderr, now.Sub(start), count-lastCount, now.Sub(last)))
			}
			l.measuring.Store(false)
			return now.Sub(measureFrom), intervals
		case <-ctx.Done():
			l.measuring.Store(false)
			if measureFrom.IsZero() {
				return 0, intervals
			}
			return time.Since(measureFrom), intervals
		}
	}
}

// progressLine prints the rate of the completed lifecycles of an interval, at elapsed time
// into the run, and returns it.
func (l *load) progressLine(stderr io.Writer, elapsed time.Duration, completed int64, interval time.Duration) float64 {
	rate := float64(completed) / interval.Seconds()
	phase := "warm-up"
	if l.measuring.Load() {
		phase = "measuring"
	}
	fmt.Fprintf(stderr, "[%4.0fs] %s %s: %s lifecycles/s, %d errors\n",
		elapsed.Seconds(), l.cfg.name, phase, thousands(rate), l.errorCount())
	return rate
}

// produce enqueues messages until the load stops, each with a payload token of its own, a
// batch of cfg.batch at a time.
func (l *load) produce(ctx context.Context, producer int, c *client) {
	batch := make([]message, l.cfg.batch)
	for i := 0; !l.stopped.Load() && ctx.Err() == nil; i++ {
		if l.pacer != nil && !l.pacer.wait(ctx) {
			return
		}
		for l.cfg.maxBacklog > 0 && l.backlog.Load() >= l.cfg.maxBacklog && !l.stopped.Load() {
			sleep(ctx, time.Millisecond)
		}
		prefix := "p" + strconv.Itoa(producer) + "-" + strconv.Itoa(i)
		for j := range batch {
			token := prefix + "-" + strconv.Itoa(j)
			l.ledger.sending(token)
			batch[j] = message{payload: token + " " + payloadText, priority: priorities[(i+j)%len(priorities)]}
		}
		key := ""
		if l.cfg.keyed {
			key = prefix
		}
		sent := time.Now()
		var err error
		if len(batch) == 1 {
			err = c.enqueue(ctx, l.queue.ID, batch[0], key)
		} else {
			err = c.enqueueBatch(ctx, l.queue.ID, batch, key)
		}
		if err == nil {
			l.backlog.Add(int64(len(batch)))
		}
		l.observe(opEnqueue, sent, err)
	}
}

// consume dequeues and acknowledges messages until the load stops, a batch of cfg.batch at
// a time, and counts each lifecycle that the ledger confirms.
func (l *load) consume(ctx context.Context, c *client) {
	for !l.stopped.Load() && ctx.Err() == nil {
		sent := time.Now()
		deliveries, err := l.dequeue(ctx, c)
		l.observe(opDequeue, sent, err)
		if err != nil || len(deliveries) == 0 {
			if err == nil && l.measuring.Load() {
				l.stats.emptyDequeues.Add(1)
			}
			if l.cfg.wait == 0 {
				sleep(ctx, l.cfg.emptyWait)
			}
			continue
		}
		for _, d := range deliveries {
			l.judgeDelivery(d, sent)
		}
		sent = time.Now()
		removed, err := l.acknowledge(ctx, c, deliveries)
		l.observe(opAcknowledge, sent, err)
		if err != nil {
			continue
		}
		for i, d := range deliveries {
			switch {
			case !removed[i]:
			case l.ledger.acknowledged(d, time.Now()):
				l.completed.Add(1)
				l.backlog.Add(-1)
				if l.measuring.Load() {
					l.stats.lifecycles.Add(1)
				}
			case l.measuring.Load():
				l.stats.lateAcknowledgements.Add(1)
			}
		}
	}
}

// dequeue takes the next messages through the route that cfg.batch chooses.
func (l *load) dequeue(ctx context.Context, c *client) ([]delivery, error) {
	if l.cfg.batch > 1 {
		return c.dequeueBatch(ctx, l.queue.ID, l.cfg.batch, l.cfg.wait)
	}
	d, ok, err := c.dequeue(ctx, l.queue.ID, l.cfg.wait)
	if err != nil || !ok {
		return nil, err
	}
	return []delivery{d}, nil
}

// acknowledge completes deliveries through the route that cfg.batch chooses, and reports
// which ones it removed (a single acknowledgement's 204 does not tell: it counts as removed,
// and the ledger judges it).
func (l *load) acknowledge(ctx context.Context, c *client, deliveries []delivery) ([]bool, error) {
	if l.cfg.batch > 1 {
		return c.acknowledgeBatch(ctx, l.queue.ID, deliveries)
	}
	return []bool{true}, c.acknowledge(ctx, l.queue.ID, deliveries[0])
}

// judgeDelivery records a delivery that breaks the contract as an error.
func (l *load) judgeDelivery(d delivery, sent time.Time) {
	switch l.ledger.delivered(d, sent, time.Now()) {
	case deliveryUnknown:
		l.stats.unknownDeliveries.Add(1)
		l.sampleError(fmt.Sprintf("dequeue delivered %s (payload %q), which this run never sent or had completed", d.ID, d.Payload))
	case deliveryDuplicate:
		l.stats.duplicateDeliveries.Add(1)
		l.sampleError(fmt.Sprintf("dequeue delivered %s again during its visibility timeout", d.ID))
	}
}

// observe records the latency or the error of a request sent at sent, during the measurement.
func (l *load) observe(op int, sent time.Time, err error) {
	latency := time.Since(sent)
	if !l.measuring.Load() {
		return
	}
	if err != nil {
		l.stats.errors[op].Add(1)
		l.sampleError(operationNames[op] + ": " + err.Error())
		return
	}
	l.stats.latencies[op].record(latency)
}

func (l *load) sampleError(text string) {
	l.stats.mu.Lock()
	defer l.stats.mu.Unlock()
	if len(l.stats.errorSamples) < maxErrorSamples {
		l.stats.errorSamples = append(l.stats.errorSamples, text)
	}
}

// errorCount counts failed requests and deliveries that broke the contract.
func (l *load) errorCount() int64 {
	n := l.stats.unknownDeliveries.Load() + l.stats.duplicateDeliveries.Load()
	for op := range operations {
		n += l.stats.errors[op].Load()
	}
	return n
}

// result sums up the measurement.
func (l *load) result(measured time.Duration, intervals []float64) result {
	r := result{
		Name: l.cfg.name, Producers: l.cfg.producers, Consumers: l.cfg.consumers,
		Batch: l.cfg.batch, WaitSeconds: l.cfg.wait.Seconds(), Keyed: l.cfg.keyed,
		Seconds:              measured.Seconds(),
		Lifecycles:           l.stats.lifecycles.Load(),
		Errors:               l.errorCount(),
		EmptyDequeues:        l.stats.emptyDequeues.Load(),
		UnknownDeliveries:    l.stats.unknownDeliveries.Load(),
		DuplicateDeliveries:  l.stats.duplicateDeliveries.Load(),
		LateAcknowledgements: l.stats.lateAcknowledgements.Load(),
		ErrorSamples:         l.stats.errorSamples,
		Intervals:            intervals,
	}
	if r.Seconds > 0 {
		r.LifecyclesPerSecond = float64(r.Lifecycles) / r.Seconds
	}
	for op := range operations {
		h := &l.stats.latencies[op]
		r.Operations[op] = operationResult{
			Name: operationNames[op], Requests: h.count(), Errors: l.stats.errors[op].Load(),
			P50: milliseconds(h.quantile(0.50)), P90: milliseconds(h.quantile(0.90)), P99: milliseconds(h.quantile(0.99)),
		}
	}
	if l.cfg.serverPID > 0 {
		r.ServerPeakRSSBytes = peakRSS(l.cfg.serverPID)
	}
	return r
}

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pacer spaces the enqueues of all producers evenly at a given rate.
type pacer struct {
	start    time.Time
	interval time.Duration
	next     atomic.Int64
}

func newPacer(perSecond float64) *pacer {
	return &pacer{start: time.Now(), interval: time.Duration(float64(time.Second) / perSecond)}
}

// wait takes the next slot and waits for its time; it returns false when ctx ended first.
func (p *pacer) wait(ctx context.Context) bool {
	slot := p.start.Add(time.Duration(p.next.Add(1)-1) * p.interval)
	if d := time.Until(slot); d > 0 {
		sleep(ctx, d)
	}
	return ctx.Err() == nil
}

// writeResult writes r to path as JSON.
func writeResult(path string, r result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
