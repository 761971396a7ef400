package httpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retsu/retsu/domain"
)

// Error is an error answer of the API: its HTTP status and its problem document
// (application/problem+json). It unwraps to a *domain.Error with the same code, so that
// errors.Is(err, domain.ErrQueueNotFound) and domain.ErrorCode(err) work on it as on the
// errors of the in-process service.
type Error struct {
	// Status is the HTTP status of the answer.
	Status int
	// Code is the problem's stable code, such as queue_not_found or lease_lost. An answer
	// that is not a problem document (from a proxy, say) gets service_unavailable for a 502,
	// 503 or 504 and internal_error otherwise.
	Code domain.Code
	// Detail is the problem's human sentence.
	Detail string
	// Pointer is the JSON Pointer (RFC 6901) into the request body of the part at fault,
	// such as /messages/3/priority; empty when the problem names none.
	Pointer string
	// RetryAfter is the pause the server asked for in a Retry-After header; zero without
	// one.
	RetryAfter time.Duration
}

// Error returns the code, the status and the detail, as in
// "queue_not_found (404): the queue does not exist".
func (e *Error) Error() string {
	s := fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Detail)
	if e.Pointer != "" {
		s += " at " + e.Pointer
	}
	return s
}

// Unwrap returns the error as a *domain.Error with the answer's code and detail.
func (e *Error) Unwrap() error { return &domain.Error{Code: e.Code, Message: e.Detail} }

// TransportError is a request that got no answer from the API: the connection could not be
// made or broke, the context ended, or the answer could not be read. Err is the cause;
// errors.Is(err, context.Canceled) and the like see through it.
type TransportError struct {
	Method, Path string
	Err          error
}

// Error names the request and the cause.
func (e *TransportError) Error() string { return e.Method + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// The codes that only the HTTP API answers; the others are domain's.
const (
	// CodeUnauthorized answers a request without a valid bearer token (see Options.Token).
	CodeUnauthorized domain.Code = "unauthorized"
)

// problemDocument is the body of an error answer (RFC 9457), with the pointer extension.
type problemDocument struct {
	Detail  string      `json:"detail"`
	Code    domain.Code `json:"code"`
	Pointer string      `json:"pointer"`
}

// maxProblemBytes bounds what is read of an error answer.
const maxProblemBytes = 64 << 10

// errorOf reads the error answer res into an *Error.
func errorOf(res *http.Response) error {
	e := &Error{Status: res.StatusCode, RetryAfter: retryAfter(res.Header)}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxProblemBytes))
	var p problemDocument
	if isProblem(res.Header) && json.Unmarshal(body, &p) == nil && p.Code != "" {
		e.Code, e.Detail, e.Pointer = p.Code, p.Detail, p.Pointer
		return e
	}
	e.Code = domain.CodeInternal
	switch res.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		e.Code = domain.CodeUnavailable
	}
	e.Detail = "the answer is not a problem document: " + http.StatusText(res.StatusCode)
	return e
}

// isProblem reports whether the answer declares a problem document.
func isProblem(h http.Header) bool {
	media, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(media), "application/problem+json")
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date; zero without one.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(v); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// asEntryError returns the error of a batch whose problem points into entry i of
// /messages as the *domain.EntryError of that entry, as the service reports it; other
// errors are returned as they are.
func asEntryError(err error) error {
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		return err
	}
	rest, ok := strings.CutPrefix(apiErr.Pointer, "/messages/")
	if !ok {
		return err
	}
	index, _, _ := strings.Cut(rest, "/")
	i, convErr := strconv.Atoi(index)
	if convErr != nil || i < 0 {
		return err
	}
	return &domain.EntryError{Index: i, Err: err}
}

// entryCodes are the codes of one message's values: the single enqueue route answers them
// without a pointer, and the client reports them as the error of entry 0, as the service
// does.
var entryCodes = map[domain.Code]bool{
	domain.CodeInvalidPriority: true,
	domain.CodeInvalidTTL:      true,
	domain.CodeInvalidDelay:    true,
}

// asFirstEntryError returns an error of a single enqueue with an entry's code as the
// *domain.EntryError of entry 0.
func asFirstEntryError(err error) error {
	var apiErr *Error
	if errors.As(err, &apiErr) && entryCodes[apiErr.Code] {
		return &domain.EntryError{Index: 0, Err: err}
	}
	return err
}

// ErrOutcomeUnknown marks the failure of a request that may or may not have taken effect:
// it reached the server (or a proxy in front of it) but no answer said what it did.
var ErrOutcomeUnknown = errors.New("httpclient: the outcome of the request is unknown")

// Is makes errors.Is(err, ErrOutcomeUnknown) true for a proxy's 502 Bad Gateway or 504
// Gateway Timeout, which do not say whether the request reached Retsu.
func (e *Error) Is(target error) bool {
	return target == ErrOutcomeUnknown && (e.Status == http.StatusBadGateway || e.Status == http.StatusGatewayTimeout)
}

// Is makes errors.Is(err, ErrOutcomeUnknown) true for a request that may have reached the
// server: every one but those whose connection could not be made.
func (e *TransportError) Is(target error) bool {
	return target == ErrOutcomeUnknown && !neverSent(e.Err)
}
