package sqsapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/adapters/sqsapi"
)

const getQueueURLTarget = "AmazonSQS.GetQueueUrl"

func TestError_HasTheShapeAndHeaderTheSDKsRead(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	res := e.post(getQueueURLTarget, "application/x-amz-json-1.0", `{"QueueName":"missing"}`, true)

	shape, message, queryError := res.errorOf(t)
	is.Equal(res.status, http.StatusBadRequest)
	is.Equal(res.header.Get("Content-Type"), "application/x-amz-json-1.0")
	is.Equal(shape, "com.amazonaws.sqs#QueueDoesNotExist")                 // the shape the SDKs' types match
	is.Equal(queryError, "AWS.SimpleQueueService.NonExistentQueue;Sender") // the legacy code and fault
	is.Equal(message, "The specified queue does not exist.")
	is.True(res.header.Get("x-amzn-RequestId") != "") // every answer names its request
}

func TestSignature_WrongSecret_IsSignatureDoesNotMatch(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	_, err := e.client(accessKeyID, "not-the-secret-key-at-all").ListQueues(e.ctx(), &sqs.ListQueuesInput{})

	is.Equal(apiCode(err), "SignatureDoesNotMatch")
}

func TestSignature_UnknownAccessKey_IsInvalidClientTokenId(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	_, err := e.client("AKIDUNKNOWN", secretKey).ListQueues(e.ctx(), &sqs.ListQueuesInput{})

	is.Equal(apiCode(err), "InvalidClientTokenId")
}

func TestSignature_StaleDate_IsRefused(t *testing.T) {
	t.Parallel()
	for name, offset := range map[string]time.Duration{"16 minutes ago": -16 * time.Minute, "in 16 minutes": 16 * time.Minute} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := setup(t)
			body := `{"QueueName":"orders"}`
			req, err := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(body))
			is.NoErr(err)
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", getQueueURLTarget)
			signRequest(t, req, []byte(body), secretKey, time.Now().Add(offset))

			res := e.do(req)

			shape, message, _ := res.errorOf(t)
			is.Equal(res.status, http.StatusForbidden)
			is.Equal(shape, "com.amazonaws.sqs#SignatureDoesNotMatch") // what the SDKs correct their clock skew on
			is.True(strings.Contains(message, "Signature"))
		})
	}
}

func TestSignature_WithinTheSkew_IsAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setupWith(t, sqsapi.Options{Credentials: map[string]string{accessKeyID: secretKey},
		Now: func() time.Time { return time.Now().Add(14 * time.Minute) }})

	_, err := e.sqs.ListQueues(e.ctx(), &sqs.ListQueuesInput{})

	is.NoErr(err) // 14 minutes apart is within AWS's 15
}

func TestSignature_TamperedBody_IsSignatureDoesNotMatch(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	signed := `{"QueueName":"orders"}`
	req, err := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(signed))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.CreateQueue")
	signRequest(t, req, []byte(signed), secretKey, time.Now())
	tampered := []byte(`{"QueueName":"orderz"}`)
	req.Body, req.ContentLength = nopCloser{bytes.NewReader(tampered)}, int64(len(tampered))

	res := e.do(req)

	shape, _, _ := res.errorOf(t)
	is.Equal(shape, "com.amazonaws.sqs#SignatureDoesNotMatch") // the body is part of the signature
	_, err = e.sqs.GetQueueUrl(e.ctx(), &sqs.GetQueueUrlInput{QueueName: aws.String("orderz")})
	is.True(isError[*types.QueueDoesNotExist](err)) // and nothing was created
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func TestSignature_Missing_IsMissingAuthenticationToken(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	res := e.post(getQueueURLTarget, "application/x-amz-json-1.0", `{"QueueName":"orders"}`, false)

	shape, _, queryError := res.errorOf(t)
	is.Equal(res.status, http.StatusForbidden)
	is.Equal(shape, "com.amazonaws.sqs#MissingAuthenticationToken")
	is.Equal(queryError, "MissingAuthenticationToken;Sender")
}

