package porttest

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/google/uuid"

	"github.com/retsu/retsu/domain"
)

// newID returns a fresh time-ordered ID, as the service would.
func newID() domain.ID { return domain.ID(uuid.Must(uuid.NewV7())) }

// uniqueName returns a queue name no other test uses.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// testSettings are short enough for tests to wait out: a one-second visibility timeout and a
// one-minute lifetime.
var testSettings = domain.Settings{
	VisibilityTimeout:   time.Second,
	MaxDeliveryAttempts: 5,
	DefaultMessageTTL:   time.Minute,
}
