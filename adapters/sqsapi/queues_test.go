package sqsapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/sqsapi"
)

func TestCreateQueue_ReturnsTheURLOfTheAccountAndName(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	url := e.createQueue("orders", nil)

	is.Equal(url, e.url+"/000000000000/orders") // <endpoint>/<account>/<name>
	got, err := e.sqs.GetQueueUrl(e.ctx(), &sqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	is.NoErr(err)
	is.Equal(aws.ToString(got.QueueUrl), url) // GetQueueUrl finds it by name
}

func TestCreateQueue_ExistingQueue_SucceedsOnlyWithTheSameAttributes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", map[string]string{"VisibilityTimeout": "60"})

	again := e.createQueue("orders", map[string]string{"VisibilityTimeout": "60"})
	_, err := e.sqs.CreateQueue(e.ctx(), &sqs.CreateQueueInput{QueueName: aws.String("orders"),
		Attributes: map[string]string{"VisibilityTimeout": "61"}})

	is.Equal(again, url)                          // the same request finds the queue
	is.True(isError[*types.QueueNameExists](err)) // another value is refused
	is.Equal(apiCode(err), "QueueAlreadyExists")  // with SQS's legacy code
}

func TestCreateQueue_NamesRetsuCannotHold_AreRefusedUnchanged(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, name := range []string{"Orders", "orders.fifo", "-orders", strings.Repeat("a", 65), "orders!"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := e.sqs.CreateQueue(e.ctx(), &sqs.CreateQueueInput{QueueName: aws.String(name)})

			is.Equal(apiCode(err), "InvalidParameterValue") // refused, not lowercased or cut
		})
	}
}

func TestCreateQueue_AttributesRetsuCannotHonour_AreRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		name, attribute, value, code string
	}{
		{"FIFO", "FifoQueue", "true", "InvalidAttributeValue"},
		{"queue delay", "DelaySeconds", "5", "InvalidAttributeValue"},
		{"queue wait", "ReceiveMessageWaitTimeSeconds", "20", "InvalidAttributeValue"},
		{"visibility 0", "VisibilityTimeout", "0", "InvalidAttributeValue"},
		{"visibility past 6 h", "VisibilityTimeout", "21601", "InvalidAttributeValue"},
		{"retention past 30 days", "MessageRetentionPeriod", "2592001", "InvalidAttributeValue"},
		{"policy", "Policy", `{"Version":"2012-10-17"}`, "InvalidAttributeValue"},
		{"KMS", "KmsMasterKeyId", "alias/aws/sqs", "InvalidAttributeValue"},
		{"dead letters in another queue", "RedrivePolicy",
			`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:other","maxReceiveCount":"5"}`, "InvalidAttributeValue"},
		{"more receives than Retsu allows", "RedrivePolicy", `{"maxReceiveCount":101}`, "InvalidAttributeValue"},
		{"no redrive policy", "RedrivePolicy", "", "InvalidAttributeValue"},
		{"read-only", "QueueArn", "arn:aws:sqs:us-east-1:000000000000:q", "InvalidAttributeName"},
		{"unknown", "Colour", "blue", "InvalidAttributeName"},
	}
	for i, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := e.sqs.CreateQueue(e.ctx(), &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("q%d", i)),
				Attributes: map[string]string{test.attribute: test.value}})

			is.Equal(apiCode(err), test.code) // refused, never ignored
		})
	}
}

func TestCreateQueue_Tags_AreRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	_, err := e.sqs.CreateQueue(e.ctx(), &sqs.CreateQueueInput{QueueName: aws.String("tagged"), Tags: map[string]string{"team": "a"}})

	is.Equal(apiCode(err), "InvalidParameterValue") // Retsu queues have no tags
}

func TestGetQueueUrl_UnknownQueue_IsQueueDoesNotExist(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	_, err := e.sqs.GetQueueUrl(e.ctx(), &sqs.GetQueueUrlInput{QueueName: aws.String("missing")})

	is.True(isError[*types.QueueDoesNotExist](err))                   // the SDK's error type
	is.Equal(apiCode(err), "AWS.SimpleQueueService.NonExistentQueue") // and SQS's legacy code
}

