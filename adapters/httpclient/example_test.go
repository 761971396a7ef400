package httpclient_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// startExampleAPI serves Retsu's HTTP API over memory stores in process, standing in for
// `retsu serve` in the examples, and returns its URL and how to stop it.
func startExampleAPI() (url string, stop func()) {
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	server := httptest.NewServer(httpapi.NewHandler(svc, httpapi.Options{}))
	return server.URL, func() { svc.Close(); server.Close() }
}

// ExampleNew calls a remote Retsu and tests an error by its code.
func ExampleNew() {
	url, stopAPI := startExampleAPI() // in a real program: "http://127.0.0.1:2424"
	defer stopAPI()
	ctx := context.Background()
	client, err := httpclient.New(url, httpclient.Options{}) // Options.Token: the bearer token, when the server has tokens
	if err != nil {
		log.Fatal(err)
	}
	queue, err := client.CreateQueue(ctx, domain.NewQueue{Name: "emails"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.CreateQueue(ctx, domain.NewQueue{Name: "emails"})
	fmt.Println(errors.Is(err, domain.ErrQueueAlreadyExists), domain.ErrorCode(err))

	enqueued, err := client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queue.ID, Batch: true, Messages: []domain.NewMessage{
		{Payload: "welcome", Priority: domain.PriorityHigh},
		{Payload: "newsletter"}, // no priority
	}})
	var entry *domain.EntryError
	fmt.Println(len(enqueued.IDs), errors.As(err, &entry) && entry.Index == 1, domain.ErrorCode(err))
	// Output:
	// true queue_already_exists
	// 0 true invalid_priority
}

// ExampleWorker runs a worker over a queue: one handler at a time here, so that the output
// shows the delivery order (HIGH first, then first in, first out). The worker extends each
// running message's lease, acknowledges what its handler completed, and, when its context
// ends, stops cleanly; this handler ends it after the third message.
func ExampleWorker() {
	url, stopAPI := startExampleAPI()
	defer stopAPI()
	ctx := context.Background()
	client, err := httpclient.New(url, httpclient.Options{})
	if err != nil {
		log.Fatal(err)
	}
	queue, err := client.CreateQueue(ctx, domain.NewQueue{Name: "emails"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queue.ID, Batch: true, Messages: []domain.NewMessage{
		{Payload: "newsletter to ana", Priority: domain.PriorityLow},
		{Payload: "welcome ana", Priority: domain.PriorityHigh},
		{Payload: "receipt for ana", Priority: domain.PriorityMedium},
	}})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := context.WithCancel(ctx)
	handled := 0
	worker := httpclient.NewWorker(client, queue.ID, func(ctx context.Context, d domain.Delivery) error {
		fmt.Printf("sending %q (attempt %d)\n", d.Payload, d.DeliveryAttempts)
		if handled++; handled == 3 {
			stop() // a real program stops on SIGTERM instead
		}
		return nil // nil acknowledges; an error releases the message to come back after a backoff
	}, httpclient.WorkerOptions{Concurrency: 1})
	if err := worker.Run(ctx); err != nil {
		log.Fatal(err)
	}

	stats, err := client.Stats(context.Background(), queue.ID)
	if err != nil {
		log.Fatal(err)
	}
	left := int64(0)
	for _, p := range stats.Priorities {
		left += p.Ready + p.InFlight
	}
	fmt.Println("left in the queue:", left)
	// Output:
	// sending "welcome ana" (attempt 1)
	// sending "receipt for ana" (attempt 1)
	// sending "newsletter to ana" (attempt 1)
	// left in the queue: 0
}
