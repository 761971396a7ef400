package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/app"
)

func BenchmarkEnqueue(b *testing.B) {
	handler := httpapi.NewHandler(app.NewService(app.Ports{
		Queues:   memory.NewQueueStore(memory.QueueStoreOptions{}),
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{}), httpapi.Options{})
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/queues", jsonType, `{"name":"emails"}`))
	if rec.Code != http.StatusCreated {
		b.Fatalf("create queue: %d %s", rec.Code, rec.Body)
	}
	target := rec.Header().Get("Location") + "/messages"
	const body = `{"payload":"{\"to\":\"ada@example.com\",\"template\":\"welcome\",\"locale\":\"en-GB\"}","priority":"HIGH","ttl_seconds":3600}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Content-Type", jsonType)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("enqueue: %d %s", rec.Code, rec.Body)
		}
	}
}
