package sqsapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/app"
)

// The protocol's headers and content type.
const (
	targetHeader    = "X-Amz-Target"
	targetPrefix    = "AmazonSQS."
	jsonContentType = "application/x-amz-json-1.0"
	// queryContentType is what the query protocol of older SDKs sends.
	queryContentType = "application/x-www-form-urlencoded"
)

// MaxBodyBytes bounds a request's body: 8 MiB, enough for a batch of the largest messages
// (1 MiB in all, see maxMessageBytes) even when JSON escapes every byte of them as \u00XX
// (six bytes for one), as encoders that escape HTML or all non-ASCII characters do.
const MaxBodyBytes = 8 << 20

// Options configure the SQS handler.
type Options struct {
	// Logger receives the errors behind 5xx answers, and a line per request at debug
	// level; nil discards them.
	Logger *slog.Logger
	// Credentials are the secret access keys by access key ID that requests must be signed
	// with (Signature Version 4). Empty leaves the endpoint open: requests are served
	// whether or not they are signed.
	Credentials map[string]string
	// MaxConcurrentRequests caps the requests served at once; past it, requests get 503
	// ServiceUnavailable, which the SDKs retry. Zero means no cap. A ReceiveMessage gives
	// its place up while it waits for messages (see MaxWaitingReceives).
	MaxConcurrentRequests int
	// MaxWaitingReceives caps the ReceiveMessage calls that wait for messages at once
	// (WaitTimeSeconds > 0); past it, they get 503 too. Zero means no cap.
	MaxWaitingReceives int
	// Capacity, when set, is the capacity that this endpoint shares with the process's
	// other listeners (the native API): its Requests and Waiting replace
	// MaxConcurrentRequests and MaxWaitingReceives, and its BodyBytes bounds the bytes of
	// request bodies held at once (past it, 503 before the body is read).
	Capacity *capacity.Shared
	// RequestTimeout bounds the work of one request, and of a long poll after its wait,
	// so that a hung database answers 503 instead of holding the request. Zero means no
	// bound.
	RequestTimeout time.Duration
	// Now is the clock that X-Amz-Date is checked against; nil is the system clock.
	Now func() time.Time
	// Region, when set, is the region of every queue ARN (QueueArn, RedrivePolicy).
	// Empty: each request's ARNs have the region its signature is scoped to, or
	// DefaultRegion. Requests may be signed for any region either way.
	Region string
}

// handler serves the SQS actions over Retsu.
type handler struct {
	svc            app.Retsu
	log            *slog.Logger
	verifier       *signatureVerifier // nil: the endpoint is open
	requests       *capacity.Slots
	waits          *capacity.Slots
	bodyBytes      *capacity.Bytes
	requestTimeout time.Duration
	queues         *queueNames
	region         string // see Options.Region
}

var _ http.Handler = (*handler)(nil)

// NewHandler returns the HTTP handler of the SQS endpoint over svc.
func NewHandler(svc app.Retsu, o Options) http.Handler {
	shared := o.Capacity
	if shared == nil {
		shared = &capacity.Shared{Requests: capacity.NewSlots(o.MaxConcurrentRequests), Waiting: capacity.NewSlots(o.MaxWaitingReceives)}
	}
	h := &handler{
		svc: svc, log: o.Logger, requestTimeout: o.RequestTimeout,
		requests: shared.Requests, waits: shared.Waiting, bodyBytes: shared.BodyBytes,
		queues: newQueueNames(svc, time.Now), region: o.Region,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if len(o.Credentials) > 0 {
		now := o.Now
		if now == nil {
			now = time.Now
		}
		h.verifier = &signatureVerifier{secrets: o.Credentials, now: now}
	}
	return h
}

// call is one request on its way through an action.
type call struct {
	h    *handler
	r    *http.Request
	body []byte
	// ctx bounds the action's work by the request timeout.
	ctx context.Context
	// release gives up the request's place among the concurrent requests; waiting moves
	// it to the places of waiting receives.
	release func()
	// region is the region of the ARNs of the answer (see handler.arnRegion).
	region string
}

// ServeHTTP serves one SQS request: it reserves the bytes of its body, reads it, takes a
// place among the concurrent requests, authenticates the request, runs its action and
// encodes the answer.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w.Header().Set("x-amzn-RequestId", newRequestID())
	status := http.StatusOK
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("SQS handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			status = errInternal.status
			writeError(w, r, h.log, fmt.Errorf("panic: %v", p))
		}
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "SQS request",
			slog.String("target", r.Header.Get(targetHeader)), slog.Int("status", status),
			slog.Duration("duration", time.Since(start)))
	}()
	releaseBytes, ok := h.bodyBytes.TryReserve(bodyReservation(r))
	if !ok {
		status = errServiceUnavailable.status
		w.Header().Set("Connection", "close")
		writeError(w, r, h.log, fail(errServiceUnavailable, "The server is at its limit of request bodies in memory; try again shortly."))
		return
	}
	defer releaseBytes()
	c := &call{h: h, r: r, release: func() {}, region: h.arnRegion(r)}
	defer func() { c.release() }()
	answer, err := c.serve(w)
	if err != nil {
		kind, _ := classify(err)
		status = kind.status
		if isQueryProtocol(r) {
			writeQueryProtocolError(w)
			return
		}
		writeError(w, r, h.log, err)
		return
	}
	writeAnswer(w, answer)
}

