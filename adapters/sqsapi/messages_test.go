package sqsapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/matryer/is"
)

// stringAttribute returns a String message attribute.
func stringAttribute(value string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
}

func TestSendMessage_AnswersTheDigestsOfBodyAndAttributes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	out, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("hello"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"test_attribute_name_2": stringAttribute("test_attribute_value_2"),
			"test_attribute_name_1": stringAttribute("test_attribute_value_1"),
		}})

	is.NoErr(err)                                                                          // the SDK checked MD5OfMessageBody itself
	is.Equal(aws.ToString(out.MD5OfMessageBody), "5d41402abc4b2a76b9719d911017c592")       // MD5("hello")
	is.Equal(aws.ToString(out.MD5OfMessageAttributes), "d53f3b558fe951154770f25cb63dbba9") // AWS's own example
}

func TestReceiveMessage_ReturnsBodyAttributesAndSystemAttributes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	before := time.Now()
	sent, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("héllo ☃"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"kind":  stringAttribute("order"),
			"count": {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
			"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
		}})
	is.NoErr(err)

	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})

	is.NoErr(err) // the SDK checked MD5OfBody itself
	is.Equal(len(out.Messages), 1)
	m := out.Messages[0]
	is.Equal(aws.ToString(m.MessageId), aws.ToString(sent.MessageId))
	is.Equal(aws.ToString(m.Body), "héllo ☃")
	is.Equal(aws.ToString(m.MD5OfMessageAttributes), aws.ToString(sent.MD5OfMessageAttributes)) // the digest of what was sent
	is.Equal(aws.ToString(m.MessageAttributes["count"].StringValue), "42")
	is.Equal(aws.ToString(m.MessageAttributes["count"].DataType), "Number.int")
	is.Equal(m.MessageAttributes["blob"].BinaryValue, []byte{0, 1, 2, 255})
	is.Equal(m.Attributes["ApproximateReceiveCount"], "1")
	sentAt, _ := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
	firstAt, _ := strconv.ParseInt(m.Attributes["ApproximateFirstReceiveTimestamp"], 10, 64)
	is.True(sentAt >= before.UnixMilli()-1 && sentAt <= firstAt) // milliseconds, sent before first received
}

func TestReceiveMessage_SelectedAttributes_DigestCoversWhatIsReturned(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"order.id": stringAttribute("1"), "order.kind": stringAttribute("a"), "other": stringAttribute("x"),
		}})
	is.NoErr(err)
	only, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"),
		MessageAttributes: map[string]types.MessageAttributeValue{"order.id": stringAttribute("1"), "order.kind": stringAttribute("a")}})
	is.NoErr(err)

	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"order.*"}})

	is.NoErr(err)
	m := out.Messages[0]
	is.Equal(len(m.MessageAttributes), 2)                                                       // the prefix's attributes only
	is.Equal(aws.ToString(m.MD5OfMessageAttributes), aws.ToString(only.MD5OfMessageAttributes)) // digested as returned
	is.Equal(m.Attributes, map[string]string(nil))                                              // no system attribute asked for
}

func TestSendMessage_PriorityAttribute_OrdersDelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	for _, p := range []string{"LOW", "MEDIUM", "HIGH"} {
		in := &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(p)}
		if p != "MEDIUM" {
			in.MessageAttributes = map[string]types.MessageAttributeValue{"Priority": stringAttribute(p)}
		}
		_, err := e.sqs.SendMessage(e.ctx(), in)
		is.NoErr(err)
	}

	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})

	is.NoErr(err)
	var order []string
	for _, m := range out.Messages {
		order = append(order, aws.ToString(m.Body))
	}
	is.Equal(order, []string{"HIGH", "MEDIUM", "LOW"}) // HIGH, then MEDIUM (sent without the attribute), then LOW
}

