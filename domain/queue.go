package domain

import (
	"fmt"
	"time"
)

// The accepted ranges and defaults of the queue settings.
const (
	MaxQueueNameLength = 64

	MinVisibilityTimeout     = time.Second
	MaxVisibilityTimeout     = 6 * time.Hour
	DefaultVisibilityTimeout = 30 * time.Second

	MinMaxDeliveryAttempts     = 1
	MaxMaxDeliveryAttempts     = 100
	DefaultMaxDeliveryAttempts = 5

	MinMessageTTL     = time.Second
	MaxMessageTTL     = 30 * 24 * time.Hour
	DefaultMessageTTL = 7 * 24 * time.Hour
)

// Queue is a named queue with the settings that its messages are enqueued with.
type Queue struct {
	ID   ID
	Name string
	Settings
}

// Settings are the per-queue settings. A message takes the visibility timeout and the
// delivery-attempt limit of its queue when it is enqueued and keeps them afterwards.
type Settings struct {
	// VisibilityTimeout is how long a delivery hides its message from other dequeues.
	VisibilityTimeout time.Duration
	// MaxDeliveryAttempts is how many times a message may be delivered before a later
	// dequeue moves it to dead-letter storage.
	MaxDeliveryAttempts int
	// DefaultMessageTTL is the lifetime of a message enqueued without its own.
	DefaultMessageTTL time.Duration
}

// DefaultSettings returns the settings of a queue created with a name only.
func DefaultSettings() Settings {
	return Settings{
		VisibilityTimeout:   DefaultVisibilityTimeout,
		MaxDeliveryAttempts: DefaultMaxDeliveryAttempts,
		DefaultMessageTTL:   DefaultMessageTTL,
	}
}

// SettingsUpdate holds the settings a request supplies; nil fields are left as they are.
type SettingsUpdate struct {
	VisibilityTimeout   *time.Duration
	MaxDeliveryAttempts *int
	DefaultMessageTTL   *time.Duration
}

// IsEmpty reports whether the update supplies no setting.
func (u SettingsUpdate) IsEmpty() bool {
	return u.VisibilityTimeout == nil && u.MaxDeliveryAttempts == nil && u.DefaultMessageTTL == nil
}

// Validate checks every supplied setting against its range. It returns an *Error with
// invalid_visibility_timeout, invalid_max_delivery_attempts or invalid_default_message_ttl
// for the first setting out of range.
func (u SettingsUpdate) Validate() error {
	if u.VisibilityTimeout != nil {
		if err := ValidateVisibilityTimeout(*u.VisibilityTimeout); err != nil {
			return err
		}
	}
	if u.MaxDeliveryAttempts != nil {
		if err := ValidateMaxDeliveryAttempts(*u.MaxDeliveryAttempts); err != nil {
			return err
		}
	}
	if u.DefaultMessageTTL != nil {
		if err := ValidateDefaultMessageTTL(*u.DefaultMessageTTL); err != nil {
			return err
		}
	}
	return nil
}

// Apply validates the update and returns s with the supplied settings replaced.
func (u SettingsUpdate) Apply(s Settings) (Settings, error) {
	if err := u.Validate(); err != nil {
		return Settings{}, err
	}
	if u.VisibilityTimeout != nil {
		s.VisibilityTimeout = *u.VisibilityTimeout
	}
	if u.MaxDeliveryAttempts != nil {
		s.MaxDeliveryAttempts = *u.MaxDeliveryAttempts
	}
	if u.DefaultMessageTTL != nil {
		s.DefaultMessageTTL = *u.DefaultMessageTTL
	}
	return s, nil
}

// NewQueue is a request to create a queue: a name and the settings it supplies, the others
// taking their defaults.
type NewQueue struct {
	Name string
	SettingsUpdate
}

// Settings validates the name and the supplied settings and returns the complete settings
// of the new queue. The first rule broken decides the code, checked in the order name,
// visibility timeout, delivery attempts, message lifetime.
func (n NewQueue) Settings() (Settings, error) {
	if err := ValidateQueueName(n.Name); err != nil {
		return Settings{}, err
	}
	return n.SettingsUpdate.Apply(DefaultSettings())
}

// ValidateQueueName checks the naming rule: 1 to 64 lowercase letters, digits, dots,
// underscores or hyphens, starting and ending with a letter or digit. It returns an *Error
// with invalid_queue_name.
func ValidateQueueName(name string) error {
	const rule = "a queue name must be 1 to 64 lowercase letters, digits, dots, underscores or hyphens, starting and ending with a letter or digit"
	if len(name) == 0 || len(name) > MaxQueueNameLength {
		return invalid(CodeInvalidQueueName, rule)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alphanumeric := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		edge := i == 0 || i == len(name)-1
		if !alphanumeric && (edge || c != '.' && c != '_' && c != '-') {
			return invalid(CodeInvalidQueueName, rule)
		}
	}
	return nil
}

// ValidateVisibilityTimeout checks the range 1 s to 6 h in whole seconds.
func ValidateVisibilityTimeout(d time.Duration) error {
	return wholeSecondsIn(d, MinVisibilityTimeout, MaxVisibilityTimeout, CodeInvalidVisibilityTimeout, "visibility_timeout_seconds")
}

// ValidateMaxDeliveryAttempts checks the range 1 to 100.
func ValidateMaxDeliveryAttempts(n int) error {
	if n < MinMaxDeliveryAttempts || n > MaxMaxDeliveryAttempts {
		return invalid(CodeInvalidMaxDeliveryAttempts,
			fmt.Sprintf("max_delivery_attempts must be a whole number from %d to %d", MinMaxDeliveryAttempts, MaxMaxDeliveryAttempts))
	}
	return nil
}

// ValidateDefaultMessageTTL checks the range 1 s to 30 days in whole seconds.
func ValidateDefaultMessageTTL(d time.Duration) error {
	return wholeSecondsIn(d, MinMessageTTL, MaxMessageTTL, CodeInvalidDefaultMessageTTL, "default_message_ttl_seconds")
}

func wholeSecondsIn(d, lo, hi time.Duration, code Code, field string) error {
	if d < lo || d > hi || d%time.Second != 0 {
		return invalid(code, fmt.Sprintf("%s must be a whole number from %d to %d", field, lo/time.Second, hi/time.Second))
	}
	return nil
}

// The page size of a queue listing.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ValidateListLimit checks the page size of a queue listing: 1 to 1000. It returns an *Error
// with invalid_query.
func ValidateListLimit(n int) error {
	if n < 1 || n > MaxListLimit {
		return invalid(CodeInvalidQuery, fmt.Sprintf("limit must be a whole number from 1 to %d", MaxListLimit))
	}
	return nil
}
