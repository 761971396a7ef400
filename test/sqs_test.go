package test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/matryer/is"
)

// The credentials that the SQS endpoints of these tests check.
const (
	sqsKeyID  = "AKIDRETSUE2E"
	sqsSecret = "retsu-e2e-secret-0123456789"
)

// sqsServer is a Retsu serving the SQS endpoint, signed with the tests' credentials.
type sqsServer struct {
	retsu *retsuProcess
	url   string
}

// startSQSServer starts `retsu serve` of binary with the SQS endpoint, on the test database
// unless env says otherwise.
func startSQSServer(t *testing.T, binary string, env ...string) *sqsServer {
	t.Helper()
	addr := freeAddress()
	p := startRetsu(t, binary, append([]string{"RETSU_SQS_ADDR=" + addr, "RETSU_SQS_CREDENTIALS=" + sqsKeyID + ":" + sqsSecret}, env...)...)
	return &sqsServer{retsu: p, url: "http://" + addr}
}

// client returns an SDK client of the endpoint, configured as an SQS user does: the
// default configuration with the endpoint URL changed.
func (s *sqsServer) client(t *testing.T, keyID, secret string, options ...func(*config.LoadOptions) error) *sqs.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(t.Context(), append([]func(*config.LoadOptions) error{
		config.WithRegion("eu-central-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(keyID, secret, "")),
		config.WithBaseEndpoint(s.url),
	}, options...)...)
	if err != nil {
		t.Fatal(err)
	}
	return sqs.NewFromConfig(cfg)
}

// TestSQS_EndToEnd runs every SQS action with the official AWS SDK for Go against the real
// binary on PostgreSQL and Redis.
func TestSQS_EndToEnd(t *testing.T) {
	t.Parallel()
	server := startSQSServer(t, binary)
	client := server.client(t, sqsKeyID, sqsSecret)
	t.Run("Queues", func(t *testing.T) { testSQSQueues(t, client) })
	t.Run("Messages", func(t *testing.T) { testSQSMessages(t, client) })
	t.Run("Batches", func(t *testing.T) { testSQSBatches(t, client) })
	t.Run("TraceHeaderAndLargestBody", func(t *testing.T) { testSQSTraceHeaderAndLargestBody(t, client) })
	t.Run("LongPollWokenBySend", func(t *testing.T) { testSQSLongPoll(t, client) })
	t.Run("Signatures", func(t *testing.T) { testSQSSignatures(t, server) })
}

func testSQSQueues(t *testing.T, client *sqs.Client) {
	is := is.New(t)
	ctx := t.Context()
	prefix := uniqueName("sqs")
	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-a"),
		Attributes: map[string]string{"VisibilityTimeout": "40", "RedrivePolicy": `{"maxReceiveCount":"4"}`}})
	is.NoErr(err)
	url := aws.ToString(created.QueueUrl)
	other, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-b")})
	is.NoErr(err)

	got, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-a")})
	is.NoErr(err)
	is.Equal(aws.ToString(got.QueueUrl), url) // found by name
	listed, err := client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix), MaxResults: aws.Int32(1)})
	is.NoErr(err)
	is.Equal(listed.QueueUrls, []string{url}) // a page of one
	rest, err := client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix), NextToken: listed.NextToken, MaxResults: aws.Int32(1)})
	is.NoErr(err)
	is.Equal(len(rest.QueueUrls), 1) // then the other

	_, err = client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"MessageRetentionPeriod": "7200"}})
	is.NoErr(err)
	attributes, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	is.NoErr(err)
	is.Equal(attributes.Attributes["VisibilityTimeout"], "40")
	is.Equal(attributes.Attributes["MessageRetentionPeriod"], "7200")
	is.True(strings.Contains(attributes.Attributes["RedrivePolicy"], `"maxReceiveCount":4`))
	is.True(strings.HasPrefix(attributes.Attributes["QueueArn"], "arn:aws:sqs:eu-central-1:000000000000:")) // the region the client signed for

	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})
	is.NoErr(err)
	_, err = client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
	is.NoErr(err)
	empty, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
	is.NoErr(err)
	is.Equal(len(empty.Messages), 0) // purged

	_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	is.NoErr(err)
	_, err = client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-a")})
	var missing *types.QueueDoesNotExist
	is.True(errors.As(err, &missing)) // the SDK's error type for a deleted queue
	_, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("Upper")})
	is.Equal(apiErrorCode(err), "InvalidParameterValue") // a name Retsu cannot hold
	_, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-c"), Attributes: map[string]string{"FifoQueue": "true"}})
	is.Equal(apiErrorCode(err), "InvalidAttributeValue") // no FIFO queues
	_, err = client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: other.QueueUrl, Tags: map[string]string{"k": "v"}})
	var unsupported *types.UnsupportedOperation
	is.True(errors.As(err, &unsupported)) // no tags
}