func TestSendMessage_InvalidInput_IsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	tests := []struct {
		name string
		in   sqs.SendMessageInput
		code string
	}{
		{"unknown priority", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageAttributes: map[string]types.MessageAttributeValue{"Priority": stringAttribute("URGENT")}}, "InvalidParameterValue"},
		{"priority as a number", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageAttributes: map[string]types.MessageAttributeValue{"Priority": {DataType: aws.String("Number"), StringValue: aws.String("1")}}}, "InvalidParameterValue"},
		{"lowercase priority", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageAttributes: map[string]types.MessageAttributeValue{"Priority": stringAttribute("high")}}, "InvalidParameterValue"},
		{"delay past 900 s", sqs.SendMessageInput{MessageBody: aws.String("m"), DelaySeconds: 901}, "InvalidParameterValue"},
		{"FIFO group", sqs.SendMessageInput{MessageBody: aws.String("m"), MessageGroupId: aws.String("g")}, "InvalidParameterValue"},
		{"a number that is not one", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageAttributes: map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String("12x")}}}, "InvalidParameterValue"},
		{"reserved attribute name", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageAttributes: map[string]types.MessageAttributeValue{"AWS.x": stringAttribute("v")}}, "InvalidParameterValue"},
		{"control character", sqs.SendMessageInput{MessageBody: aws.String("a\x01b")}, "InvalidMessageContents"},
		{"NUL", sqs.SendMessageInput{MessageBody: aws.String("\x00")}, "InvalidMessageContents"},
		{"too large", sqs.SendMessageInput{MessageBody: aws.String(repeat("a", 1<<20+1))}, "InvalidParameterValue"},
		{"too large with attributes", sqs.SendMessageInput{MessageBody: aws.String(repeat("a", 1<<20-7)),
			MessageAttributes: map[string]types.MessageAttributeValue{"k": stringAttribute("v")}}, "InvalidParameterValue"},
		{"another system attribute", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"SenderId": {DataType: aws.String("String"), StringValue: aws.String("x")}}}, "InvalidParameterValue"},
		{"a trace header that is not a String", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("Binary"), BinaryValue: []byte("x")}}}, "InvalidParameterValue"},
		{"an empty trace header", sqs.SendMessageInput{MessageBody: aws.String("m"),
			MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("")}}}, "InvalidParameterValue"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			in := test.in
			in.QueueUrl = &url

			_, err := e.sqs.SendMessage(e.ctx(), &in)

			is.Equal(apiCode(err), test.code)
		})
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, n*len(s))
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

func TestSendMessageBatch_FailsInvalidEntriesAndSendsTheOthers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	out, err := e.sqs.SendMessageBatch(e.ctx(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("first")},
		{Id: aws.String("b"), MessageBody: aws.String("bad"), MessageAttributes: map[string]types.MessageAttributeValue{"Priority": stringAttribute("NOW")}},
		{Id: aws.String("c"), MessageBody: aws.String("third"), DelaySeconds: 0},
	}})

	is.NoErr(err) // the SDK checked each MD5OfMessageBody
	is.Equal(len(out.Successful), 2)
	is.Equal(aws.ToString(out.Successful[0].Id), "a")
	is.Equal(aws.ToString(out.Successful[1].Id), "c")
	is.Equal(len(out.Failed), 1)
	is.Equal(aws.ToString(out.Failed[0].Id), "b")
	is.Equal(aws.ToString(out.Failed[0].Code), "InvalidParameterValue")
	is.True(out.Failed[0].SenderFault)
	received, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	is.NoErr(err)
	is.Equal(len(received.Messages), 2) // the valid entries were stored
}

func TestSendMessageBatch_BatchErrors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	entry := func(id string) types.SendMessageBatchRequestEntry {
		return types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String("m")}
	}
	eleven := make([]types.SendMessageBatchRequestEntry, 11)
	for i := range eleven {
		eleven[i] = entry(strconv.Itoa(i))
	}
	big := repeat("a", 600<<10)
	tests := []struct {
		name    string
		entries []types.SendMessageBatchRequestEntry
		check   func(error) bool
	}{
		{"empty", []types.SendMessageBatchRequestEntry{}, isError[*types.EmptyBatchRequest]},
		{"eleven", eleven, isError[*types.TooManyEntriesInBatchRequest]},
		{"repeated ID", []types.SendMessageBatchRequestEntry{entry("x"), entry("x")}, isError[*types.BatchEntryIdsNotDistinct]},
		{"bad ID", []types.SendMessageBatchRequestEntry{entry("a b")}, isError[*types.InvalidBatchEntryId]},
		{"too long together", []types.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: &big}, {Id: aws.String("b"), MessageBody: &big}}, isError[*types.BatchRequestTooLong]},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := e.sqs.SendMessageBatch(e.ctx(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: test.entries})

			is.True(test.check(err)) // the SDK's error type
		})
	}
}

