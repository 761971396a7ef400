package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// BenchmarkCoalescer measures what the coalescer adds to each request, with a batch function
// that stands for a database round trip of the given duration. With callers waiting in
// parallel, requests/batch shows how many share each round trip.
func BenchmarkCoalescer(b *testing.B) {
	for _, bc := range []struct {
		name      string
		callers   int
		roundTrip time.Duration
	}{
		{"lone caller, instant database", 1, 0},
		{"16 callers, instant database", 16, 0},
		{"16 callers, 200µs database", 16, 200 * time.Microsecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var batches atomic.Int64
			c := newCoalescer(batchLimits{maxRunning: 1, maxCost: maxRound, timeout: time.Minute}, nil,
				func(_ context.Context, _ int, batch, answers []int) error {
					batches.Add(1)
					time.Sleep(bc.roundTrip)
					copy(answers, batch)
					return nil
				})
			defer c.close()
			b.ReportAllocs()
			requests := 0
			for b.Loop() {
				requests += callConcurrently(b, c, bc.callers)
			}
			b.ReportMetric(float64(requests)/float64(batches.Load()), "requests/batch")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(requests), "ns/request")
		})
	}
}

// callConcurrently makes one request from each of callers goroutines and waits for all.
func callConcurrently(b *testing.B, c *coalescer[int, int], callers int) int {
	if callers == 1 {
		if _, err := c.do(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
		return 1
	}
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if answer, err := c.do(context.Background(), i); err != nil || answer != i {
				b.Errorf("request %d: answer %d, %v", i, answer, err)
			}
		})
	}
	wg.Wait()
	return callers
}

// BenchmarkNewRound measures sorting a busy round's operations into its statements.
func BenchmarkNewRound(b *testing.B) {
	queues := []domain.ID{newBenchID(), newBenchID()}
	var batch []operation
	for i := range 48 {
		q := queues[i%len(queues)]
		switch i % 3 {
		case 0:
			batch = append(batch, operation{kind: enqueueOperation, queueID: q, enqueue: ports.EnqueueParams{QueueID: q, Messages: []domain.Enqueue{{
				QueueID: q, MessageID: newBenchID(), Priority: domain.PriorityMedium,
				Payload: "send welcome email to user 12345", TTL: time.Hour, VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 5,
			}}}})
		case 1:
			batch = append(batch, operation{kind: dequeueOperation, queueID: q, dequeue: ports.DequeueParams{QueueID: q, Max: 1}})
		default:
			batch = append(batch, operation{kind: acknowledgeOperation, queueID: q,
				receipts: []domain.Receipt{{MessageID: newBenchID(), ReceiptHandle: newBenchID()}}})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		r := newRound(batch)
		if r.statements(batch).Len() != 1+len(queues)+1 {
			b.Fatal("unexpected statements")
		}
	}
}

func newBenchID() domain.ID { return domain.ID(uuid.Must(uuid.NewV7())) }