func testSQSMessages(t *testing.T, client *sqs.Client) {
	is := is.New(t)
	ctx := t.Context()
	url := createSQSQueue(t, client, map[string]string{"VisibilityTimeout": "2"})
	attributes := func(priority string) map[string]types.MessageAttributeValue {
		return map[string]types.MessageAttributeValue{
			"Priority": {DataType: aws.String("String"), StringValue: aws.String(priority)},
			"order":    {DataType: aws.String("Number"), StringValue: aws.String("17")},
			"blob":     {DataType: aws.String("Binary"), BinaryValue: []byte{0xde, 0xad}},
		}
	}
	low, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("low"), MessageAttributes: attributes("LOW")})
	is.NoErr(err) // the SDK checked MD5OfMessageBody
	high, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("high ✓"), MessageAttributes: attributes("HIGH")})
	is.NoErr(err)

	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	is.NoErr(err) // the SDK checked MD5OfBody
	is.Equal(len(out.Messages), 2)
	first, second := out.Messages[0], out.Messages[1]
	is.Equal(aws.ToString(first.MessageId), aws.ToString(high.MessageId))                           // HIGH first, though sent last
	is.Equal(aws.ToString(first.MD5OfMessageAttributes), aws.ToString(high.MD5OfMessageAttributes)) // the attributes came back whole
	is.Equal(first.MessageAttributes["blob"].BinaryValue, []byte{0xde, 0xad})
	is.Equal(first.Attributes["ApproximateReceiveCount"], "1")
	is.True(first.Attributes["SentTimestamp"] != "" && first.Attributes["ApproximateFirstReceiveTimestamp"] != "")
	is.Equal(aws.ToString(second.MessageId), aws.ToString(low.MessageId))

	_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 60})
	is.NoErr(err)
	_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: second.ReceiptHandle, VisibilityTimeout: 0})
	is.NoErr(err)
	again, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	is.NoErr(err)
	is.Equal(len(again.Messages), 1) // the released one only: the other is held
	is.Equal(aws.ToString(again.Messages[0].MessageId), aws.ToString(low.MessageId))

	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: first.ReceiptHandle})
	is.NoErr(err)
	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: second.ReceiptHandle})
	is.NoErr(err) // a stale handle's delete succeeds and removes nothing
	_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 5})
	is.Equal(apiErrorCode(err), "InvalidParameterValue") // the deleted message has no lease to change
	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String("forged")})
	var invalid *types.ReceiptHandleIsInvalid
	is.True(errors.As(err, &invalid))
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"), MessageAttributes: attributes("SOON")})
	is.Equal(apiErrorCode(err), "InvalidParameterValue") // an unknown priority
}

func testSQSBatches(t *testing.T, client *sqs.Client) {
	is := is.New(t)
	ctx := t.Context()
	url := createSQSQueue(t, client, nil)
	var entries []types.SendMessageBatchRequestEntry
	for _, id := range []string{"a", "b", "c"} {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String("body " + id), DelaySeconds: 0})
	}
	entries[1].MessageAttributes = map[string]types.MessageAttributeValue{"Priority": {DataType: aws.String("String"), StringValue: aws.String("NOW")}}

	sent, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
	is.NoErr(err)
	is.Equal(len(sent.Successful), 2) // a and c
	is.Equal(len(sent.Failed), 1)
	is.Equal(aws.ToString(sent.Failed[0].Id), "b")

	received, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	is.NoErr(err)
	is.Equal(len(received.Messages), 2)
	changed, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("1"), ReceiptHandle: received.Messages[0].ReceiptHandle, VisibilityTimeout: 120},
			{Id: aws.String("2"), ReceiptHandle: received.Messages[1].ReceiptHandle, VisibilityTimeout: 120},
		}})
	is.NoErr(err)
	is.Equal(len(changed.Successful), 2)
	deleted, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("1"), ReceiptHandle: received.Messages[0].ReceiptHandle},
		{Id: aws.String("2"), ReceiptHandle: received.Messages[1].ReceiptHandle},
		{Id: aws.String("3"), ReceiptHandle: aws.String("forged")},
	}})
	is.NoErr(err)
	is.Equal(len(deleted.Successful), 2)
	is.Equal(aws.ToString(deleted.Failed[0].Code), "ReceiptHandleIsInvalid")
	counts, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	is.NoErr(err)
	is.Equal(counts.Attributes, map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}) // all deleted
}

