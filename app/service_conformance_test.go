package app_test

import (
	"testing"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/app/apptest"
)

// TestService_Conformance holds the in-process use cases, over the memory stores on the
// system clock, to the contract of app.Retsu that the HTTP client meets too.
func TestService_Conformance(t *testing.T) {
	t.Parallel()
	apptest.TestRetsu(t, func(t *testing.T) app.Retsu { return newMemoryService(t) })
}

// newMemoryService returns a service over fresh memory stores on the system clock, closed
// when the test ends.
func newMemoryService(t *testing.T) *app.Service {
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	t.Cleanup(svc.Close)
	return svc
}
