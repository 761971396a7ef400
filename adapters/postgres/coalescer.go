package postgres

import (
	"context"
	"slices"
	"sync"
	"time"
)

// coalescer carries out concurrent requests in batches, group-commit style. A request that
// arrives while fewer than maxRunning batches run leaves at once, alone or with whatever else
// waits; requests that arrive while every batch slot is busy wait together and leave as the
// next batch when a slot frees (after its prepare, if one is set). No timer ever delays a
// request, so an idle server answers a lone request as fast as without coalescing, and a busy
// one sends fewer, larger batches the busier it gets. The MessageStore's batches are its
// rounds (see round).
//
// Each requester waits for the outcome of its own batch: run's answer for it, or run's error,
// which reaches every request of the batch. Batches run on a context of their own, bounded by
// timeout, because a batch serves many requesters and none of them may cancel it for the
// others. A requester whose context ends before its batch leaves is taken out and gets its
// context's error: nothing was done for it. Once its batch has left, it waits for the batch's
// outcome and gets it, whatever its context says: an error answered then would hide work
// that was done, such as a message stored, or a delivery made that nobody receives.
type coalescer[Request, Answer any] struct {
	run    func(ctx context.Context, slot int, batch []Request, answers []Answer) error
	limits batchLimits
	// cost weighs a request against limits.maxCost; nil counts every request as 1.
	cost func(Request) int
	// prepare, when set, runs in a slot before the slot takes each batch, and may wait there
	// (for the database's round lock, say: see MessageStore.prepareRound) so that the batch
	// takes every request that arrived meanwhile; requests that give up meanwhile are taken
	// out, as from any wait. busy says that requests waited when the slot's previous batch
	// ended (when run returned, before its requesters were answered); it is false for the
	// first batch of a slot that was idle, and whenever nothing waited at that moment.
	// It returns nil, or a function that undoes what it did when no request is left to take.
	// Set it before the first request.
	prepare func(slot int, busy bool) (undo func())

	mu      sync.Mutex
	waiting []*pendingCall[Request, Answer] // in arrival order
	free    []int                           // the numbers of the batch slots not in use
	closed  bool
	slots   sync.WaitGroup // one per running slot, for close
}

// batchLimits bound the work of a coalescer.
type batchLimits struct {
	// maxRunning is the number of batches that may run at once.
	maxRunning int
	// maxCost bounds the total cost of a batch; a batch always takes at least one request,
	// so a request costlier than maxCost leaves alone.
	maxCost int
	// timeout bounds each batch.
	timeout time.Duration
}

// pendingCall is one request waiting for its batch; done is closed once answer or err is set.
type pendingCall[Request, Answer any] struct {
	request Request
	answer  Answer
	err     error
	done    chan struct{}
}

// newCoalescer returns a coalescer that carries out batches with run, which learns the number
// of the slot, from 0 to maxRunning-1, that the batch runs in. run must fill answers[i] for
// batch[i] when it returns nil.
func newCoalescer[Request, Answer any](limits batchLimits, cost func(Request) int,
	run func(ctx context.Context, slot int, batch []Request, answers []Answer) error) *coalescer[Request, Answer] {
	limits.maxRunning = max(limits.maxRunning, 1)
	limits.maxCost = max(limits.maxCost, 1)
	free := make([]int, limits.maxRunning)
	for i := range free {
		free[i] = limits.maxRunning - 1 - i // slot 0 is taken first
	}
	return &coalescer[Request, Answer]{run: run, limits: limits, cost: cost, free: free}
}

// do carries out request in the next batch and returns its answer once the batch is done.
// When ctx ends before the batch leaves, do takes the request out and returns ctx's error;
// once the batch has left, do returns its outcome, after ctx ended if need be (the batch's
// timeout bounds the wait). Returns errClosed after close.
func (c *coalescer[Request, Answer]) do(ctx context.Context, request Request) (Answer, error) {
	call := &pendingCall[Request, Answer]{request: request, done: make(chan struct{})}
	if err := c.submit(call); err != nil {
		var zero Answer
		return zero, err
	}
	return c.await(ctx, call)
}

// await returns the outcome of call, submitted, as do describes.
func (c *coalescer[Request, Answer]) await(ctx context.Context, call *pendingCall[Request, Answer]) (Answer, error) {
	select {
	case <-call.done:
		return call.answer, call.err
	case <-ctx.Done():
	}
	if c.withdraw(call) {
		var zero Answer
		return zero, ctx.Err()
	}
	<-call.done
	return call.answer, call.err
}

