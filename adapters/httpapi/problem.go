package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
)

// The codes of errors in the request itself, which only the HTTP adapter can detect.
const (
	codeInvalidJSON          domain.Code = "invalid_json"
	codeInvalidPath          domain.Code = "invalid_path"
	codePayloadTooLarge      domain.Code = "payload_too_large"
	codeUnsupportedMediaType domain.Code = "unsupported_media_type"
	codeNotFound             domain.Code = "not_found"
	codeMethodNotAllowed     domain.Code = "method_not_allowed"
	codeUnauthorized         domain.Code = "unauthorized"
	codeHeadersTooLarge      domain.Code = "headers_too_large"
	codeCrossOriginRequest   domain.Code = "cross_origin_request"
	codeInvalidHost          domain.Code = "invalid_host"
)

// statusByCode maps every error code to its HTTP status. A code missing here is answered as
// an internal error.
var statusByCode = map[domain.Code]int{
	codeInvalidJSON:                       http.StatusBadRequest,
	codeInvalidPath:                       http.StatusBadRequest,
	codePayloadTooLarge:                   http.StatusRequestEntityTooLarge,
	codeUnsupportedMediaType:              http.StatusUnsupportedMediaType,
	codeNotFound:                          http.StatusNotFound,
	codeMethodNotAllowed:                  http.StatusMethodNotAllowed,
	codeUnauthorized:                      http.StatusUnauthorized,
	codeHeadersTooLarge:                   http.StatusRequestHeaderFieldsTooLarge,
	codeAmbiguousFraming:                  http.StatusBadRequest,
	codeCrossOriginRequest:                http.StatusForbidden,
	codeInvalidHost:                       http.StatusBadRequest,
	domain.CodeInvalidQueueName:           http.StatusBadRequest,
	domain.CodeInvalidVisibilityTimeout:   http.StatusBadRequest,
	domain.CodeInvalidMaxDeliveryAttempts: http.StatusBadRequest,
	domain.CodeInvalidDefaultMessageTTL:   http.StatusBadRequest,
	domain.CodeInvalidPriority:            http.StatusBadRequest,
	domain.CodeInvalidTTL:                 http.StatusBadRequest,
	domain.CodeInvalidDelay:               http.StatusBadRequest,
	domain.CodeInvalidBatchSize:           http.StatusBadRequest,
	domain.CodeInvalidWait:                http.StatusBadRequest,
	domain.CodeInvalidMaxMessages:         http.StatusBadRequest,
	domain.CodeInvalidIdempotencyKey:      http.StatusBadRequest,
	domain.CodeInvalidQuery:               http.StatusBadRequest,
	domain.CodeEmptyQueueUpdate:           http.StatusBadRequest,
	domain.CodeQueueNotFound:              http.StatusNotFound,
	domain.CodeDeadLetterNotFound:         http.StatusNotFound,
	domain.CodeQueueAlreadyExists:         http.StatusConflict,
	domain.CodeLeaseLost:                  http.StatusConflict,
	domain.CodeIdempotencyKeyInUse:        http.StatusConflict,
	domain.CodeIdempotencyKeyReused:       http.StatusUnprocessableEntity,
	domain.CodeUnavailable:                http.StatusServiceUnavailable,
	domain.CodeInternal:                   http.StatusInternalServerError,
}

// retryAfterSeconds is the Retry-After of a 503, and of a 409 idempotency_key_in_use: the
// database is usually back, the connection pool refilled, or the request that holds the key
// committed, within a second or two.
const retryAfterSeconds = "1"

// problem is the body of every error answer (RFC 9457). Pointer, the extension member of
// RFC 9457's example, is a JSON Pointer (RFC 6901) to the part of the request body at fault:
// only errors of one entry of a batch carry it.
type problem struct {
	Type    string      `json:"type"`
	Title   string      `json:"title"`
	Status  int         `json:"status"`
	Detail  string      `json:"detail"`
	Code    domain.Code `json:"code"`
	Pointer string      `json:"pointer,omitempty"`
}

// requestError returns an error in the request with the given code and detail.
func requestError(code domain.Code, detail string) error {
	return &domain.Error{Code: code, Message: detail}
}

// pointedError is an error of one place of the request body, which its answer names in the
// problem's pointer member.
type pointedError struct {
	pointer string
	err     error
}

func (e *pointedError) Error() string { return e.pointer + ": " + e.err.Error() }

// Unwrap returns the error, whose code is the answer's.
func (e *pointedError) Unwrap() error { return e.err }

