package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// gatedRun is a batch function for tests: it records each batch, holds it until the test
// opens its gate, and answers every request r with 10*r or with the error the test chose.
type gatedRun struct {
	mu      sync.Mutex
	batches [][]int
	gates   []chan error
	started chan struct{} // receives once per batch, when the batch starts
	// contexts are the contexts the batches ran on.
	contexts []context.Context
}

func newGatedRun() *gatedRun { return &gatedRun{started: make(chan struct{}, 100)} }

func (g *gatedRun) run(ctx context.Context, _ int, batch []int, answers []int) error {
	gate := make(chan error, 1)
	g.mu.Lock()
	g.batches = append(g.batches, slices.Clone(batch))
	g.gates = append(g.gates, gate)
	g.contexts = append(g.contexts, ctx)
	g.mu.Unlock()
	g.started <- struct{}{}
	if err := <-gate; err != nil {
		return err
	}
	for i, r := range batch {
		answers[i] = 10 * r
	}
	return nil
}

// open lets batch i finish with err.
func (g *gatedRun) open(i int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gates[i] <- err
}

func (g *gatedRun) batch(i int) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.batches[i]
}

// waitStarted waits for the next batch to start.
func (g *gatedRun) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(5 * time.Second):
		t.Fatal("no batch started")
	}
}

// callResult is what one call of do returned.
type callResult struct {
	answer int
	err    error
}

// submit calls do in a goroutine and returns a channel for its callResult, once the request is
// queued behind the running batches.
func submit(t *testing.T, c *coalescer[int, int], ctx context.Context, request int) <-chan callResult {
	t.Helper()
	before := waitingCount(c)
	out := make(chan callResult, 1)
	go func() {
		answer, err := c.do(ctx, request)
		out <- callResult{answer, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for waitingCount(c) == before {
		if time.Now().After(deadline) {
			t.Fatalf("request %d was not queued", request)
		}
		time.Sleep(time.Millisecond)
	}
	return out
}

func waitingCount(c *coalescer[int, int]) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

func receive(t *testing.T, out <-chan callResult) callResult {
	t.Helper()
	select {
	case o := <-out:
		return o
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return callResult{}
	}
}

var oneAtATime = batchLimits{maxRunning: 1, maxCost: 100, timeout: time.Minute}

func TestCoalescer_LoneRequest_LeavesAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := newCoalescer(oneAtATime, nil, func(_ context.Context, _ int, batch, answers []int) error {
		answers[0] = batch[0] + 1
		return nil
	})
	answer, err := c.do(context.Background(), 41)
	is.NoErr(err)
	is.Equal(answer, 42) // the lone request is carried out without waiting for company
}

func TestCoalescer_RequestsArrivingDuringABatch_LeaveTogetherInArrivalOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	first := submitRunning(t, c, g, 1)
	var rest []<-chan callResult
	for r := 2; r <= 6; r++ {
		rest = append(rest, submit(t, c, context.Background(), r))
	}
	g.open(0, nil)
	is.Equal(receive(t, first).answer, 10) // the first request had its own batch
	g.waitStarted(t)
	is.Equal(g.batch(1), []int{2, 3, 4, 5, 6}) // the others waited and left as one batch, in arrival order
	g.open(1, nil)
	for i, out := range rest {
		is.Equal(receive(t, out), callResult{answer: 10 * (i + 2)}) // each request gets its own answer
	}
}

// submitRunning submits request and waits until its batch runs.
func submitRunning(t *testing.T, c *coalescer[int, int], g *gatedRun, request int) <-chan callResult {
	t.Helper()
	out := make(chan callResult, 1)
	go func() {
		answer, err := c.do(context.Background(), request)
		out <- callResult{answer, err}
	}()
	g.waitStarted(t)
	return out
}

func TestCoalescer_RunsAtMostMaxRunningBatchesAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(batchLimits{maxRunning: 2, maxCost: 100, timeout: time.Minute}, nil, g.run)
	first := submitRunning(t, c, g, 1)
	second := submitRunning(t, c, g, 2) // a second slot is free: it leaves at once too
	third := submit(t, c, context.Background(), 3)
	is.Equal(waitingCount(c), 1) // with both slots busy, the third waits
	g.open(1, nil)
	is.Equal(receive(t, second).answer, 20)
	g.waitStarted(t)
	is.Equal(g.batch(2), []int{3}) // it leaves as soon as a slot frees
	g.open(2, nil)
	g.open(0, nil)
	is.Equal(receive(t, third).answer, 30)
	is.Equal(receive(t, first).answer, 10)
}

