package redis

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
)

// entryVersion is the "v" of the values this package writes. A change of meaning or shape
// takes a new version; values of any other version read as misses.
const entryVersion = 1

// entry is the JSON value stored under a queue's key. Durations are whole seconds, as the
// domain requires and as the HTTP API spells them.
type entry struct {
	Version                  int    `json:"v"`
	ID                       string `json:"id"`
	Name                     string `json:"name"`
	VisibilityTimeoutSeconds int64  `json:"visibility_timeout_seconds"`
	MaxDeliveryAttempts      int    `json:"max_delivery_attempts"`
	DefaultMessageTTLSeconds int64  `json:"default_message_ttl_seconds"`
	// Deleted marks the record of a deletion, which has no name or settings.
	Deleted bool `json:"deleted,omitempty"`
}

// errUnexpectedData reports bytes after the JSON object of an entry.
var errUnexpectedData = errors.New("data after the entry")

// encodeEntry returns the stored value of q.
func encodeEntry(q domain.Queue) (string, error) {
	value, err := json.Marshal(entry{
		Version:                  entryVersion,
		ID:                       q.ID.String(),
		Name:                     q.Name,
		VisibilityTimeoutSeconds: int64(q.VisibilityTimeout / time.Second),
		MaxDeliveryAttempts:      q.MaxDeliveryAttempts,
		DefaultMessageTTLSeconds: int64(q.DefaultMessageTTL / time.Second),
	})
	return string(value), err
}

// encodeDeletion returns the stored value that records the deletion of queue id.
func encodeDeletion(id domain.ID) (string, error) {
	value, err := json.Marshal(entry{Version: entryVersion, ID: id.String(), Deleted: true})
	return string(value), err
}

// entryState is what a stored value says of its queue.
type entryState uint8

const (
	notAnEntry entryState = iota
	queueEntry
	deletionEntry
)

// decodeEntry returns the queue in value if value is a well-formed entry of the current
// version for queue id whose name and settings pass the domain's validation, or reports the
// record of its deletion. Anything else (another version, a truncated or foreign value, a
// setting out of range) is not an entry.
func decodeEntry(value string, id domain.ID) (domain.Queue, entryState) {
	var e entry
	if err := strictUnmarshal(value, &e); err != nil || e.Version != entryVersion {
		return domain.Queue{}, notAnEntry
	}
	entryID, err := domain.ParseID(e.ID)
	if err != nil || entryID != id {
		return domain.Queue{}, notAnEntry
	}
	if e.Deleted {
		if e != (entry{Version: entryVersion, ID: e.ID, Deleted: true}) {
			return domain.Queue{}, notAnEntry
		}
		return domain.Queue{}, deletionEntry
	}
	if domain.ValidateQueueName(e.Name) != nil {
		return domain.Queue{}, notAnEntry
	}
	visibilityTimeout, ok := seconds(e.VisibilityTimeoutSeconds)
	if !ok || domain.ValidateVisibilityTimeout(visibilityTimeout) != nil {
		return domain.Queue{}, notAnEntry
	}
	defaultMessageTTL, ok := seconds(e.DefaultMessageTTLSeconds)
	if !ok || domain.ValidateDefaultMessageTTL(defaultMessageTTL) != nil {
		return domain.Queue{}, notAnEntry
	}
	if domain.ValidateMaxDeliveryAttempts(e.MaxDeliveryAttempts) != nil {
		return domain.Queue{}, notAnEntry
	}
	return domain.Queue{ID: id, Name: e.Name, Settings: domain.Settings{
		VisibilityTimeout:   visibilityTimeout,
		MaxDeliveryAttempts: e.MaxDeliveryAttempts,
		DefaultMessageTTL:   defaultMessageTTL,
	}}, queueEntry
}

// strictUnmarshal decodes exactly one JSON object with only the fields of e.
func strictUnmarshal(value string, e *entry) error {
	decoder := json.NewDecoder(strings.NewReader(value))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(e); err != nil {
		return err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return errUnexpectedData
	}
	return nil
}

// seconds converts a count of seconds into a Duration, unless it would overflow.
func seconds(n int64) (time.Duration, bool) {
	if n < 0 || n > math.MaxInt64/int64(time.Second) {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// decodings remember the queue decoded from each entry's value, so that the reads served
// from process memory, one per enqueue, dequeue and acknowledgement, do not decode the same
// value again: comparing it with the remembered one costs far less.
type decodings struct {
	mu sync.RWMutex
	m  map[domain.ID]decoding
}

type decoding struct {
	value string
	queue domain.Queue
	state entryState
}

// maxDecodings bounds the remembered decodings; past it they are forgotten all at once.
const maxDecodings = 10000

// decode returns decodeEntry(value, id), remembered from the last call for id when value
// is the same.
func (d *decodings) decode(value string, id domain.ID) (domain.Queue, entryState) {
	d.mu.RLock()
	last, ok := d.m[id]
	d.mu.RUnlock()
	if ok && last.value == value {
		return last.queue, last.state
	}
	q, state := decodeEntry(value, id)
	d.mu.Lock()
	if d.m == nil || len(d.m) >= maxDecodings {
		d.m = make(map[domain.ID]decoding)
	}
	d.m[id] = decoding{value: value, queue: q, state: state}
	d.mu.Unlock()
	return q, state
}
