package sqsapi

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// The ranges of the message actions, as SQS sets them.
const (
	maxSendDelay          = 900
	maxReceiveMessages    = 10
	maxReceiveWaitSeconds = 20
	maxVisibilitySeconds  = 43200
)

// sendInput is a SendMessage, or an entry of a SendMessageBatch.
type sendInput struct {
	ID                      *string `json:"Id"`
	MessageBody             *text
	DelaySeconds            *int
	MessageAttributes       map[string]attributeValue
	MessageSystemAttributes map[string]attributeValue
	MessageDeduplicationID  *string `json:"MessageDeduplicationId"`
	MessageGroupID          *string `json:"MessageGroupId"`
}

// newMessage checks a message to send and returns it, with its size.
func (in sendInput) newMessage() (domain.NewMessage, int, error) {
	if err := checkBody(in.MessageBody); err != nil {
		return domain.NewMessage{}, 0, err
	}
	if in.MessageGroupID != nil || in.MessageDeduplicationID != nil {
		return domain.NewMessage{}, 0, fail(errInvalidParameterValue, "MessageGroupId and MessageDeduplicationId belong to FIFO queues, which Retsu does not have.")
	}
	trace, err := traceHeader(in.MessageSystemAttributes)
	if err != nil {
		return domain.NewMessage{}, 0, err
	}
	n := domain.NewMessage{Payload: in.MessageBody.value}
	if in.DelaySeconds != nil {
		if *in.DelaySeconds < 0 || *in.DelaySeconds > maxSendDelay {
			return domain.NewMessage{}, 0, fail(errInvalidParameterValue,
				"Value %d for parameter DelaySeconds is invalid. Reason: must be between 0 and %d, if provided.", *in.DelaySeconds, maxSendDelay)
		}
		delay := time.Duration(*in.DelaySeconds) * time.Second
		n.Delay = &delay
	}
	attributes, priority, size, err := messageAttributes(in.MessageAttributes)
	if err != nil {
		return domain.NewMessage{}, 0, err
	}
	n.Attributes, n.Priority = attributes, priority
	size += len(n.Payload)
	if size > maxMessageBytes {
		return domain.NewMessage{}, 0, fail(errInvalidParameterValue,
			"One or more parameters are invalid. Reason: Message must be at most %d bytes.", maxMessageBytes)
	}
	if trace != "" {
		if n.Attributes == nil {
			n.Attributes = domain.Attributes{}
		}
		n.Attributes[traceHeaderAttribute] = domain.Attribute{DataType: "String", StringValue: trace}
	}
	return n, size, nil
}

// sendAnswer is the answer of SendMessage, and an entry of SendMessageBatch's.
type sendAnswer struct {
	ID                           string `json:"Id,omitempty"`
	MessageID                    string `json:"MessageId"`
	MD5OfMessageBody             string
	MD5OfMessageAttributes       string `json:",omitempty"`
	MD5OfMessageSystemAttributes string `json:",omitempty"`
}

func sentAnswer(id string, messageID domain.ID, n domain.NewMessage) sendAnswer {
	attributes, system := splitTraceHeader(n.Attributes)
	return sendAnswer{ID: id, MessageID: messageID.String(), MD5OfMessageBody: md5Hex(n.Payload),
		MD5OfMessageAttributes: md5OfAttributes(attributes), MD5OfMessageSystemAttributes: md5OfAttributes(system)}
}

// sendMessage answers SendMessage once the message is committed.
func sendMessage(c *call) (any, error) {
	// Parse.
	var in struct {
		QueueURL *string `json:"QueueUrl"`
		sendInput
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	n, _, err := in.newMessage()
	if err != nil {
		return nil, err
	}
	// Call.
	var enqueued app.Enqueued
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		var err error
		enqueued, err = c.h.svc.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: []domain.NewMessage{n}})
		var entry *domain.EntryError
		if errors.As(err, &entry) {
			return entry.Err
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// Encode.
	return sentAnswer("", enqueued.IDs[0], n), nil
}