func TestSignature_NoCredentialsConfigured_TheEndpointIsOpen(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setupWith(t, sqsapi.Options{})

	res := e.post("AmazonSQS.CreateQueue", "application/x-amz-json-1.0", `{"QueueName":"orders"}`, false)
	_, err := e.client("any", "thing-at-all-whatsoever").GetQueueUrl(e.ctx(), &sqs.GetQueueUrlInput{QueueName: aws.String("orders")})

	is.Equal(res.status, http.StatusOK) // unsigned requests are served
	is.NoErr(err)                       // and signed ones, whatever their key
}

func TestActions_UnsupportedOnes_AreUnsupportedOperation(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	url := e.createQueue("orders", nil)

	_, tagErr := e.sqs.TagQueue(e.ctx(), &sqs.TagQueueInput{QueueUrl: &url, Tags: map[string]string{"a": "b"}})
	_, permErr := e.sqs.AddPermission(e.ctx(), &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("l"),
		AWSAccountIds: []string{"1"}, Actions: []string{"SendMessage"}})

	is.True(isError[*types.UnsupportedOperation](tagErr)) // the SDK's error type
	is.True(isError[*types.UnsupportedOperation](permErr))
}

func TestRequests_OutsideTheProtocol_AreRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		name, target, contentType, body, shape string
		status                                 int
	}{
		{"unknown action", "AmazonSQS.Fly", "application/x-amz-json-1.0", `{}`, "com.amazonaws.sqs#InvalidAction", 400},
		{"no target", "", "application/x-amz-json-1.0", `{}`, "com.amazonaws.sqs#InvalidAction", 400},
		{"plain JSON", getQueueURLTarget, "application/json", `{}`, "com.amazonaws.sqs#SerializationException", 400},
		{"malformed JSON", getQueueURLTarget, "application/x-amz-json-1.0", `{"QueueName":`, "com.amazonaws.sqs#SerializationException", 400},
		{"a number for a string", getQueueURLTarget, "application/x-amz-json-1.0", `{"QueueName":1}`, "com.amazonaws.sqs#SerializationException", 400},
		{"too large", getQueueURLTarget, "application/x-amz-json-1.0", `{"QueueName":"` + strings.Repeat("a", sqsapi.MaxBodyBytes) + `"}`,
			"com.amazonaws.sqs#RequestEntityTooLarge", 413},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			res := e.post(test.target, test.contentType, test.body, true)

			shape, _, _ := res.errorOf(t)
			is.Equal(res.status, test.status)
			is.Equal(shape, test.shape)
		})
	}
}

func TestRequests_OfTheQueryProtocol_GetAnXMLErrorThatSaysWhy(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)

	res := e.post("", "application/x-www-form-urlencoded", "Action=ListQueues&Version=2012-11-05", true)

	is.Equal(res.status, http.StatusBadRequest)
	is.Equal(res.header.Get("Content-Type"), "text/xml") // what those SDKs read
	is.True(bytes.Contains(res.body, []byte("<Code>InvalidAction</Code>")))
	is.True(bytes.Contains(res.body, []byte("AWS JSON 1.0 protocol")))
}

func TestRequests_PastTheCap_AreServiceUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setupWith(t, sqsapi.Options{MaxWaitingReceives: 1})
	url := e.createQueue("orders", nil)
	waiting := make(chan struct{})
	go func() {
		close(waiting)
		_, _ = e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 2})
	}()
	<-waiting
	time.Sleep(200 * time.Millisecond) // the first receive waits

	_, err := e.sqs.ReceiveMessage(e.ctx(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 2})

	is.Equal(apiCode(err), "ServiceUnavailable") // a second waiting receive is past the cap
}

