package httpclient_test

import (
	"net/http/httptest"
	"testing"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
)

// newLocal returns a service over fresh memory stores on the system clock, closed when the
// test ends.
func newLocal(t *testing.T) *app.Service {
	t.Helper()
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	t.Cleanup(svc.Close)
	return svc
}

// newRemote returns a client, with o, of an HTTP API that a test server serves over a
// service of newLocal; both stop when the test ends.
func newRemote(t *testing.T, o httpclient.Options) *httpclient.Client {
	t.Helper()
	server := httptest.NewServer(httpapi.NewHandler(newLocal(t), httpapi.Options{}))
	t.Cleanup(server.Close) // after the service's Close, which answers the waiting dequeues
	client, err := httpclient.New(server.URL, o)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