// sendMessageBatch answers SendMessageBatch: the valid entries are committed together,
// and each invalid one is reported among the Failed.
func sendMessageBatch(c *call) (any, error) {
	// Parse: the batch, then each entry.
	var in struct {
		QueueURL *string `json:"QueueUrl"`
		Entries  []sendInput
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	ids := make([]*string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.ID
	}
	results, err := newBatch(ids)
	if err != nil {
		return nil, err
	}
	messages := make([]domain.NewMessage, len(in.Entries))
	total := 0
	for i, e := range in.Entries {
		n, size, err := e.newMessage()
		if err != nil {
			results.fail(i, err)
			continue
		}
		messages[i], total = n, total+size
	}
	if total > maxMessageBytes {
		return nil, fail(errBatchRequestTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxMessageBytes, total)
	}
	// Call: an entry that Retsu refuses (a delay not shorter than the queue's retention) is
	// reported, and the others are sent again without it.
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		if len(results.pending()) == 0 { // every entry failed: the queue must still exist
			_, err := c.h.svc.Queue(ctx, queueID)
			return err
		}
		for {
			pending := results.pending()
			if len(pending) == 0 {
				return nil
			}
			batch := make([]domain.NewMessage, len(pending))
			for i, entry := range pending {
				batch[i] = messages[entry]
			}
			enqueued, err := c.h.svc.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: batch, Batch: true})
			var entryErr *domain.EntryError
			if errors.As(err, &entryErr) {
				results.fail(pending[entryErr.Index], entryErr.Err)
				continue
			}
			if err != nil {
				return err
			}
			for i, entry := range pending {
				results.succeed(entry, sentAnswer(results.ids[entry], enqueued.IDs[i], messages[entry]))
			}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	// Encode.
	return results.answer(), nil
}

// receiveInput is a ReceiveMessage.
type receiveInput struct {
	QueueURL                    *string `json:"QueueUrl"`
	AttributeNames              []string
	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         *int
	VisibilityTimeout           *int
	WaitTimeSeconds             *int
}

// messageAnswer is a received message.
type messageAnswer struct {
	MessageID              string                    `json:"MessageId"`
	ReceiptHandle          string                    `json:"ReceiptHandle"`
	MD5OfBody              string                    `json:"MD5OfBody"`
	Body                   string                    `json:"Body"`
	Attributes             map[string]string         `json:",omitempty"`
	MessageAttributes      map[string]attributeValue `json:",omitempty"`
	MD5OfMessageAttributes string                    `json:",omitempty"`
}

