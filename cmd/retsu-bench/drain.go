package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// drainConfig is the configuration of `retsu-bench drain`.
type drainConfig struct {
	url, token, queueID string
	deliveries          int
	consumers           int
}

func parseDrainConfig(args []string, stderr io.Writer) (drainConfig, error) {
	var c drainConfig
	fs := flag.NewFlagSet("retsu-bench drain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:2424", "base URL of the Retsu server")
	fs.StringVar(&c.token, "token", os.Getenv("RETSU_BENCH_TOKEN"), "bearer token, if the server requires one [RETSU_BENCH_TOKEN]")
	fs.StringVar(&c.queueID, "queue", "", "ID of the queue to take messages from (required)")
	fs.IntVar(&c.deliveries, "deliveries", 1000, "messages to dequeue and acknowledge")
	fs.IntVar(&c.consumers, "consumers", 1, "consumers, each dequeueing one message and acknowledging it")
	if err := parseFlags(fs, args, false); err != nil {
		return drainConfig{}, err
	}
	if c.queueID == "" || c.deliveries < 1 || c.consumers < 1 {
		fmt.Fprintln(stderr, "drain needs -queue, and deliveries and consumers of at least 1")
		return drainConfig{}, errUsage
	}
	return c, nil
}

// drain dequeues and acknowledges messages that are already in a queue, and reports the
// latencies: the cost of a dequeue for a queue in a given state, whatever filled it.
func drain(ctx context.Context, cfg drainConfig, stdout io.Writer) error {
	c := newClient(cfg.url, cfg.token, cfg.consumers)
	var latencies [operations]histogram
	var remaining, empty, failed atomic.Int64
	remaining.Store(int64(cfg.deliveries))
	var consumers sync.WaitGroup
	for range cfg.consumers {
		consumers.Go(func() {
			for remaining.Add(-1) >= 0 && ctx.Err() == nil {
				sent := time.Now()
				d, ok, err := c.dequeue(ctx, cfg.queueID, 0)
				if err != nil {
					failed.Add(1)
					continue
				}
				latencies[opDequeue].record(time.Since(sent))
				if !ok {
					empty.Add(1)
					continue
				}
				sent = time.Now()
				if err := c.acknowledge(ctx, cfg.queueID, d); err != nil {
					failed.Add(1)
					continue
				}
				latencies[opAcknowledge].record(time.Since(sent))
			}
		})
	}
	consumers.Wait()
	for _, op := range []int{opDequeue, opAcknowledge} {
		h := &latencies[op]
		fmt.Fprintf(stdout, "%-12s p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  (%d requests)\n", operationNames[op],
			milliseconds(h.quantile(0.50)), milliseconds(h.quantile(0.90)), milliseconds(h.quantile(0.99)), h.count())
	}
	fmt.Fprintf(stdout, "empty dequeues %d, errors %d\n", empty.Load(), failed.Load())
	return ctx.Err()
}