func TestListQueues_KeepsThePrefixAndPagesWithNextToken(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	for _, name := range []string{"a-1", "b-1", "b-2", "b-3", "b", "c-1"} {
		e.createQueue(name, nil)
	}

	first, err := e.sqs.ListQueues(e.ctx(), &sqs.ListQueuesInput{QueueNamePrefix: aws.String("b"), MaxResults: aws.Int32(2)})
	is.NoErr(err)
	second, err := e.sqs.ListQueues(e.ctx(), &sqs.ListQueuesInput{QueueNamePrefix: aws.String("b"), MaxResults: aws.Int32(2), NextToken: first.NextToken})
	is.NoErr(err)
	all, err := e.sqs.ListQueues(e.ctx(), &sqs.ListQueuesInput{})
	is.NoErr(err)

	is.Equal(first.QueueUrls, []string{e.url + "/000000000000/b", e.url + "/000000000000/b-1"}) // in name order, from the prefix itself
	is.True(first.NextToken != nil)                                                             // with a token for more
	is.Equal(second.QueueUrls, []string{e.url + "/000000000000/b-2", e.url + "/000000000000/b-3"})
	is.Equal(second.NextToken, nil) // and none after the last
	is.Equal(len(all.QueueUrls), 6) // without a prefix, every queue
	is.Equal(all.NextToken, nil)    // in one answer when MaxResults is not given
}

func TestGetQueueAttributes_All_ShowsSettingsCountsAndIdentity(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", map[string]string{"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600",
		"RedrivePolicy": `{"maxReceiveCount":"7"}`})
	for _, delay := range []int32{0, 0, 60} {
		_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"), DelaySeconds: delay})
		is.NoErr(err)
	}
	_, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url})
	is.NoErr(err)

	out, err := e.sqs.GetQueueAttributes(e.ctx(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})

	is.NoErr(err)
	a := out.Attributes
	is.Equal(a["QueueArn"], "arn:aws:sqs:eu-west-3:000000000000:orders") // the region the client signed for
	is.Equal(a["VisibilityTimeout"], "45")
	is.Equal(a["MessageRetentionPeriod"], "3600")
	is.Equal(a["DelaySeconds"], "0")
	is.Equal(a["ApproximateNumberOfMessages"], "1")           // ready
	is.Equal(a["ApproximateNumberOfMessagesNotVisible"], "1") // in flight
	is.Equal(a["ApproximateNumberOfMessagesDelayed"], "1")    // delayed
	is.True(a["CreatedTimestamp"] != "")                      // from the queue's ID
	var policy struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	is.NoErr(json.Unmarshal([]byte(a["RedrivePolicy"]), &policy))
	is.Equal(policy.MaxReceiveCount, 7)                                               // the attempt limit
	is.Equal(policy.DeadLetterTargetArn, "arn:aws:sqs:eu-west-3:000000000000:orders") // kept with the queue itself
}

func TestGetQueueAttributes_SomeNames_ShowsOnlyThose(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	out, err := e.sqs.GetQueueAttributes(e.ctx(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout}})

	is.NoErr(err)
	is.Equal(out.Attributes, map[string]string{"VisibilityTimeout": "30"}) // Retsu's default
}

func TestSetQueueAttributes_ChangesRetsusSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	_, err := e.sqs.SetQueueAttributes(e.ctx(), &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{
		"VisibilityTimeout": "120", "MessageRetentionPeriod": "86400", "DelaySeconds": "0",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-3:000000000000:orders","maxReceiveCount":3}`,
	}})
	is.NoErr(err)

	out, err := e.sqs.GetQueueAttributes(e.ctx(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{"VisibilityTimeout", "MessageRetentionPeriod", "RedrivePolicy"}})
	is.NoErr(err)
	is.Equal(out.Attributes["VisibilityTimeout"], "120")
	is.Equal(out.Attributes["MessageRetentionPeriod"], "86400")
	is.True(strings.Contains(out.Attributes["RedrivePolicy"], `"maxReceiveCount":3`))
}

