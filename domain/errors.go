package domain

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code that callers can check. The HTTP adapter
// maps each code to one status.
type Code string

// The codes of the domain and of the service around it. Codes that only concern the shape of
// an HTTP request (invalid_json, invalid_path, …) live in the HTTP adapter.
const (
	CodeInvalidQueueName           Code = "invalid_queue_name"
	CodeInvalidVisibilityTimeout   Code = "invalid_visibility_timeout"
	CodeInvalidMaxDeliveryAttempts Code = "invalid_max_delivery_attempts"
	CodeInvalidDefaultMessageTTL   Code = "invalid_default_message_ttl"
	CodeInvalidPriority            Code = "invalid_priority"
	CodeInvalidTTL                 Code = "invalid_ttl"
	CodeInvalidQuery               Code = "invalid_query"
	CodeEmptyQueueUpdate           Code = "empty_queue_update"
	CodeQueueAlreadyExists         Code = "queue_already_exists"
	CodeQueueNotFound              Code = "queue_not_found"
	CodeInvalidDelay               Code = "invalid_delay"
	CodeInvalidBatchSize           Code = "invalid_batch_size"
	CodeInvalidWait                Code = "invalid_wait"
	CodeInvalidMaxMessages         Code = "invalid_max_messages"
	CodeLeaseLost                  Code = "lease_lost"
	CodeDeadLetterNotFound         Code = "dead_letter_not_found"
	CodeInvalidIdempotencyKey      Code = "invalid_idempotency_key"
	CodeIdempotencyKeyReused       Code = "idempotency_key_reused"
	CodeIdempotencyKeyInUse        Code = "idempotency_key_in_use"
	CodeUnavailable                Code = "service_unavailable"
	CodeInternal                   Code = "internal_error"
)

// Error is an error with a stable Code and a message that is safe to show to a caller. Err,
// when set, is the underlying cause: it is for logs and never shown to callers.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrQueueNotFound) holds for every queue_not_found error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors for the conditions that callers test for.
var (
	ErrQueueNotFound      = &Error{Code: CodeQueueNotFound, Message: "the queue does not exist"}
	ErrQueueAlreadyExists = &Error{Code: CodeQueueAlreadyExists, Message: "another queue already uses this name"}
	ErrEmptyQueueUpdate   = &Error{Code: CodeEmptyQueueUpdate, Message: "the update provides no setting"}
	ErrUnavailable        = &Error{Code: CodeUnavailable, Message: "the database is unavailable; try again shortly"}
	ErrLeaseLost          = &Error{Code: CodeLeaseLost, Message: "the receipt handle does not hold the message's lease: it is stale, its visibility timeout ended, or the message is gone"}
	ErrDeadLetterNotFound = &Error{Code: CodeDeadLetterNotFound, Message: "the queue has no dead letter with this ID"}
	// ErrIdempotencyKeyReused answers a request whose idempotency key an earlier, different
	// request of the queue used.
	ErrIdempotencyKeyReused = &Error{Code: CodeIdempotencyKeyReused, Message: "this idempotency key was used by a different request; use a new key for a new request"}
	// ErrIdempotencyKeyInUse answers a request whose idempotency key is held by a request
	// that has not committed yet; retrying it shortly gets that request's answer.
	ErrIdempotencyKeyInUse = &Error{Code: CodeIdempotencyKeyInUse, Message: "a request with this idempotency key is still in progress; try again shortly"}
)

// EntryError is the error of one entry of a batch: Index is its position in the request,
// and Err carries the code.
type EntryError struct {
	Index int
	Err   error
}

// Error returns the entry's position and the error.
func (e *EntryError) Error() string { return fmt.Sprintf("entry %d: %v", e.Index, e.Err) }

// Unwrap returns the entry's error, whose code is the batch's.
func (e *EntryError) Unwrap() error { return e.Err }

// atEntry returns err as the error of entry i, or nil when err is nil.
func atEntry(i int, err error) error {
	if err == nil {
		return nil
	}
	return &EntryError{Index: i, Err: err}
}

// Unavailable wraps cause as a service_unavailable error: the store could not be reached,
// and the same request may succeed when it is retried.
func Unavailable(cause error) error {
	return &Error{Code: CodeUnavailable, Message: ErrUnavailable.Message, Err: cause}
}

// ErrorCode returns the code of the first *Error in err's chain, or CodeInternal when there
// is none: an error without a code is unexpected.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the caller-safe message of the first *Error in err's chain, or a
// generic sentence for errors without a code, whose text may carry internal details.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "an internal error occurred"
}

func invalid(code Code, message string) error {
	return &Error{Code: code, Message: message}
}