// receiveMessage answers ReceiveMessage. A receive that may wait gives its place among
// the concurrent requests up while it waits, and its time bound starts after the wait.
func receiveMessage(c *call) (any, error) {
	// Parse.
	var in receiveInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, err
	}
	system, err := systemAttributeNames(append(in.AttributeNames, in.MessageSystemAttributeNames...))
	if err != nil {
		return nil, err
	}
	name, err := queueNameOf(in.QueueURL)
	if err != nil {
		return nil, err
	}
	// Call: wait for messages, then hold them for the visibility timeout asked for.
	ctx := c.ctx
	if p.Wait > 0 {
		waitCtx, cancel, err := c.waiting(p.Wait)
		if err != nil {
			return nil, err
		}
		defer cancel()
		ctx = waitCtx
	}
	var deliveries []domain.Delivery
	err = c.withQueueNamed(ctx, name, func(ctx context.Context, queueID domain.ID) error {
		p.QueueID = queueID
		var err error
		deliveries, err = c.h.svc.DequeueMessages(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout != nil {
		if deliveries, err = c.hold(ctx, p.QueueID, deliveries, time.Duration(*in.VisibilityTimeout)*time.Second); err != nil {
			return nil, err
		}
	}
	// Encode.
	var answer struct {
		Messages []messageAnswer `json:",omitempty"`
	}
	for _, d := range deliveries {
		answer.Messages = append(answer.Messages, receivedMessage(p.QueueID, d, system, in.MessageAttributeNames))
	}
	return answer, nil
}

// params checks a ReceiveMessage's numbers and returns the dequeue they ask for.
func (in receiveInput) params() (app.DequeueParams, error) {
	p := app.DequeueParams{Max: 1}
	if in.MaxNumberOfMessages != nil {
		if *in.MaxNumberOfMessages < 1 || *in.MaxNumberOfMessages > maxReceiveMessages {
			return p, fail(errInvalidParameterValue,
				"Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and %d, if provided.", *in.MaxNumberOfMessages, maxReceiveMessages)
		}
		p.Max = *in.MaxNumberOfMessages
	}
	if in.WaitTimeSeconds != nil {
		if *in.WaitTimeSeconds < 0 || *in.WaitTimeSeconds > maxReceiveWaitSeconds {
			return p, fail(errInvalidParameterValue,
				"Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= %d, if provided.", *in.WaitTimeSeconds, maxReceiveWaitSeconds)
		}
		p.Wait = time.Duration(*in.WaitTimeSeconds) * time.Second
	}
	if in.VisibilityTimeout != nil && (*in.VisibilityTimeout < 1 || *in.VisibilityTimeout > maxVisibilitySeconds) {
		return p, fail(errInvalidParameterValue,
			"Value %d for parameter VisibilityTimeout is invalid. Reason: Retsu holds a received message for 1 to %d seconds; release one with ChangeMessageVisibility 0.",
			*in.VisibilityTimeout, maxVisibilitySeconds)
	}
	return p, nil
}

// hold makes the leases of the deliveries end timeout from now, and returns those it
// holds: a delivery whose lease ended meanwhile is no longer this receive's to return.
func (c *call) hold(ctx context.Context, queueID domain.ID, deliveries []domain.Delivery, timeout time.Duration) ([]domain.Delivery, error) {
	held := deliveries[:0]
	for _, d := range deliveries {
		err := c.h.svc.Extend(ctx, queueID, d.Receipt(), timeout)
		switch {
		case errors.Is(err, domain.ErrLeaseLost):
			continue
		case err != nil:
			return nil, err
		}
		held = append(held, d)
	}
	return held, nil
}

// The system attributes of a received message that Retsu knows.
const (
	sysReceiveCount      = "ApproximateReceiveCount"
	sysSentTimestamp     = "SentTimestamp"
	sysFirstReceiveStamp = "ApproximateFirstReceiveTimestamp"
)

// systemAttributeNames returns the system attributes that a ReceiveMessage asks for. The
// names of SQS that Retsu has no value for (SenderId and the FIFO ones) are left out;
// others are InvalidAttributeName.
func systemAttributeNames(names []string) ([]string, error) {
	known := []string{sysReceiveCount, sysSentTimestamp, sysFirstReceiveStamp, sysTraceHeader}
	var wanted []string
	for _, name := range names {
		switch name {
		case "All":
			return known, nil
		case sysReceiveCount, sysSentTimestamp, sysFirstReceiveStamp, sysTraceHeader:
			wanted = append(wanted, name)
		case "SenderId", "SequenceNumber", "MessageDeduplicationId", "MessageGroupId", "DeadLetterQueueSourceArn":
		default:
			return nil, fail(errInvalidAttributeName, "Unknown Attribute %s.", name)
		}
	}
	return wanted, nil
}

// receivedMessage returns a delivery as ReceiveMessage answers it.
func receivedMessage(queueID domain.ID, d domain.Delivery, system, attributeNames []string) messageAnswer {
	m := messageAnswer{
		MessageID: d.MessageID.String(), ReceiptHandle: encodeReceiptHandle(queueID, d),
		MD5OfBody: md5Hex(d.Payload), Body: d.Payload,
	}
	for _, name := range system {
		if m.Attributes == nil {
			m.Attributes = map[string]string{}
		}
		switch name {
		case sysReceiveCount:
			m.Attributes[name] = strconv.Itoa(d.DeliveryAttempts)
		case sysSentTimestamp:
			m.Attributes[name] = strconv.FormatInt(d.EnqueuedAt.UnixMilli(), 10)
		case sysFirstReceiveStamp:
			m.Attributes[name] = strconv.FormatInt(d.FirstDeliveredAt.UnixMilli(), 10)
		case sysTraceHeader: // only for a message sent with one
			if header, ok := d.Attributes[traceHeaderAttribute]; ok {
				m.Attributes[name] = header.StringValue
			}
		}
	}
	if selected := selectAttributes(d.Attributes, attributeNames); len(selected) > 0 {
		m.MessageAttributes = toAttributeValues(selected)
		m.MD5OfMessageAttributes = md5OfAttributes(selected)
	}
	return m
}

// deleteMessage answers DeleteMessage. A stale handle's delete succeeds and removes
// nothing, as in SQS: the message was delivered again, or is gone.
func deleteMessage(c *call) (any, error) {
	var in struct {
		QueueURL      *string `json:"QueueUrl"`
		ReceiptHandle *string
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	handle, err := parseReceiptHandle(in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		receipt, err := handle.forQueue(queueID)
		if err != nil {
			return err
		}
		_, err = c.h.svc.AcknowledgeMessages(ctx, queueID, []domain.Receipt{receipt})
		return err
	})
	return noAnswer{}, err
}

// receiptEntry is an entry of DeleteMessageBatch or ChangeMessageVisibilityBatch.
type receiptEntry struct {
	ID                *string `json:"Id"`
	ReceiptHandle     *string
	VisibilityTimeout *int
}

// parseReceiptEntries checks a batch of receipt entries and parses their handles; an
// entry whose handle is not valid is failed in the results.
func parseReceiptEntries(entries []receiptEntry) (*batch, []receiptHandle, error) {
	ids := make([]*string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	results, err := newBatch(ids)
	if err != nil {
		return nil, nil, err
	}
	handles := make([]receiptHandle, len(entries))
	for i, e := range entries {
		if handles[i], err = parseReceiptHandle(e.ReceiptHandle); err != nil {
			results.fail(i, err)
		}
	}
	return results, handles, nil
}

// deleteMessageBatch answers DeleteMessageBatch: the entries with valid handles are
// acknowledged together, and succeed whether or not their handle was current.
func deleteMessageBatch(c *call) (any, error) {
	// Parse.
	var in struct {
		QueueURL *string `json:"QueueUrl"`
		Entries  []receiptEntry
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	parsed, handles, err := parseReceiptEntries(in.Entries)
	if err != nil {
		return nil, err
	}
	// Call, from the parsed batch each time the queue is resolved.
	var results *batch
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		results = parsed.clone()
		var receipts []domain.Receipt
		var entries []int
		for _, entry := range results.pending() {
			receipt, err := handles[entry].forQueue(queueID)
			if err != nil {
				results.fail(entry, err)
				continue
			}
			receipts, entries = append(receipts, receipt), append(entries, entry)
		}
		if len(receipts) == 0 {
			_, err := c.h.svc.Queue(ctx, queueID)
			return err
		}
		if _, err := c.h.svc.AcknowledgeMessages(ctx, queueID, receipts); err != nil {
			return err
		}
		for _, entry := range entries {
			results.succeed(entry, idAnswer{ID: results.ids[entry]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Encode.
	return results.answer(), nil
}

// changeMessageVisibility answers ChangeMessageVisibility: 0 releases the message now,
// any other timeout makes its lease end that long from now.
func changeMessageVisibility(c *call) (any, error) {
	// Parse.
	var in struct {
		QueueURL *string `json:"QueueUrl"`
		receiptEntry
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	handle, err := parseReceiptHandle(in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	timeout, err := visibilityTimeout(in.VisibilityTimeout)
	if err != nil {
		return nil, err
	}
	// Call.
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		return c.changeVisibility(ctx, queueID, handle, timeout)
	})
	return noAnswer{}, err
}

// changeMessageVisibilityBatch answers ChangeMessageVisibilityBatch, one entry after the
// other; an entry whose lease was lost fails on its own.
func changeMessageVisibilityBatch(c *call) (any, error) {
	// Parse.
	var in struct {
		QueueURL *string `json:"QueueUrl"`
		Entries  []receiptEntry
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	parsed, handles, err := parseReceiptEntries(in.Entries)
	if err != nil {
		return nil, err
	}
	timeouts := make([]time.Duration, len(in.Entries))
	for _, entry := range parsed.pending() {
		if timeouts[entry], err = visibilityTimeout(in.Entries[entry].VisibilityTimeout); err != nil {
			parsed.fail(entry, err)
		}
	}
	// Call, from the parsed batch each time the queue is resolved.
	var results *batch
	err = c.withQueue(in.QueueURL, func(ctx context.Context, queueID domain.ID) error {
		results = parsed.clone()
		if _, err := c.h.svc.Queue(ctx, queueID); err != nil {
			return err
		}
		for _, entry := range results.pending() {
			err := c.changeVisibility(ctx, queueID, handles[entry], timeouts[entry])
			var api *apiError
			switch {
			case errors.As(err, &api):
				results.fail(entry, err)
			case err != nil:
				return err
			default:
				results.succeed(entry, idAnswer{ID: results.ids[entry]})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Encode.
	return results.answer(), nil
}

// visibilityTimeout checks a ChangeMessageVisibility's timeout: 0 to 12 hours.
func visibilityTimeout(seconds *int) (time.Duration, error) {
	switch {
	case seconds == nil:
		return 0, fail(errMissingParameter, "The request must contain the parameter VisibilityTimeout.")
	case *seconds < 0 || *seconds > maxVisibilitySeconds:
		return 0, fail(errInvalidParameterValue, "Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and %d.", *seconds, maxVisibilitySeconds)
	}
	return time.Duration(*seconds) * time.Second, nil
}

// changeVisibility releases the delivery that handle names (timeout 0) or extends its
// lease. A lost lease is the error SQS answers for a message that is gone or not in
// flight; it is an apiError, unlike the errors of Retsu's that end the whole request.
func (c *call) changeVisibility(ctx context.Context, queueID domain.ID, handle receiptHandle, timeout time.Duration) error {
	receipt, err := handle.forQueue(queueID)
	if err != nil {
		return err
	}
	if timeout == 0 {
		err = c.h.svc.Release(ctx, queueID, receipt, 0)
	} else {
		err = c.h.svc.Extend(ctx, queueID, receipt, timeout)
	}
	if errors.Is(err, domain.ErrLeaseLost) {
		return fail(errInvalidParameterValue,
			"Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", handle.text)
	}
	return err
}
