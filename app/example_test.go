package app_test

import (
	"context"
	"fmt"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// Example embeds Retsu's core in a Go program with the memory adapters: no database, and
// nothing durable. It creates a queue, enqueues two messages, and takes the HIGH one first.
func Example() {
	ctx := context.Background()
	retsu := app.NewService(app.Ports{
		Queues:   memory.NewQueueStore(memory.QueueStoreOptions{}),
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})

	queue, err := retsu.CreateQueue(ctx, domain.NewQueue{Name: "emails"})
	if err != nil {
		panic(err)
	}
	fmt.Println(queue.Name, queue.VisibilityTimeout, queue.MaxDeliveryAttempts)

	if _, err := retsu.Enqueue(ctx, queue.ID, domain.NewMessage{Payload: "newsletter", Priority: domain.PriorityLow}); err != nil {
		panic(err)
	}
	if _, err := retsu.Enqueue(ctx, queue.ID, domain.NewMessage{Payload: "send welcome email", Priority: domain.PriorityHigh}); err != nil {
		panic(err)
	}

	delivery, ok, err := retsu.Dequeue(ctx, queue.ID)
	if err != nil || !ok {
		panic("nothing to dequeue")
	}
	fmt.Println(delivery.Payload, delivery.Priority, delivery.DeliveryAttempts)

	if err := retsu.Acknowledge(ctx, queue.ID, delivery.MessageID, delivery.ReceiptHandle); err != nil {
		panic(err)
	}
	next, _, _ := retsu.Dequeue(ctx, queue.ID)
	fmt.Println(next.Payload)
	// Output:
	// emails 30s 5
	// send welcome email HIGH 1
	// newsletter
}