func TestReceiveMessage_LongPoll_IsWokenBySend(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("late")})
	}()

	start := time.Now()
	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20})

	is.NoErr(err)
	is.Equal(len(out.Messages), 1)                    // the message sent during the wait
	is.True(time.Since(start) < 5*time.Second)        // as soon as it came
	is.True(time.Since(start) > 250*time.Millisecond) // not before
}

func TestReceiveMessage_LongPoll_EmptyAfterTheWait(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	start := time.Now()
	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1})

	is.NoErr(err)
	is.Equal(len(out.Messages), 0)                     // nothing came
	is.True(time.Since(start) >= 900*time.Millisecond) // after waiting the time asked for
}

func TestReceiveMessage_LongPoll_NotCutByTheRequestTimeoutNorCountedAsARequest(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setupWith(t, optionsWithLimits(1, 100*time.Millisecond))
	url := e.createQueue("orders", nil)
	waited := make(chan error, 1)
	go func() {
		_, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1})
		waited <- err
	}()
	time.Sleep(200 * time.Millisecond) // the receive waits

	_, sendErr := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})

	is.NoErr(sendErr)  // the one place of concurrent requests was free
	is.NoErr(<-waited) // and the wait outlived the 100 ms request timeout
}

func TestReceiveMessage_InvalidParameters(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	tests := []struct {
		name string
		in   sqs.ReceiveMessageInput
		code string
	}{
		{"eleven messages", sqs.ReceiveMessageInput{MaxNumberOfMessages: 11}, "InvalidParameterValue"},
		{"wait past 20 s", sqs.ReceiveMessageInput{WaitTimeSeconds: 21}, "InvalidParameterValue"},
		{"visibility past 12 h", sqs.ReceiveMessageInput{VisibilityTimeout: 43201}, "InvalidParameterValue"},
		{"unknown system attribute", sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"Colour"}}, "InvalidAttributeName"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			in := test.in
			in.QueueUrl = &url

			_, err := e.sqs.ReceiveMessage(e.ctx(), &in)

			is.Equal(apiCode(err), test.code)
		})
	}
}

// receiveOne sends a message and receives it.
func (e *endpoint) receiveOne(url string, in *sqs.ReceiveMessageInput) types.Message {
	e.t.Helper()
	if _, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")}); err != nil {
		e.t.Fatal(err)
	}
	return e.receive(url, in)
}

// receive receives the one message that the queue of url holds, as in asks.
func (e *endpoint) receive(url string, in *sqs.ReceiveMessageInput) types.Message {
	e.t.Helper()
	if in == nil {
		in = &sqs.ReceiveMessageInput{}
	}
	in.QueueUrl = &url
	out, err := e.sqs.ReceiveMessage(e.ctx(), in)
	if err != nil || len(out.Messages) != 1 {
		e.t.Fatalf("receive: %v, %d messages", err, len(out.Messages))
	}
	return out.Messages[0]
}

func TestDeleteMessage_RemovesTheMessage_AndAStaleHandleSucceeds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	m := e.receiveOne(url, nil)

	_, err := e.sqs.DeleteMessage(e.ctx(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
	is.NoErr(err)
	_, again := e.sqs.DeleteMessage(e.ctx(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})

	is.NoErr(again) // deleting with a stale handle succeeds, as in SQS
	stats, err := e.svc.Stats(e.ctx(), mustQueueID(t, e, "orders"))
	is.NoErr(err)
	is.Equal(stats.Priorities[1].InFlight+stats.Priorities[1].Ready, int64(0)) // the message is gone
}

func TestDeleteMessage_InvalidHandle_IsReceiptHandleIsInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	other := e.createQueue("other", nil)
	ofOther := e.receiveOne(other, nil)
	for name, handle := range map[string]string{
		"garbage":         "not-a-handle",
		"another queue's": aws.ToString(ofOther.ReceiptHandle),
		"too short":       aws.ToString(ofOther.ReceiptHandle)[:40],
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := e.sqs.DeleteMessage(e.ctx(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String(handle)})

			is.True(isError[*types.ReceiptHandleIsInvalid](err)) // the SDK's error type
		})
	}
}

