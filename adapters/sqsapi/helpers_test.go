package sqsapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/sqsapi"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// The credentials of the signed endpoints of these tests.
const (
	accessKeyID = "AKIDRETSUTEST"
	secretKey   = "retsu-test-secret-key-0123456789"
)

// endpoint is an SQS endpoint over fresh memory stores, served by httptest.
type endpoint struct {
	t   *testing.T
	url string
	// sqs is an SDK client of the endpoint, signing with the endpoint's credentials.
	sqs *sqs.Client
	// svc is the service under the endpoint, for what SQS cannot show.
	svc *app.Service
}

// setup returns an endpoint that requires signatures.
func setup(t *testing.T) *endpoint {
	t.Helper()
	return setupWith(t, sqsapi.Options{Credentials: map[string]string{accessKeyID: secretKey}})
}

// setupWith returns an endpoint of the given options.
func setupWith(t *testing.T, o sqsapi.Options) *endpoint {
	t.Helper()
	queues := memory.NewQueueStore(memory.QueueStoreOptions{})
	svc := app.NewService(app.Ports{
		Queues:   queues,
		Messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues}),
		Cache:    memory.NewQueueCache(memory.QueueCacheOptions{}),
	}, app.Options{})
	server := httptest.NewServer(sqsapi.NewHandler(svc, o))
	t.Cleanup(func() {
		svc.Close()
		server.Close()
	})
	e := &endpoint{t: t, url: server.URL, svc: svc}
	e.sqs = e.client(accessKeyID, secretKey)
	return e
}

// client returns an SDK client of the endpoint that signs with the given credentials
// and does not retry.
func (e *endpoint) client(keyID, secret string) *sqs.Client {
	return sqs.NewFromConfig(aws.Config{
		Region:           "eu-west-3",
		Credentials:      credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		RetryMaxAttempts: 1,
	}, func(o *sqs.Options) { o.BaseEndpoint = aws.String(e.url) })
}

// ctx returns the test's context.
func (e *endpoint) ctx() context.Context { return e.t.Context() }

// createQueue creates a queue of the given name and attributes and returns its URL.
func (e *endpoint) createQueue(name string, attributes map[string]string) string {
	e.t.Helper()
	out, err := e.sqs.CreateQueue(e.ctx(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attributes})
	if err != nil {
		e.t.Fatalf("create queue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// answer is a raw answer of the endpoint.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// post sends a raw request of the JSON protocol for target, signed unless unsigned is
// set, and reads the answer.
func (e *endpoint) post(target, contentType, body string, sign bool) answer {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader([]byte(body)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	if sign {
		signRequest(e.t, req, []byte(body), secretKey, time.Now())
	}
	return e.do(req)
}

// do sends req and reads the answer.
func (e *endpoint) do(req *http.Request) answer {
	e.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: data}
}

// signRequest signs req, whose body is body, with Signature Version 4 as the SDKs do.
func signRequest(t *testing.T, req *http.Request, body []byte, secret string, at time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "sqs", "eu-west-3", at); err != nil {
		t.Fatal(err)
	}
}

// errorOf returns the SQS error of a raw answer: its __type, message and the code of its
// x-amzn-query-error header.
func (a answer) errorOf(t *testing.T) (shape, message, queryError string) {
	t.Helper()
	var body struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatalf("error answer %q: %v", a.body, err)
	}
	return body.Type, body.Message, a.header.Get("x-amzn-query-error")
}

// apiCode returns the error code the SDK reports for err, or "" when err is not an API
// error.
func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// isError reports, for is.True, whether err is an SDK error of type T.
func isError[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// mustQueueID returns the ID of the queue named name.
func mustQueueID(t *testing.T, e *endpoint, name string) domain.ID {
	t.Helper()
	queues, err := e.svc.ListQueues(e.ctx(), ports.ListQueuesParams{Name: &name})
	if err != nil || len(queues) != 1 {
		t.Fatalf("queue %s: %v", name, err)
	}
	return queues[0].ID
}

// optionsWithLimits returns the options of a signed endpoint with the given cap on
// concurrent requests and request timeout.
func optionsWithLimits(maxConcurrent int, timeout time.Duration) sqsapi.Options {
	return sqsapi.Options{Credentials: map[string]string{accessKeyID: secretKey}, MaxConcurrentRequests: maxConcurrent, RequestTimeout: timeout}
}