func TestDeleteQueue_ThenItsURLNamesNoQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	_, err := e.sqs.DeleteQueue(e.ctx(), &sqs.DeleteQueueInput{QueueUrl: &url})
	is.NoErr(err)
	_, sendErr := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})
	recreated := e.createQueue("orders", nil)
	_, afterErr := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &recreated, MessageBody: aws.String("m")})

	is.True(isError[*types.QueueDoesNotExist](sendErr)) // the deleted queue is gone
	is.NoErr(afterErr)                                  // and its name serves a new queue at once
}

func TestPurgeQueue_RemovesEveryMessage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)
	_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})
	is.NoErr(err)

	_, err = e.sqs.PurgeQueue(e.ctx(), &sqs.PurgeQueueInput{QueueUrl: &url})
	is.NoErr(err)

	out, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url})
	is.NoErr(err)
	is.Equal(len(out.Messages), 0) // nothing left
}

func TestQueueURL_OfAnotherAccount_IsQueueDoesNotExist(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	e.createQueue("orders", nil)

	_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: aws.String(e.url + "/123456789012/orders"), MessageBody: aws.String("m")})

	is.True(isError[*types.QueueDoesNotExist](err)) // one Retsu is one account
}

// queueArn returns the QueueArn that client reads for the queue of url.
func queueArn(t *testing.T, e *endpoint, client *sqs.Client, url string) string {
	t.Helper()
	out, err := client.GetQueueAttributes(e.ctx(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

func TestQueueArn_HasTheRegionOfTheSignature_OrTheConfiguredOne(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	signed := setup(t)
	signedURL := signed.createQueue("orders", nil)
	configured := setupWith(t, sqsapi.Options{Credentials: map[string]string{accessKeyID: secretKey}, Region: "ap-south-1"})
	configuredURL := configured.createQueue("orders", nil)
	open := setupWith(t, sqsapi.Options{})
	open.post("AmazonSQS.CreateQueue", "application/x-amz-json-1.0", `{"QueueName":"orders"}`, false)
	unsigned := open.post("AmazonSQS.GetQueueAttributes", "application/x-amz-json-1.0",
		`{"QueueUrl":"`+open.url+`/000000000000/orders","AttributeNames":["QueueArn"]}`, false)

	is.Equal(queueArn(t, signed, signed.sqs, signedURL), "arn:aws:sqs:eu-west-3:000000000000:orders")              // the client's region
	is.Equal(queueArn(t, configured, configured.sqs, configuredURL), "arn:aws:sqs:ap-south-1:000000000000:orders") // the configured region, whatever the client signed for
	is.Equal(string(unsigned.body), `{"Attributes":{"QueueArn":"arn:aws:sqs:us-east-1:000000000000:orders"}}`)     // the default, for a request that names no region
	_, err := configured.sqs.SetQueueAttributes(configured.ctx(), &sqs.SetQueueAttributesInput{QueueUrl: &configuredURL,
		Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:ap-south-1:000000000000:orders","maxReceiveCount":2}`}})
	is.NoErr(err) // the queue's own ARN, as it is shown, is its dead-letter target
	_, err = configured.sqs.SetQueueAttributes(configured.ctx(), &sqs.SetQueueAttributesInput{QueueUrl: &configuredURL,
		Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-3:000000000000:orders","maxReceiveCount":2}`}})
	is.Equal(apiCode(err), "InvalidAttributeValue") // an ARN of another region names another queue
}

func TestQueueURL_ThroughAnotherHost_NamesTheSameQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	e.createQueue("orders", nil)
	req, err := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(`{"QueueName":"orders"}`))
	is.NoErr(err)
	req.Host = "sqs.example.internal:9324" // as through a proxy or another name of the endpoint
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueUrl")
	signRequest(t, req, []byte(`{"QueueName":"orders"}`), secretKey, time.Now())

	res := e.do(req)
	_, sendErr := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{
		QueueUrl: aws.String("https://sqs.eu-west-3.amazonaws.com/000000000000/orders"), MessageBody: aws.String("m")})

	is.Equal(string(res.body), `{"QueueUrl":"http://sqs.example.internal:9324/000000000000/orders"}`) // the host the client used
	is.NoErr(sendErr)                                                                                 // and any host names the queue by account and name
}