// signedListQueues returns a ListQueues request signed as the SDKs sign, for service at
// at, after prepare has set its headers.
func signedListQueues(t *testing.T, e *endpoint, service string, at time.Time, prepare func(*http.Request)) *http.Request {
	t.Helper()
	body := []byte(`{}`)
	req, err := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	if prepare != nil {
		prepare(req)
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretKey}
	if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, hex.EncodeToString(sum[:]), service, "eu-west-3", at); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignature_SignedHeaderValues_AreCanonicalAsTheSDKsMakeThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	req := signedListQueues(t, e, "sqs", time.Now(), func(req *http.Request) {
		req.Header.Add("X-Amz-Meta-Note", "  two   spaces\tand a tab  ")
		req.Header.Add("X-Amz-Meta-Note", "second value")
	})

	res := e.do(req)

	is.Equal(res.status, http.StatusOK) // runs of spaces collapse, a tab stays, values join with commas
}

func TestSignature_UnsignedHeaders_AreNotPartOfTheSignature(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setup(t)
	req := signedListQueues(t, e, "sqs", time.Now(), nil)
	req.Header.Set("X-Added-After-Signing", "anything")

	res := e.do(req)

	is.Equal(res.status, http.StatusOK) // only the headers of SignedHeaders count
}

func TestSignature_BadScopeOrHeaders_AreRefused(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	tests := []struct {
		name    string
		service string
		change  func(req *http.Request)
		shape   string
	}{
		{"SignedHeaders without host", "sqs", func(req *http.Request) {
			auth := req.Header.Get("Authorization")
			req.Header.Set("Authorization", strings.Replace(auth, "SignedHeaders=content-length;content-type;host;", "SignedHeaders=content-length;content-type;", 1))
		}, "IncompleteSignature"},
		{"a signed header changed", "sqs", func(req *http.Request) {
			req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues ")
			req.Header.Set("Content-Type", "application/x-amz-json-1.0; charset=utf-8")
		}, "SignatureDoesNotMatch"},
		{"another service", "sns", nil, "SignatureDoesNotMatch"},
		{"a scope of another day", "sqs", func(req *http.Request) {
			req.Header.Set("X-Amz-Date", now.Add(24*time.Hour).Format("20060102T150405Z"))
		}, "SignatureDoesNotMatch"},
		{"another terminator", "sqs", func(req *http.Request) {
			req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), "/aws4_request", "/aws5_request", 1))
		}, "IncompleteSignature"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := setup(t)
			req := signedListQueues(t, e, test.service, now, nil)
			if test.change != nil {
				test.change(req)
			}

			res := e.do(req)

			shape, _, _ := res.errorOf(t)
			is.Equal(shape, "com.amazonaws.sqs#"+test.shape)
		})
	}
}

func TestRequests_SharedCapacity_TakenElsewhere_AreServiceUnavailable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	shared := capacity.New(capacity.Options{MaxRequests: 1, MaxBodyBytes: 4096})
	e := setupWith(t, sqsapi.Options{Credentials: map[string]string{accessKeyID: secretKey}, Capacity: shared})
	url := e.createQueue("orders", nil)

	release, ok := shared.Requests.TryTake()
	is.True(ok) // another listener (the native API) holds the only place
	_, err := e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})
	is.Equal(apiCode(err), "ServiceUnavailable") // so this endpoint has none to give
	release()
	_, err = e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})
	is.NoErr(err) // once given back, it serves again

	releaseBytes, ok := shared.BodyBytes.TryReserve(4000)
	is.True(ok) // bodies elsewhere hold most of the budget
	_, err = e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(strings.Repeat("m", 200))})
	is.Equal(apiCode(err), "ServiceUnavailable") // a body past what is left is refused before it is read
	releaseBytes()
	_, err = e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(strings.Repeat("m", 200))})
	is.NoErr(err)
}

func TestRequests_SlowUpload_HoldsNoPlace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := setupWith(t, sqsapi.Options{MaxConcurrentRequests: 1})
	url := e.createQueue("orders", nil)
	host := strings.TrimPrefix(e.url, "http://")
	conn, err := net.Dial("tcp", host)
	is.NoErr(err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/x-amz-json-1.0\r\n"+
		"X-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100\r\n\r\n{")
	is.NoErr(err)
	time.Sleep(100 * time.Millisecond) // the upload has started and stalls

	_, err = e.sqs.SendMessage(e.ctx(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")})

	is.NoErr(err) // the one place was free: a body still arriving holds none
}
