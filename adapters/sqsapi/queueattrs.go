package sqsapi

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/retsu/retsu/domain"
)

// The queue attributes, as SQS names them.
const (
	attrVisibilityTimeout      = "VisibilityTimeout"
	attrMessageRetentionPeriod = "MessageRetentionPeriod"
	attrRedrivePolicy          = "RedrivePolicy"
	attrDelaySeconds           = "DelaySeconds"
	attrReceiveWaitTime        = "ReceiveMessageWaitTimeSeconds"
	attrMaximumMessageSize     = "MaximumMessageSize"
	attrSqsManagedSseEnabled   = "SqsManagedSseEnabled"
	attrFifoQueue              = "FifoQueue"
	attrQueueArn               = "QueueArn"
	attrCreatedTimestamp       = "CreatedTimestamp"
	attrNumberOfMessages       = "ApproximateNumberOfMessages"
	attrNumberNotVisible       = "ApproximateNumberOfMessagesNotVisible"
	attrNumberDelayed          = "ApproximateNumberOfMessagesDelayed"
	attrAll                    = "All"
)

// fixedAttributes are the settable attributes that Retsu holds at one value only: a set
// of any other value is refused, never ignored.
var fixedAttributes = map[string]struct{ value, why string }{
	attrDelaySeconds:         {"0", "Retsu queues have no default delay; give DelaySeconds with each SendMessage instead"},
	attrReceiveWaitTime:      {"0", "Retsu queues have no default wait; give WaitTimeSeconds with each ReceiveMessage instead"},
	attrMaximumMessageSize:   {strconv.Itoa(maxMessageBytes), fmt.Sprintf("every message may have %d bytes", maxMessageBytes)},
	attrSqsManagedSseEnabled: {"false", "Retsu does not encrypt messages itself; PostgreSQL's storage does what its set-up does"},
	attrFifoQueue:            {"false", "Retsu has no FIFO queues: its queues deliver by priority, then in enqueue order, at least once"},
}

// unsupportedAttributes are the settable attributes of SQS that Retsu cannot honour.
var unsupportedAttributes = map[string]string{
	"Policy":                       "Retsu has no queue policies: access is by the endpoint's credentials",
	"RedriveAllowPolicy":           "Retsu keeps each queue's dead letters with the queue",
	"KmsMasterKeyId":               "Retsu does not encrypt messages with KMS",
	"KmsDataKeyReusePeriodSeconds": "Retsu does not encrypt messages with KMS",
	"ContentBasedDeduplication":    "Retsu has no FIFO queues",
	"DeduplicationScope":           "Retsu has no FIFO queues",
	"FifoThroughputLimit":          "Retsu has no FIFO queues",
}

// readOnlyAttributes are the attributes that GetQueueAttributes computes.
var readOnlyAttributes = []string{attrQueueArn, attrCreatedTimestamp, attrNumberOfMessages, attrNumberNotVisible, attrNumberDelayed}

// queueSettings returns the Retsu settings that a CreateQueue's or SetQueueAttributes'
// attributes ask for, after checking every attribute: unknown and read-only ones are
// InvalidAttributeName, values out of Retsu's ranges and what Retsu cannot honour
// InvalidAttributeValue.
func queueSettings(attributes map[string]string, region, queueName string) (domain.SettingsUpdate, error) {
	var u domain.SettingsUpdate
	for _, name := range slices.Sorted(maps.Keys(attributes)) { // the first wrong one by name
		value := attributes[name]
		var err error
		switch name {
		case attrVisibilityTimeout:
			u.VisibilityTimeout, err = secondsAttribute(name, value, domain.MinVisibilityTimeout, domain.MaxVisibilityTimeout)
		case attrMessageRetentionPeriod:
			u.DefaultMessageTTL, err = secondsAttribute(name, value, domain.MinMessageTTL, domain.MaxMessageTTL)
		case attrRedrivePolicy:
			u.MaxDeliveryAttempts, err = redrivePolicy(value, queueARN(region, queueName))
		default:
			err = checkOtherAttribute(name, value)
		}
		if err != nil {
			return domain.SettingsUpdate{}, err
		}
	}
	return u, nil
}

// checkOtherAttribute checks an attribute that sets no Retsu setting.
func checkOtherAttribute(name, value string) error {
	if fixed, ok := fixedAttributes[name]; ok {
		if value != fixed.value {
			return fail(errInvalidAttributeValue, "Invalid value for the parameter %s: only %s is accepted (%s).", name, fixed.value, fixed.why)
		}
		return nil
	}
	if why, ok := unsupportedAttributes[name]; ok {
		return fail(errInvalidAttributeValue, "The attribute %s is not supported: %s.", name, why)
	}
	if slices.Contains(readOnlyAttributes, name) {
		return fail(errInvalidAttributeName, "The attribute %s is read-only.", name)
	}
	return fail(errInvalidAttributeName, "Unknown Attribute %s.", name)
}

// secondsAttribute reads a whole number of seconds within Retsu's range.
func secondsAttribute(name, value string, lo, hi time.Duration) (*time.Duration, error) {
	n, err := strconv.ParseInt(value, 10, 64)
	d := time.Duration(n) * time.Second
	if err != nil || d < lo || d > hi {
		return nil, fail(errInvalidAttributeValue, "Invalid value for the parameter %s: Retsu accepts %d to %d seconds.",
			name, lo/time.Second, hi/time.Second)
	}
	return &d, nil
}

