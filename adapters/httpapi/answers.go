package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/retsu/retsu/domain"
)

// This file writes successful answers; problem.go writes the errors.

// queueJSON is a queue as the API shows it.
type queueJSON struct {
	ID                       domain.ID `json:"id"`
	Name                     string    `json:"name"`
	VisibilityTimeoutSeconds int64     `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int       `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64     `json:"default_message_ttl_seconds"`
}

func toQueueJSON(q domain.Queue) queueJSON {
	return queueJSON{
		ID:                       q.ID,
		Name:                     q.Name,
		VisibilityTimeoutSeconds: int64(q.VisibilityTimeout / time.Second),
		MaxDeliveryAttempts:      q.MaxDeliveryAttempts,
		DefaultMessageTTLSeconds: int64(q.DefaultMessageTTL / time.Second),
	}
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
	return nil
}
