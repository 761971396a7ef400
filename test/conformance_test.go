package test

import (
	"testing"

	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/app/apptest"
)

// TestConformance_RealServer holds the binary, on PostgreSQL and Redis, to the contract of
// app.Retsu that the in-process service over memory stores meets: the Go client talks to the
// shared server.
func TestConformance_RealServer(t *testing.T) {
	t.Parallel()
	client, err := httpclient.New(shared.URL(), httpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	apptest.TestRetsu(t, func(*testing.T) app.Retsu { return client })
}