func TestCoalescer_BatchCostIsBounded(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	cost := func(r int) int { return r }
	c := newCoalescer(batchLimits{maxRunning: 1, maxCost: 5, timeout: time.Minute}, cost, g.run)
	first := submitRunning(t, c, g, 1)
	outs := []<-chan callResult{first}
	for _, r := range []int{2, 3, 9, 1} {
		outs = append(outs, submit(t, c, context.Background(), r))
	}
	for i := range 4 {
		g.open(i, nil)
		if i < 3 {
			g.waitStarted(t)
		}
	}
	is.Equal(g.batch(1), []int{2, 3}) // 2+3 fill the budget of 5
	is.Equal(g.batch(2), []int{9})    // a request costlier than the budget leaves alone
	is.Equal(g.batch(3), []int{1})
	for _, out := range outs {
		is.NoErr(receive(t, out).err) // and every request is answered
	}
}

func TestCoalescer_OldestRequestsLeaveFirst_WhateverTheirQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	// Requests 1xx stand for a busy queue, 2xx for a quiet one.
	c := newCoalescer(batchLimits{maxRunning: 1, maxCost: 3, timeout: time.Minute}, nil, g.run)
	outs := []<-chan callResult{submitRunning(t, c, g, 100)}
	for _, r := range []int{101, 102, 200, 103, 104, 105} {
		outs = append(outs, submit(t, c, context.Background(), r))
	}
	g.open(0, nil)
	g.waitStarted(t)
	g.open(1, nil)
	g.waitStarted(t)
	g.open(2, nil)
	is.Equal(g.batch(1), []int{101, 102, 200}) // the quiet queue's request is not overtaken by later ones
	is.Equal(g.batch(2), []int{103, 104, 105})
	for _, out := range outs {
		is.NoErr(receive(t, out).err)
	}
}

func TestCoalescer_Error_ReachesEveryRequestOfItsBatchOnly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	first := submitRunning(t, c, g, 1)
	second, third := submit(t, c, context.Background(), 2), submit(t, c, context.Background(), 3)
	failure := errors.New("connection lost")
	g.open(0, nil)
	g.waitStarted(t)
	g.open(1, failure)
	is.Equal(receive(t, first).answer, 10)              // the earlier batch succeeded
	is.True(errors.Is(receive(t, second).err, failure)) // the failed batch's error reaches its first request
	is.True(errors.Is(receive(t, third).err, failure))  // and its second
	fourth := submitRunning(t, c, g, 4)                 // the coalescer goes on
	g.open(2, nil)
	is.Equal(receive(t, fourth).answer, 40) // with a batch of its own
}

func TestCoalescer_CancelledWaiter_LeavesTheQueueOthersGoOn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	first := submitRunning(t, c, g, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := submit(t, c, ctx, 2)
	kept := submit(t, c, context.Background(), 3)
	cancel()
	is.True(errors.Is(receive(t, cancelled).err, context.Canceled)) // the waiter returns at once with its context's error
	g.open(0, nil)
	g.waitStarted(t)
	is.Equal(g.batch(1), []int{3}) // and its request never leaves
	g.open(1, nil)
	is.Equal(receive(t, first).answer, 10)
	is.Equal(receive(t, kept).answer, 30)
}

func TestCoalescer_RequesterWhoseBatchLeft_WaitsForItsOutcome(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan callResult, 1)
	go func() {
		answer, err := c.do(ctx, 1)
		out <- callResult{answer, err}
	}()
	g.waitStarted(t)
	cancel()
	select {
	case <-out:
		t.Fatal("the requester returned before its batch's outcome was known")
	case <-time.After(50 * time.Millisecond):
	}
	g.mu.Lock()
	batchCtx := g.contexts[0]
	g.mu.Unlock()
	is.NoErr(batchCtx.Err()) // its batch goes on, whatever its requesters' contexts
	_, hasDeadline := batchCtx.Deadline()
	is.True(hasDeadline) // within the coalescer's timeout
	g.open(0, nil)
	got := receive(t, out)
	is.NoErr(got.err)        // once the batch is done, the requester gets its outcome,
	is.Equal(got.answer, 10) // the truth about what was done for it, not its context's error
}