func testSQSTraceHeaderAndLargestBody(t *testing.T, client *sqs.Client) {
	is := is.New(t)
	ctx := t.Context()
	url := createSQSQueue(t, client, nil)
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
	body := strings.Repeat("✓", 1<<20/3) + "a" // 1,048,576 bytes, SQS's largest message

	_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body,
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(trace)}}})
	is.NoErr(err)
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAWSTraceHeader}})

	is.NoErr(err)
	is.Equal(len(out.Messages), 1)
	is.Equal(aws.ToString(out.Messages[0].Body), body)                               // stored in PostgreSQL byte for byte
	is.Equal(out.Messages[0].Attributes, map[string]string{"AWSTraceHeader": trace}) // the trace header came back
	is.Equal(len(out.Messages[0].MessageAttributes), 0)                              // and is no message attribute
}

func testSQSLongPoll(t *testing.T, client *sqs.Client) {
	is := is.New(t)
	ctx := t.Context()
	url := createSQSQueue(t, client, nil)
	go func() {
		time.Sleep(500 * time.Millisecond)
		_, _ = client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("wake up")})
	}()

	start := time.Now()
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20})

	is.NoErr(err)
	is.Equal(len(out.Messages), 1)             // the message sent during the wait
	is.True(time.Since(start) < 5*time.Second) // right after it was sent, not at the end of the wait
}

func testSQSSignatures(t *testing.T, server *sqsServer) {
	is := is.New(t)
	noRetry := config.WithRetryMaxAttempts(1)

	_, wrongSecret := server.client(t, sqsKeyID, "retsu-e2e-secret-but-wrong", noRetry).ListQueues(t.Context(), &sqs.ListQueuesInput{})
	_, unknownKey := server.client(t, "AKIDNOBODY", sqsSecret, noRetry).ListQueues(t.Context(), &sqs.ListQueuesInput{})

	is.Equal(apiErrorCode(wrongSecret), "SignatureDoesNotMatch") // a signature that does not match is refused
	is.Equal(apiErrorCode(unknownKey), "InvalidClientTokenId")   // and so is an unknown access key
}

// TestSQS_Region_Configured checks that RETSU_SQS_REGION sets the region of every ARN,
// whatever region the client signs for.
func TestSQS_Region_Configured(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	server := startSQSServer(t, binary, "RETSU_SQS_REGION=eu-north-1")
	client := server.client(t, sqsKeyID, sqsSecret)
	url := createSQSQueue(t, client, nil)

	out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})

	is.NoErr(err)
	is.True(strings.HasPrefix(out.Attributes["QueueArn"], "arn:aws:sqs:eu-north-1:000000000000:")) // the configured region, not eu-central-1
}

// TestSQS_SIGTERM_AnswersLongPollsAndStops checks that a stopping server answers the
// receives that wait, promptly, and exits cleanly.
func TestSQS_SIGTERM_AnswersLongPollsAndStops(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	server := startSQSServer(t, binary)
	client := server.client(t, sqsKeyID, sqsSecret, config.WithRetryMaxAttempts(1))
	url := createSQSQueue(t, client, nil)
	answered := make(chan error, 1)
	go func() {
		_, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20})
		answered <- err
	}()
	time.Sleep(500 * time.Millisecond) // the receive waits

	took, err := server.retsu.terminate()

	is.NoErr(err)                 // exit status 0
	is.True(took < 5*time.Second) // well before the receive's 20 s
	select {
	case err := <-answered:
		is.NoErr(err) // the waiting receive got its (empty) answer
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting receive was not answered")
	}
}

// createSQSQueue creates a queue of a unique name and returns its URL.
func createSQSQueue(t *testing.T, client *sqs.Client, attributes map[string]string) string {
	t.Helper()
	out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(uniqueName("sqs")), Attributes: attributes})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

// apiErrorCode returns the code the SDK reports for err, or "" when it is not an API error.
func apiErrorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