// doAll carries out requests as do would each, queued together so that they go in the same
// batch where the cost limit allows, and returns each one's answer and error. It returns
// errClosed, having queued none of them, after close.
func (c *coalescer[Request, Answer]) doAll(ctx context.Context, requests []Request) ([]Answer, []error, error) {
	calls := make([]*pendingCall[Request, Answer], len(requests))
	for i, r := range requests {
		calls[i] = &pendingCall[Request, Answer]{request: r, done: make(chan struct{})}
	}
	if err := c.submit(calls...); err != nil {
		return nil, nil, err
	}
	answers, errs := make([]Answer, len(calls)), make([]error, len(calls))
	for i, call := range calls {
		answers[i], errs[i] = c.await(ctx, call)
	}
	return answers, errs, nil
}

// submit queues calls and, when a batch slot is free, starts a batch at once.
func (c *coalescer[Request, Answer]) submit(calls ...*pendingCall[Request, Answer]) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.waiting = append(c.waiting, calls...)
	slot := -1
	if len(c.free) > 0 {
		slot, c.free = c.free[len(c.free)-1], c.free[:len(c.free)-1]
		c.slots.Add(1)
	}
	c.mu.Unlock()
	if slot >= 0 {
		go c.runSlot(slot)
	}
	return nil
}

// runSlot carries out the waiting requests in batches, each taking those that arrived while
// the one before it ran, until none waits.
func (c *coalescer[Request, Answer]) runSlot(slot int) {
	defer c.slots.Done()
	busy := false // whether requests waited when the slot's previous batch ended
	for {
		var batch []*pendingCall[Request, Answer]
		c.mu.Lock()
		if c.prepare == nil {
			batch = c.takeBatch()
		}
		idle := len(c.waiting) == 0 && len(batch) == 0
		if idle {
			c.free = append(c.free, slot)
		}
		c.mu.Unlock()
		if idle {
			return
		}
		if batch == nil {
			undo := c.prepare(slot, busy)
			c.mu.Lock()
			batch = c.takeBatch()
			c.mu.Unlock()
			if len(batch) == 0 {
				// Everyone gave up while the slot was prepared: undo it before the slot
				// may be taken again, then look once more (busy as it was: whoever
				// arrived meanwhile waited for the preparation).
				if undo != nil {
					undo()
				}
				continue
			}
		}
		busy = c.execute(slot, batch)
	}
}

// takeBatch removes the oldest waiting requests, up to the cost limit, and returns them.
// Taking the oldest first keeps the coalescer fair: no request is overtaken by one that
// arrived after it, whichever queue either is for. Called with mu held.
func (c *coalescer[Request, Answer]) takeBatch() []*pendingCall[Request, Answer] {
	n, total := 0, 0
	for _, call := range c.waiting {
		total += c.costOf(call.request)
		if n > 0 && total > c.limits.maxCost {
			break
		}
		n++
	}
	batch := c.waiting[:n:n]
	// A fresh array for the rest, so that the batch owns the one it was cut from.
	c.waiting = slices.Clone(c.waiting[n:])
	return batch
}

func (c *coalescer[Request, Answer]) costOf(r Request) int {
	if c.cost == nil {
		return 1
	}
	return c.cost(r)
}

// withdraw removes call from the waiting requests and reports whether it was still there.
func (c *coalescer[Request, Answer]) withdraw(call *pendingCall[Request, Answer]) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.waiting, call)
	if i < 0 {
		return false
	}
	c.waiting = slices.Delete(c.waiting, i, i+1)
	return true
}

// execute runs one batch and answers each of its requests. It reports whether requests
// waited when the batch ended, before its requesters were answered: a requester that sends
// its next request once answered did not wait for this batch.
func (c *coalescer[Request, Answer]) execute(slot int, batch []*pendingCall[Request, Answer]) (busy bool) {
	requests := make([]Request, len(batch))
	for i, call := range batch {
		requests[i] = call.request
	}
	answers := make([]Answer, len(batch))
	ctx, cancel := context.WithTimeout(context.Background(), c.limits.timeout)
	err := c.run(ctx, slot, requests, answers)
	cancel()
	c.mu.Lock()
	busy = len(c.waiting) > 0
	c.mu.Unlock()
	for i, call := range batch {
		if err != nil {
			call.err = err
		} else {
			call.answer = answers[i]
		}
		close(call.done)
	}
	return busy
}

// close refuses new requests and returns once every request already made is answered.
func (c *coalescer[Request, Answer]) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.slots.Wait()
}
