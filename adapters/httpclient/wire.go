package httpclient

import (
	"fmt"
	"strconv"
	"time"

	"github.com/retsu/retsu/domain"
)

// This file holds the API's JSON, as the client sends and reads it.

// wireID is an ID in JSON: a canonical UUID string.
type wireID domain.ID

// MarshalText spells the ID canonically.
func (id wireID) MarshalText() ([]byte, error) { return domain.ID(id).MarshalText() }

// UnmarshalText accepts a canonical UUID only.
func (id *wireID) UnmarshalText(text []byte) error {
	parsed, err := domain.ParseID(string(text))
	if err != nil {
		return fmt.Errorf("%q is not a UUID: %w", text, err)
	}
	*id = wireID(parsed)
	return nil
}

// wireSeconds is a duration in JSON, in seconds. A duration that is not a whole number of
// seconds goes as a fraction, which the API refuses with the field's own code, as the
// service refuses the duration itself.
type wireSeconds time.Duration

// MarshalJSON writes the seconds as a JSON number.
func (s wireSeconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, time.Duration(s).Seconds(), 'f', -1, 64), nil
}

// optionalSeconds returns d as wireSeconds, nil for nil.
func optionalSeconds(d *time.Duration) *wireSeconds {
	if d == nil {
		return nil
	}
	s := wireSeconds(*d)
	return &s
}

func secondsOf(n int64) time.Duration { return time.Duration(n) * time.Second }

// queueJSON is a queue as the API shows it.
type queueJSON struct {
	ID                       wireID `json:"id"`
	Name                     string `json:"name"`
	VisibilityTimeoutSeconds int64  `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int    `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64  `json:"default_message_ttl_seconds"`
}

func (q queueJSON) queue() domain.Queue {
	return domain.Queue{ID: domain.ID(q.ID), Name: q.Name, Settings: domain.Settings{
		VisibilityTimeout:   secondsOf(q.VisibilityTimeoutSeconds),
		MaxDeliveryAttempts: q.MaxDeliveryAttempts,
		DefaultMessageTTL:   secondsOf(q.DefaultMessageTTLSeconds),
	}}
}

// settingsJSON holds the settings of a queue's creation or update; nil members are left out.
type settingsJSON struct {
	Name                     string       `json:"name,omitempty"`
	VisibilityTimeoutSeconds *wireSeconds `json:"visibility_timeout_seconds,omitempty"`
	MaxDeliveryAttempts      *int         `json:"max_delivery_attempts,omitempty"`
	DefaultMessageTTLSeconds *wireSeconds `json:"default_message_ttl_seconds,omitempty"`
}

func toSettingsJSON(u domain.SettingsUpdate) settingsJSON {
	return settingsJSON{
		VisibilityTimeoutSeconds: optionalSeconds(u.VisibilityTimeout),
		MaxDeliveryAttempts:      u.MaxDeliveryAttempts,
		DefaultMessageTTLSeconds: optionalSeconds(u.DefaultMessageTTL),
	}
}

// newMessageJSON is one message to enqueue. A priority that is not one of the three goes
// as "", which the API refuses with invalid_priority.
type newMessageJSON struct {
	Payload      string       `json:"payload"`
	Priority     string       `json:"priority"`
	TTLSeconds   *wireSeconds `json:"ttl_seconds,omitempty"`
	DelaySeconds *wireSeconds `json:"delay_seconds,omitempty"`
}

func toNewMessageJSON(n domain.NewMessage) newMessageJSON {
	return newMessageJSON{Payload: n.Payload, Priority: n.Priority.String(),
		TTLSeconds: optionalSeconds(n.TTL), DelaySeconds: optionalSeconds(n.Delay)}
}

// messageJSON is a delivered message as the API shows it.
type messageJSON struct {
	ID               wireID `json:"id"`
	Payload          string `json:"payload"`
	Priority         string `json:"priority"`
	ReceiptHandle    wireID `json:"receipt_handle"`
	DeliveryAttempts int    `json:"delivery_attempts"`
}

func (m messageJSON) delivery() (domain.Delivery, error) {
	priority, err := parsePriority(m.Priority)
	if err != nil {
		return domain.Delivery{}, err
	}
	return domain.Delivery{
		MessageID: domain.ID(m.ID), Payload: m.Payload, Priority: priority,
		ReceiptHandle: domain.ID(m.ReceiptHandle), DeliveryAttempts: m.DeliveryAttempts,
	}, nil
}

// receiptJSON names one delivery in a batch acknowledgement.
type receiptJSON struct {
	ID            wireID `json:"id"`
	ReceiptHandle wireID `json:"receipt_handle"`
}

// deadLetterJSON is a dead letter as the API shows it.
type deadLetterJSON struct {
	ID               wireID    `json:"id"`
	Payload          string    `json:"payload"`
	Priority         string    `json:"priority"`
	DeliveryAttempts int       `json:"delivery_attempts"`
	EnqueuedAt       time.Time `json:"enqueued_at"`
	DeadLetteredAt   time.Time `json:"dead_lettered_at"`
}

func (d deadLetterJSON) deadLetter(queueID domain.ID) (domain.DeadLetter, error) {
	priority, err := parsePriority(d.Priority)
	if err != nil {
		return domain.DeadLetter{}, err
	}
	return domain.DeadLetter{
		QueueID: queueID, MessageID: domain.ID(d.ID), Priority: priority, Payload: d.Payload,
		DeliveryAttempts: d.DeliveryAttempts, EnqueuedAt: d.EnqueuedAt, DeadLetteredAt: d.DeadLetteredAt,
	}, nil
}

// priorityStatsJSON counts the messages of one priority.
type priorityStatsJSON struct {
	Priority              string `json:"priority"`
	Ready                 int64  `json:"ready"`
	Delayed               int64  `json:"delayed"`
	InFlight              int64  `json:"in_flight"`
	DeadLettered          int64  `json:"dead_lettered"`
	OldestReadyAgeSeconds int64  `json:"oldest_ready_age_seconds"`
}

// queueStatsJSON is the answer of the statistics route.
type queueStatsJSON struct {
	Priorities []priorityStatsJSON `json:"priorities"`
}

// stats returns the counts in delivery order, whatever the order of the answer.
func (s queueStatsJSON) stats() (domain.QueueStats, error) {
	var stats domain.QueueStats
	for i, p := range domain.Priorities {
		stats.Priorities[i].Priority = p
	}
	for _, p := range s.Priorities {
		priority, err := parsePriority(p.Priority)
		if err != nil {
			return domain.QueueStats{}, err
		}
		stats.Priorities[priority-domain.PriorityHigh] = domain.PriorityStats{
			Priority: priority, Ready: p.Ready, Delayed: p.Delayed, InFlight: p.InFlight,
			DeadLettered: p.DeadLettered, OldestReadyAge: secondsOf(p.OldestReadyAgeSeconds),
		}
	}
	return stats, nil
}

// parsePriority reads a priority of an answer. Its error carries no code: it is the
// answer's fault, not the caller's.
func parsePriority(name string) (domain.Priority, error) {
	p, err := domain.ParsePriority(name)
	if err != nil {
		return 0, fmt.Errorf("httpclient: the answer holds %q, which is not a priority", name)
	}
	return p, nil
}

func toDomainIDs(ids []wireID) []domain.ID {
	out := make([]domain.ID, len(ids))
	for i, id := range ids {
		out[i] = domain.ID(id)
	}
	return out
}

func toWireIDs(ids []domain.ID) []wireID {
	out := make([]wireID, len(ids))
	for i, id := range ids {
		out[i] = wireID(id)
	}
	return out
}