// serve reads, authenticates and dispatches the request, and returns the action's answer.
func (c *call) serve(w http.ResponseWriter) (any, error) {
	// Parse: method, content type and size, then take a place (once the body is in, so
	// that a slow upload holds none), then check the signature over what was read.
	body, err := readBody(w, c.r)
	if err != nil {
		return nil, err
	}
	c.body = body
	release, ok := c.h.requests.TryTake()
	if !ok {
		return nil, fail(errServiceUnavailable, "The server is at its limit of concurrent requests; try again shortly.")
	}
	c.release = release
	if c.h.verifier != nil {
		if err := c.h.verifier.verify(c.r, body); err != nil {
			return nil, err
		}
	}
	act, err := lookupAction(c.r.Header.Get(targetHeader))
	if err != nil {
		return nil, err
	}
	// Call, with the request's time bound.
	ctx, cancel := c.h.withTimeout(c.r.Context(), 0)
	defer cancel()
	c.ctx = ctx
	return act(c)
}

// withTimeout bounds ctx by the request timeout, after extra.
func (h *handler) withTimeout(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	if h.requestTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, h.requestTimeout+extra)
}

// waiting moves the request from the places of concurrent requests to those of waiting
// receives, for a ReceiveMessage that may wait wait, and returns its context, bounded by
// the wait and then the request timeout.
func (c *call) waiting(wait time.Duration) (context.Context, context.CancelFunc, error) {
	release, ok := c.h.waits.TryTake()
	if !ok {
		return nil, nil, fail(errServiceUnavailable, "The server is at its limit of waiting receives; try again shortly.")
	}
	c.release()
	c.release = release
	ctx, cancel := c.h.withTimeout(c.r.Context(), wait)
	return ctx, cancel, nil
}

// readBody checks the method and the content type and reads the body, at most
// MaxBodyBytes of valid UTF-8 (the JSON decoder would otherwise replace invalid bytes,
// changing a message body without a word). Past the limit, the server closes the
// connection after the answer rather than read the rest.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Method != http.MethodPost {
		return nil, fail(errInvalidAction, "The SQS endpoint accepts only POST requests of the AWS JSON 1.0 protocol.")
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if !strings.EqualFold(mediaType, jsonContentType) {
		return nil, fail(errSerialization, "The request's Content-Type must be %s (the AWS JSON 1.0 protocol).", jsonContentType)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, fail(errRequestTooLarge, "The request body must be at most %d bytes.", MaxBodyBytes)
	case err != nil:
		return nil, fmt.Errorf("read the request body: %w", err)
	case !utf8.Valid(body):
		return nil, fail(errSerialization, "The request body is not valid UTF-8.")
	}
	return body, nil
}

// decode reads the request's JSON object into in. Members the action does not know are
// ignored, as AWS services do, so that newer SDKs keep working.
func (c *call) decode(in any) error {
	decoder := json.NewDecoder(bytes.NewReader(c.body))
	if err := decoder.Decode(in); err != nil {
		return fail(errSerialization, "The request body is not a valid JSON object of this action: %v", err)
	}
	if decoder.More() {
		return fail(errSerialization, "The request body holds data after its JSON object.")
	}
	return nil
}

// writeAnswer encodes an action's answer.
func writeAnswer(w http.ResponseWriter, answer any) {
	body, err := json.Marshal(answer)
	if err != nil { // the answers are plain structs of strings, numbers and maps
		panic(fmt.Sprintf("sqsapi: encode answer: %v", err))
	}
	w.Header().Set("Content-Type", jsonContentType)
	_, _ = w.Write(body)
}

// isQueryProtocol reports whether r comes from an SDK of the query protocol, which reads
// errors as XML.
func isQueryProtocol(r *http.Request) bool {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return strings.EqualFold(mediaType, queryContentType)
}

// writeQueryProtocolError tells an SDK of the query protocol, in the XML it reads, that
// this endpoint speaks only the JSON protocol.
func writeQueryProtocolError(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">`+
		`<Error><Type>Sender</Type><Code>InvalidAction</Code><Message>This endpoint speaks the AWS JSON 1.0 protocol of current AWS SDKs, `+
		`not the query protocol; use an SDK version that sends X-Amz-Target: AmazonSQS.&lt;Action&gt;.</Message><Detail/></Error>`+
		`<RequestId>`+w.Header().Get("x-amzn-RequestId")+`</RequestId></ErrorResponse>`)
}

// RefuseRequest answers r with a 400 SerializationException of the SQS protocol, which the
// SDKs do not retry, whose message is reason: for a request refused before this endpoint's
// handler, such as one with an ambiguous framing.
func RefuseRequest(w http.ResponseWriter, r *http.Request, reason string) {
	w.Header().Set("x-amzn-RequestId", newRequestID())
	writeError(w, r, slog.New(slog.DiscardHandler), fail(errSerialization, "The request was refused: %s.", reason))
}

// bodyReservation is what the body of r may take in memory: its announced length, up to
// one byte past MaxBodyBytes (enough to tell it is too large), or that for a body of
// unknown length.
func bodyReservation(r *http.Request) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return MaxBodyBytes + 1
	}
	return min(r.ContentLength, MaxBodyBytes+1)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