func TestCoalescer_Close_AnswersRequestsInFlightAndRefusesNewOnes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	running := submitRunning(t, c, g, 1)
	waiting := submit(t, c, context.Background(), 2)
	closed := make(chan struct{})
	go func() {
		c.close()
		close(closed)
	}()
	for {
		c.mu.Lock()
		isClosed := c.closed
		c.mu.Unlock()
		if isClosed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, err := c.do(context.Background(), 3)
	is.True(errors.Is(err, errClosed)) // a request after close is refused
	select {
	case <-closed:
		t.Fatal("close returned with requests in flight")
	default:
	}
	g.open(0, nil)
	g.waitStarted(t)
	g.open(1, nil)
	is.Equal(receive(t, running).answer, 10) // the running batch was answered
	is.Equal(receive(t, waiting).answer, 20) // and so was the request waiting behind it
	select {
	case <-closed: // close returned once both were answered
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return")
	}
}

func TestCoalescer_Prepare_BatchTakesTheRequestsOfTheWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	entered, release := make(chan struct{}, 4), make(chan struct{})
	var batches [][]int
	c := newCoalescer(oneAtATime, nil, func(_ context.Context, _ int, batch, answers []int) error {
		batches = append(batches, slices.Clone(batch))
		return nil
	})
	c.prepare = func(int, bool) func() {
		entered <- struct{}{}
		<-release
		return nil
	}
	outs := []<-chan callResult{submit(t, c, context.Background(), 1)}
	<-entered // the slot waits in prepare, before taking its batch
	for r := 2; r <= 4; r++ {
		outs = append(outs, submit(t, c, context.Background(), r))
	}
	close(release)
	for _, out := range outs {
		is.NoErr(receive(t, out).err)
	}
	is.Equal(batches, [][]int{{1, 2, 3, 4}}) // the requests of the wait went with the first
}

func TestCoalescer_Prepare_UndoneWhenEveryoneGaveUp(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	entered, release, undone := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	ran := false
	c := newCoalescer(oneAtATime, nil, func(context.Context, int, []int, []int) error {
		ran = true
		return nil
	})
	c.prepare = func(int, bool) func() {
		entered <- struct{}{}
		<-release
		return func() { close(undone) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := submit(t, c, ctx, 1)
	<-entered
	cancel()
	is.Equal(receive(t, out).err, context.Canceled) // the request gave up while the slot was prepared
	close(release)
	select {
	case <-undone: // so the slot undid its preparation
	case <-time.After(5 * time.Second):
		t.Fatal("the preparation was not undone")
	}
	c.close()
	is.True(!ran) // and ran no batch
}

func TestCoalescer_Prepare_BusyWhenTheBatchFollowsAnother(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newGatedRun()
	c := newCoalescer(oneAtATime, nil, g.run)
	var mu sync.Mutex
	var busy []bool
	c.prepare = func(_ int, b bool) func() {
		mu.Lock()
		busy = append(busy, b)
		mu.Unlock()
		return nil
	}
	seen := func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(busy)
	}
	first := submitRunning(t, c, g, 1)
	second := submit(t, c, context.Background(), 2) // arrives while the first batch runs
	g.open(0, nil)
	is.NoErr(receive(t, first).err)
	g.waitStarted(t)
	g.open(1, nil)
	is.NoErr(receive(t, second).err)
	is.Equal(seen(), []bool{false, true}) // an idle slot's batch leaves at once; the one that waited for it follows

	waitIdle(t, c)
	third := submitRunning(t, c, g, 3) // the slot was idle again
	g.open(2, nil)
	is.NoErr(receive(t, third).err)
	is.Equal(seen(), []bool{false, true, false})
}

// waitIdle waits until every slot of c is free.
func waitIdle(t *testing.T, c *coalescer[int, int]) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		idle := len(c.free) == c.limits.maxRunning
		c.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the coalescer's slots did not go idle")
		}
	}
}