func TestDeleteMessageBatch_DeletesValidEntriesAndFailsInvalidOnes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	first, second := e.receiveOne(url, nil), e.receiveOne(url, nil)

	out, err := e.sqs.DeleteMessageBatch(e.ctx(), &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("1"), ReceiptHandle: first.ReceiptHandle},
		{Id: aws.String("2"), ReceiptHandle: aws.String("garbage")},
		{Id: aws.String("3"), ReceiptHandle: second.ReceiptHandle},
	}})

	is.NoErr(err)
	is.Equal(len(out.Successful), 2)
	is.Equal(len(out.Failed), 1)
	is.Equal(aws.ToString(out.Failed[0].Id), "2")
	is.Equal(aws.ToString(out.Failed[0].Code), "ReceiptHandleIsInvalid")
	stats, err := e.svc.Stats(e.ctx(), mustQueueID(t, e, "orders"))
	is.NoErr(err)
	is.Equal(stats.Priorities[1].InFlight, int64(0)) // both deliveries were completed
}

func TestChangeMessageVisibility_ZeroReleasesAndAPositiveTimeoutExtends(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", map[string]string{"VisibilityTimeout": "1"})
	m := e.receiveOne(url, nil)

	_, err := e.sqs.ChangeMessageVisibility(e.ctx(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 30})
	is.NoErr(err)
	time.Sleep(1100 * time.Millisecond) // past the queue's 1 s
	hidden, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url})
	is.NoErr(err)
	is.Equal(len(hidden.Messages), 0) // the extension holds it

	_, err = e.sqs.ChangeMessageVisibility(e.ctx(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	is.NoErr(err)
	again, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
	is.NoErr(err)
	is.Equal(len(again.Messages), 1)                                       // released at once
	is.Equal(again.Messages[0].Attributes["ApproximateReceiveCount"], "2") // its second receive
}

func TestChangeMessageVisibility_LostLease_IsInvalidParameterValue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	m := e.receiveOne(url, nil)
	_, err := e.sqs.DeleteMessage(e.ctx(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
	is.NoErr(err)

	_, err = e.sqs.ChangeMessageVisibility(e.ctx(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 30})

	is.Equal(apiCode(err), "InvalidParameterValue") // as SQS answers for a message that is gone
}

func TestReceiveMessage_VisibilityTimeout_HoldsTheMessageThatLong(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", map[string]string{"VisibilityTimeout": "1"})
	e.receiveOne(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 30})

	time.Sleep(1100 * time.Millisecond) // past the queue's 1 s
	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url})

	is.NoErr(err)
	is.Equal(len(out.Messages), 0) // still held for the 30 s asked for
}

func TestChangeMessageVisibilityBatch_ReportsEachEntry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	held, gone := e.receiveOne(url, nil), e.receiveOne(url, nil)
	_, err := e.sqs.DeleteMessage(e.ctx(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: gone.ReceiptHandle})
	is.NoErr(err)

	out, err := e.sqs.ChangeMessageVisibilityBatch(e.ctx(), &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("held"), ReceiptHandle: held.ReceiptHandle, VisibilityTimeout: 60},
			{Id: aws.String("gone"), ReceiptHandle: gone.ReceiptHandle, VisibilityTimeout: 60},
			{Id: aws.String("long"), ReceiptHandle: held.ReceiptHandle, VisibilityTimeout: 43201},
		}})

	is.NoErr(err)
	is.Equal(len(out.Successful), 1)
	is.Equal(aws.ToString(out.Successful[0].Id), "held")
	is.Equal(len(out.Failed), 2)
	is.Equal(aws.ToString(out.Failed[0].Id), "gone") // its lease is lost
	is.Equal(aws.ToString(out.Failed[0].Code), "InvalidParameterValue")
	is.Equal(aws.ToString(out.Failed[1].Id), "long") // out of range
}

// traceHeader is an X-Ray trace header, as AWSTraceHeader carries it.
const traceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

// traceAttribute returns the message system attributes of a send with traceHeader.
func traceAttribute() map[string]types.MessageSystemAttributeValue {
	return map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(traceHeader)}}
}

