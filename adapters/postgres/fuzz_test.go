package postgres_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/httpapi/httpapitest"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/app"
)

// The API's fuzz targets of package httpapitest, over the PostgreSQL stores: whatever a
// request holds, no input may reach the database in a form it refuses (an answer 5xx).
// `make test` fuzzes each for a few seconds.

var (
	fuzzHandlerOnce sync.Once
	fuzzHandler     http.Handler
)

// handlerOnPostgres returns the API over the package's PostgreSQL stores, the same for every
// input: each input works in a queue of its own.
func handlerOnPostgres(*testing.T) http.Handler {
	fuzzHandlerOnce.Do(func() {
		messages := postgres.NewMessageStore(pool, postgres.MessageStoreOptions{})
		fuzzHandler = httpapi.NewHandler(app.NewService(app.Ports{
			Queues: postgres.NewQueueStore(pool), Messages: messages, Cache: memory.NewQueueCache(memory.QueueCacheOptions{}),
		}, app.Options{}), httpapi.Options{})
	})
	return fuzzHandler
}

// FuzzHandlerOnPostgres sends any request to the API over PostgreSQL (see
// httpapitest.FuzzHandler).
func FuzzHandlerOnPostgres(f *testing.F) { httpapitest.FuzzHandler(f, handlerOnPostgres) }

// FuzzQueryOnPostgres sends any query to the listings over PostgreSQL (see
// httpapitest.FuzzQuery).
func FuzzQueryOnPostgres(f *testing.F) { httpapitest.FuzzQuery(f, handlerOnPostgres) }