// redrivePolicyJSON is an SQS redrive policy. maxReceiveCount may be a number or a string.
type redrivePolicyJSON struct {
	DeadLetterTargetArn *string         `json:"deadLetterTargetArn"`
	MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
}

// redrivePolicy reads a RedrivePolicy as Retsu's delivery-attempt limit. Retsu moves a
// message that used its attempts to the dead letters of its own queue, so the target must
// be absent or the queue's own ARN, ownARN: another queue cannot be honoured, nor can the
// policy be removed.
func redrivePolicy(value, ownARN string) (*int, error) {
	var p redrivePolicyJSON
	if err := json.Unmarshal([]byte(value), &p); err != nil {
		return nil, fail(errInvalidAttributeValue,
			"Invalid value for the parameter RedrivePolicy: Retsu needs a JSON object with maxReceiveCount (it cannot remove the policy: every Retsu queue keeps the messages that used their receives as dead letters).")
	}
	if p.DeadLetterTargetArn != nil && *p.DeadLetterTargetArn != ownARN {
		return nil, fail(errInvalidAttributeValue,
			"Invalid value for the parameter RedrivePolicy: Retsu keeps a queue's dead letters with the queue itself, so deadLetterTargetArn must be absent or %s.", ownARN)
	}
	text := string(p.MaxReceiveCount)
	if unquoted, err := strconv.Unquote(text); err == nil {
		text = unquoted
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < domain.MinMaxDeliveryAttempts || n > domain.MaxMaxDeliveryAttempts {
		return nil, fail(errInvalidAttributeValue, "Invalid value for the parameter RedrivePolicy: Retsu accepts a maxReceiveCount of %d to %d.",
			domain.MinMaxDeliveryAttempts, domain.MaxMaxDeliveryAttempts)
	}
	return &n, nil
}

// differingSetting returns the name of the first attribute whose setting u asks for a
// value that q does not have, or "" when q has every one: a CreateQueue of an existing
// queue succeeds exactly when it asks for what the queue has.
func differingSetting(u domain.SettingsUpdate, q domain.Queue) string {
	switch {
	case u.VisibilityTimeout != nil && *u.VisibilityTimeout != q.VisibilityTimeout:
		return attrVisibilityTimeout
	case u.DefaultMessageTTL != nil && *u.DefaultMessageTTL != q.DefaultMessageTTL:
		return attrMessageRetentionPeriod
	case u.MaxDeliveryAttempts != nil && *u.MaxDeliveryAttempts != q.MaxDeliveryAttempts:
		return attrRedrivePolicy
	}
	return ""
}

// requestedAttributes returns the queue attributes that GetQueueAttributes' names ask for.
// Names that SQS has but Retsu does not show (LastModifiedTimestamp, Policy, the KMS and
// FIFO ones) are left out; others are InvalidAttributeName.
func requestedAttributes(names []string) ([]string, error) {
	all := []string{attrQueueArn, attrCreatedTimestamp, attrNumberOfMessages, attrNumberNotVisible, attrNumberDelayed,
		attrVisibilityTimeout, attrMessageRetentionPeriod, attrRedrivePolicy, attrDelaySeconds, attrReceiveWaitTime,
		attrMaximumMessageSize, attrSqsManagedSseEnabled}
	var wanted []string
	for _, name := range names {
		switch {
		case name == attrAll:
			return all, nil
		case slices.Contains(all, name):
			wanted = append(wanted, name)
		case name == "LastModifiedTimestamp" || name == attrFifoQueue || unsupportedAttributes[name] != "":
		default:
			return nil, fail(errInvalidAttributeName, "Unknown Attribute %s.", name)
		}
	}
	return wanted, nil
}

// needsStats reports whether any of names is a message count.
func needsStats(names []string) bool {
	return slices.ContainsFunc(names, func(name string) bool {
		return name == attrNumberOfMessages || name == attrNumberNotVisible || name == attrNumberDelayed
	})
}

// queueAttributes returns the values of names for q, with ARNs in region; stats is read
// only for the counts.
func queueAttributes(names []string, region string, q domain.Queue, stats domain.QueueStats) map[string]string {
	var ready, inFlight, delayed int64
	for _, p := range stats.Priorities {
		ready, inFlight, delayed = ready+p.Ready, inFlight+p.InFlight, delayed+p.Delayed
	}
	values := make(map[string]string, len(names))
	for _, name := range names {
		switch name {
		case attrQueueArn:
			values[name] = queueARN(region, q.Name)
		case attrCreatedTimestamp:
			values[name] = strconv.FormatInt(createdAt(q.ID).Unix(), 10)
		case attrNumberOfMessages:
			values[name] = strconv.FormatInt(ready, 10)
		case attrNumberNotVisible:
			values[name] = strconv.FormatInt(inFlight, 10)
		case attrNumberDelayed:
			values[name] = strconv.FormatInt(delayed, 10)
		case attrVisibilityTimeout:
			values[name] = strconv.Itoa(int(q.VisibilityTimeout / time.Second))
		case attrMessageRetentionPeriod:
			values[name] = strconv.Itoa(int(q.DefaultMessageTTL / time.Second))
		case attrRedrivePolicy:
			policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": queueARN(region, q.Name), "maxReceiveCount": q.MaxDeliveryAttempts})
			values[name] = string(policy)
		default:
			values[name] = fixedAttributes[name].value
		}
	}
	return values
}

// createdAt returns the creation time of a queue, which its ID, a UUID version 7, holds in
// its first 48 bits as Unix milliseconds.
func createdAt(id domain.ID) time.Time {
	var ms [8]byte
	copy(ms[2:], id[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(ms[:])))
}
