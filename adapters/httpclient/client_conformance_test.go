package httpclient_test

import (
	"testing"

	"github.com/retsu/retsu/adapters/httpclient"
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