func TestSendMessage_AWSTraceHeader_IsReturnedWhenAsked(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	sent, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"),
		MessageSystemAttributes: traceAttribute()})
	is.NoErr(err)

	asked := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAWSTraceHeader}})
	_, err = e.sqs.ChangeMessageVisibility(e.ctx(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: asked.ReceiptHandle})
	is.NoErr(err)
	all := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	_, err = e.sqs.ChangeMessageVisibility(e.ctx(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: all.ReceiptHandle})
	is.NoErr(err)
	unasked := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})

	is.Equal(aws.ToString(sent.MD5OfMessageSystemAttributes), "5ae4d5d7636402d80f4eb6d213245a88") // AWS's digest of the one system attribute
	is.Equal(sent.MD5OfMessageAttributes, nil)                                                    // the trace header is no message attribute
	is.Equal(asked.Attributes, map[string]string{"AWSTraceHeader": traceHeader})                  // returned when asked for
	is.Equal(len(asked.MessageAttributes), 0)                                                     // and not among the message attributes
	is.Equal(all.Attributes["AWSTraceHeader"], traceHeader)                                       // All includes it
	_, shown := unasked.Attributes["AWSTraceHeader"]
	is.True(!shown) // not shown unless asked for
}

func TestSendMessageBatch_AWSTraceHeader_PerEntry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	out, err := e.sqs.SendMessageBatch(e.ctx(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("traced"), MessageBody: aws.String("m"), MessageSystemAttributes: traceAttribute()},
		{Id: aws.String("plain"), MessageBody: aws.String("m")},
	}})

	is.NoErr(err)
	is.Equal(len(out.Successful), 2)
	is.Equal(aws.ToString(out.Successful[0].MD5OfMessageSystemAttributes), "5ae4d5d7636402d80f4eb6d213245a88") // the traced entry's digest
	is.Equal(out.Successful[1].MD5OfMessageSystemAttributes, nil)                                              // none without one
}

func TestSendMessage_OneMebibyte_IsAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	body := repeat("é", 1<<19) // 1,048,576 bytes of UTF-8

	_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body, MessageSystemAttributes: traceAttribute()})
	is.NoErr(err) // SQS's limit, which the trace header does not count towards
	_, batchErr := e.sqs.SendMessageBatch(e.ctx(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String(body[:1<<19])}, {Id: aws.String("b"), MessageBody: aws.String(body[:1<<19])},
	}})
	is.NoErr(batchErr) // a batch of 1 MiB in all

	escaped := e.post("AmazonSQS.SendMessage", "application/x-amz-json-1.0",
		`{"QueueUrl":"`+url+`","MessageBody":"`+repeat(`\u00e9`, 1<<19)+`"}`, true)
	is.Equal(escaped.status, http.StatusOK) // also when the client escapes every character (3 MiB of JSON)

	received := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 1})
	is.Equal(aws.ToString(received.Body), body) // delivered byte for byte
}

