package main

import (
	"context"
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

// latencyConfig is the configuration of `retsu-bench latency`.
type latencyConfig struct {
	url, consumerURL, token string
	consumers, messages     int
	interval                time.Duration
}

func parseLatencyConfig(args []string, stderr io.Writer) (latencyConfig, error) {
	var c latencyConfig
	fs := flag.NewFlagSet("retsu-bench latency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:2424", "base URL of the Retsu server the producer enqueues on")
	fs.StringVar(&c.consumerURL, "consumer-url", "", "base URL of the server the consumers long-poll (default: -url)")
	fs.StringVar(&c.token, "token", os.Getenv("RETSU_BENCH_TOKEN"), "bearer token, if the servers require one [RETSU_BENCH_TOKEN]")
	fs.IntVar(&c.consumers, "consumers", 16, "consumers long-polling the queue (20 s waits)")
	fs.IntVar(&c.messages, "messages", 500, "messages to send, one at a time; 0 sends none, and the consumers wait for -interval")
	fs.DurationVar(&c.interval, "interval", 20*time.Millisecond, "pause between two messages (with -messages 0: how long the consumers wait)")
	if err := parseFlags(fs, args, false); err != nil {
		return latencyConfig{}, err
	}
	if c.consumerURL == "" {
		c.consumerURL = c.url
	}
	if c.consumers < 1 || c.messages < 0 || c.interval <= 0 {
		fmt.Fprintln(stderr, "latency needs at least one consumer, messages not negative and a positive interval")
		return latencyConfig{}, errUsage
	}
	return c, nil
}

// latency measures how soon a message reaches a consumer that waits for one: consumers
// long-poll an empty queue on one server while a producer enqueues one message at a time on
// another (or the same), and each delivery's latency is the time from the send of its
// enqueue to the arrival of its dequeue's answer, on this process's clock. With no messages
// it only holds the consumers waiting, for measuring what waiting costs the server.
func latency(ctx context.Context, cfg latencyConfig, stdout, stderr io.Writer) error {
	producer := newClient(cfg.url, cfg.token, 1)
	consumer := newClient(cfg.consumerURL, cfg.token, cfg.consumers)
	q, err := producer.createQueue(ctx, "latency-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		return err
	}
	var h histogram
	var received, failed atomic.Int64
	done := make(chan struct{})
	var consumers sync.WaitGroup
	for range cfg.consumers {
		consumers.Go(func() {
			for ctx.Err() == nil {
				select {
				case <-done:
					return
				default:
				}
				d, ok, err := consumer.dequeue(ctx, q.ID, 20*time.Second)
				if err != nil {
					failed.Add(1)
					continue
				}
				if !ok {
					continue
				}
				arrived := time.Now()
				sentNanos, err := strconv.ParseInt(tokenOf(d.Payload), 10, 64)
				if err == nil {
					h.record(arrived.Sub(time.Unix(0, sentNanos)))
					received.Add(1)
				}
				if err := consumer.acknowledge(ctx, q.ID, d); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	fmt.Fprintf(stderr, "latency: %d consumers long-polling %s, a message every %s enqueued on %s\n",
		cfg.consumers, cfg.consumerURL, cfg.interval, cfg.url)
	time.Sleep(500 * time.Millisecond) // the consumers are waiting when the first message comes
	if cfg.messages == 0 {
		sleep(ctx, cfg.interval)
	}
	for i := 0; i < cfg.messages && ctx.Err() == nil; i++ {
		sent := time.Now()
		if err := producer.enqueue(ctx, q.ID, message{payload: strconv.FormatInt(sent.UnixNano(), 10) + " " + payloadText, priority: "MEDIUM"}, ""); err != nil {
			failed.Add(1)
		}
		sleep(ctx, cfg.interval)
	}
	for deadline := time.Now().Add(5 * time.Second); received.Load() < int64(cfg.messages) && time.Now().Before(deadline); {
		sleep(ctx, 10*time.Millisecond)
	}
	close(done)
	// The consumers that wait return within their 20 s wait; the numbers are in already.
	fmt.Fprintf(stdout, "enqueue-to-delivery p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%d of %d messages)\n",
		milliseconds(h.quantile(0.50)), milliseconds(h.quantile(0.90)), milliseconds(h.quantile(0.99)), milliseconds(h.quantile(1)),
		received.Load(), cfg.messages)
	fmt.Fprintf(stdout, "errors %d; consumers on %s, producer on %s\n", failed.Load(), cfg.consumerURL,
		strings.TrimSpace(cfg.url))
	return ctx.Err()
}