// pointAt returns err as an error of the place pointer, or err itself when pointer is empty
// or err is nil.
func pointAt(pointer string, err error) error {
	if err == nil || pointer == "" {
		return err
	}
	return &pointedError{pointer: pointer, err: err}
}

// statusClientClosedRequest is the status of the answer to a request whose client went
// away: nginx's 499 (client closed request). Nobody reads it; the request log and the
// metrics show it, apart from the 503s of the server's own trouble.
const statusClientClosedRequest = 499

// problemWriter answers errors as problem+json, logging those that operators must see.
type problemWriter struct {
	log *slog.Logger
	// timeouts logs the requests that ran out of their time, at most once a second.
	timeouts *throttledWarning
}

func newProblemWriter(log *slog.Logger) *problemWriter {
	return &problemWriter{log: log, timeouts: &throttledWarning{log: log, every: time.Second, now: time.Now}}
}

// write answers err as problem+json with the caller-safe message of its code; an error
// without a code is internal and gets a generic detail. 5xx errors are logged with their
// full text, which the client never sees. A request whose client went away gets only the
// status 499.
//
// An answer already started (its status is written) cannot become a problem: the problem
// would follow the bytes already sent. write logs err and cuts the connection instead, by
// panicking with http.ErrAbortHandler, so that the client sees the answer incomplete rather
// than taking what it got for the whole.
func (p *problemWriter) write(w http.ResponseWriter, r *http.Request, err error) {
	if answerStarted(w) {
		p.log.LogAttrs(r.Context(), slog.LevelError, "answer failed after it started; connection cut",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("err", err.Error()),
			slog.String("request_id", RequestID(r.Context())))
		panic(http.ErrAbortHandler)
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away (a long poll it gave up, a closed connection): nobody reads
		// the answer, and nothing failed on this side.
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	timedOut := errors.Is(err, context.DeadlineExceeded)
	if timedOut && domain.ErrorCode(err) == domain.CodeInternal {
		// The request ran out of its time (see Options.RequestTimeout) somewhere that did
		// not say why: the work may succeed when it is retried.
		err = domain.Unavailable(err)
	}
	code := domain.ErrorCode(err)
	status, ok := statusByCode[code]
	if !ok {
		code, status = domain.CodeInternal, http.StatusInternalServerError
	}
	if status >= 500 {
		p.logFailure(r, status, err, timedOut)
	}
	if status == http.StatusServiceUnavailable || code == domain.CodeIdempotencyKeyInUse {
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	var pointed *pointedError
	pointer := ""
	if errors.As(err, &pointed) {
		pointer = pointed.pointer
	}
	writeProblem(w, status, problem{Code: code, Detail: domain.ErrorMessage(err), Pointer: pointer})
}

// logFailure logs a 5xx. An internal error is a bug or an outage to look into. A 503 is
// logged at debug level only: during an outage or an overload it would be logged for every
// request, and its cause is logged where it is detected. A request that ran out of its time
// is a warning too, since a hung dependency shows first as timeouts; at most one a second,
// counting those left out.
func (p *problemWriter) logFailure(r *http.Request, status int, err error, timedOut bool) {
	level := slog.LevelError
	if status == http.StatusServiceUnavailable {
		level = slog.LevelDebug
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.String("err", err.Error()),
		slog.String("request_id", RequestID(r.Context())),
	}
	p.log.LogAttrs(r.Context(), level, "request failed", attrs...)
	if timedOut && status == http.StatusServiceUnavailable {
		p.timeouts.warn(r.Context(), "request ran out of its time (RETSU_REQUEST_TIMEOUT); answered 503", attrs...)
	}
}

// writeProblem writes p with the given status, filling its type, title and status.
func writeProblem(w http.ResponseWriter, status int, p problem) {
	p.Type, p.Title, p.Status = "about:blank", http.StatusText(status), status
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// throttledWarning logs a warning at most once every period; the next line it logs counts,
// in not_logged, the ones it left out meanwhile.
type throttledWarning struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	last      time.Time
	notLogged int
}

func (t *throttledWarning) warn(ctx context.Context, msg string, attrs ...slog.Attr) {
	t.mu.Lock()
	now := t.now()
	if !t.last.IsZero() && now.Sub(t.last) < t.every {
		t.notLogged++
		t.mu.Unlock()
		return
	}
	notLogged := t.notLogged
	t.last, t.notLogged = now, 0
	t.mu.Unlock()
	t.log.LogAttrs(ctx, slog.LevelWarn, msg, append(attrs, slog.Int("not_logged", notLogged))...)
}