func TestSendMessage_LoneSurrogateEscapes_AreInvalidMessageContents(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	tests := []struct {
		name, body string
		status     int
		shape      string
	}{
		{"a high surrogate alone", `a\ud800b`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
		{"a low surrogate alone", `\uDC00`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
		{"a high surrogate at the end", `ab\uD83D`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
		{"a high surrogate before another escape", `\ud800\u0041`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
		{"two high surrogates", `\ud83d\ud83d`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
		{"a pair", `\ud83d\ude00`, http.StatusOK, ""},
		{"an escaped backslash before u", `\\ud800`, http.StatusOK, ""},
		{"an escaped backslash, then a lone surrogate", `\\\ud800`, http.StatusBadRequest, "com.amazonaws.sqs#InvalidMessageContents"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			res := e.post("AmazonSQS.SendMessage", "application/x-amz-json-1.0", `{"QueueUrl":"`+url+`","MessageBody":"`+test.body+`"}`, true)

			is.Equal(res.status, test.status)
			if test.shape != "" {
				shape, _, _ := res.errorOf(t)
				is.Equal(shape, test.shape) // refused, not stored as U+FFFD
			}
		})
	}
}

func TestSendMessage_LoneSurrogateInAnAttribute_IsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	res := e.post("AmazonSQS.SendMessage", "application/x-amz-json-1.0",
		`{"QueueUrl":"`+url+`","MessageBody":"m","MessageAttributes":{"k":{"DataType":"String","StringValue":"\udfff"}}}`, true)

	shape, _, _ := res.errorOf(t)
	is.Equal(shape, "com.amazonaws.sqs#InvalidParameterValue") // an attribute is not stored mangled either
}

func TestSendMessageBatch_LoneSurrogate_FailsOnlyItsEntry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	res := e.post("AmazonSQS.SendMessageBatch", "application/x-amz-json-1.0",
		`{"QueueUrl":"`+url+`","Entries":[{"Id":"bad","MessageBody":"\ud800"},{"Id":"good","MessageBody":"\ud83d\ude00"}]}`, true)

	is.Equal(res.status, http.StatusOK)
	var out struct {
		Successful []struct{ Id string }
		Failed     []struct{ Id, Code string }
	}
	is.NoErr(json.Unmarshal(res.body, &out))
	is.Equal(len(out.Successful), 1)
	is.Equal(out.Successful[0].Id, "good")
	is.Equal(len(out.Failed), 1)
	is.Equal(out.Failed[0].Code, "InvalidMessageContents") // the entry with the lone surrogate
	received := e.receive(url, nil)
	is.Equal(aws.ToString(received.Body), "😀") // the pair is one character
}

func TestReceiptBatches_BatchErrors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	url := e.createQueue("orders", nil)
	handle := e.receiveOne(url, nil).ReceiptHandle
	tests := []struct {
		name  string
		ids   []string
		check func(error) bool
	}{
		{"empty", []string{}, isError[*types.EmptyBatchRequest]},
		{"eleven", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, isError[*types.TooManyEntriesInBatchRequest]},
		{"repeated ID", []string{"x", "y", "x"}, isError[*types.BatchEntryIdsNotDistinct]},
		{"bad ID", []string{"a.b"}, isError[*types.InvalidBatchEntryId]},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			deletes := []types.DeleteMessageBatchRequestEntry{}
			changes := []types.ChangeMessageVisibilityBatchRequestEntry{}
			for _, id := range test.ids {
				deletes = append(deletes, types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: handle})
				changes = append(changes, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(id), ReceiptHandle: handle, VisibilityTimeout: 60})
			}

			_, deleteErr := e.sqs.DeleteMessageBatch(e.ctx(), &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: deletes})
			_, changeErr := e.sqs.ChangeMessageVisibilityBatch(e.ctx(), &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: changes})

			is.True(test.check(deleteErr)) // DeleteMessageBatch: the SDK's error type
			is.True(test.check(changeErr)) // ChangeMessageVisibilityBatch too
		})
	}
}

func TestChangeMessageVisibilityBatch_BadTimeouts_FailOnlyTheirEntries(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	first, second := e.receiveOne(url, nil), e.receiveOne(url, nil)

	res := e.post("AmazonSQS.ChangeMessageVisibilityBatch", "application/x-amz-json-1.0", `{"QueueUrl":"`+url+`","Entries":[`+
		`{"Id":"negative","ReceiptHandle":"`+aws.ToString(first.ReceiptHandle)+`","VisibilityTimeout":-1},`+
		`{"Id":"missing","ReceiptHandle":"`+aws.ToString(first.ReceiptHandle)+`"},`+
		`{"Id":"good","ReceiptHandle":"`+aws.ToString(second.ReceiptHandle)+`","VisibilityTimeout":0}]}`, true)

	is.Equal(res.status, http.StatusOK)
	var out struct {
		Successful []struct{ Id string }
		Failed     []struct{ Id, Code string }
	}
	is.NoErr(json.Unmarshal(res.body, &out))
	is.Equal(len(out.Successful), 1)
	is.Equal(out.Successful[0].Id, "good") // released
	is.Equal(len(out.Failed), 2)
	is.Equal(out.Failed[0].Id, "negative")
	is.Equal(out.Failed[0].Code, "InvalidParameterValue") // out of range, on its own
	is.Equal(out.Failed[1].Id, "missing")
	is.Equal(out.Failed[1].Code, "MissingParameter") // no timeout, on its own
	again := e.receive(url, nil)
	is.Equal(aws.ToString(again.MessageId), aws.ToString(second.MessageId)) // the good entry's message was released, the other still held
}
