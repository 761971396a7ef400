package httpclient_test

import (
	"net/http/httptest"
	"testing"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/app/apptest"
)

// TestClient_Conformance holds the client, talking to the HTTP adapter in front of the
// in-process service over memory stores, to the contract of app.Retsu that the service
// itself meets.
func TestClient_Conformance(t *testing.T) {
	t.Parallel()
	apptest.TestRetsu(t, func(t *testing.T) app.Retsu { return newRemote(t, httpclient.Options{}) })
}

// newRemote returns a client of an HTTP API served, by a test server, over a fresh service
// on memory stores; both stop when the test ends.
func newRemote(t *testing.T, o httpclient.Options) *httpclient.Client {
	t.Helper()
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	server := httptest.NewServer(httpapi.NewHandler(svc, httpapi.Options{}))
	t.Cleanup(server.Close)
	t.Cleanup(svc.Close) // first, so that waiting dequeues answer and the server closes at once
	client, err := httpclient.New(server.URL, o)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
