package domain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// codeOf returns the code of err, or "" when err is nil, so that a table can list valid and
// invalid inputs side by side.
func codeOf(err error) domain.Code {
	if err == nil {
		return ""
	}
	return domain.ErrorCode(err)
}

func TestError_IsMatchesByCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{
			name:   "the sentinel itself",
			err:    domain.ErrQueueNotFound,
			target: domain.ErrQueueNotFound,
			want:   true,
		},
		{
			name:   "another error with the same code",
			err:    &domain.Error{Code: domain.CodeQueueNotFound, Message: "no queue 42"},
			target: domain.ErrQueueNotFound,
			want:   true,
		},
		{
			name:   "wrapped error with the same code",
			err:    fmt.Errorf("QueueStore.Get(%q): %w", "42", &domain.Error{Code: domain.CodeQueueNotFound, Message: "no queue"}),
			target: domain.ErrQueueNotFound,
			want:   true,
		},
		{
			name:   "wrapped error with a different code",
			err:    fmt.Errorf("QueueStore.Create: %w", &domain.Error{Code: domain.CodeQueueAlreadyExists, Message: "taken"}),
			target: domain.ErrQueueNotFound,
			want:   false,
		},
		{
			name:   "plain error with the same text",
			err:    errors.New(domain.ErrQueueNotFound.Message),
			target: domain.ErrQueueNotFound,
			want:   false,
		},
		{
			name:   "coded error against a plain target",
			err:    domain.ErrQueueNotFound,
			target: errors.New("the queue does not exist"),
			want:   false,
		},
		{
			name:   "unavailable against its sentinel",
			err:    domain.Unavailable(errors.New("dial tcp: connection refused")),
			target: domain.ErrUnavailable,
			want:   true,
		},
		{
			name:   "update without settings against its sentinel",
			err:    fmt.Errorf("update: %w", domain.ErrEmptyQueueUpdate),
			target: domain.ErrEmptyQueueUpdate,
			want:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(errors.Is(tc.err, tc.target), tc.want) // errors.Is compares codes, not identity or text
		})
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	_, parseErr := domain.ParsePriority("URGENT")
	cases := []struct {
		name string
		err  error
		want domain.Code
	}{
		{name: "sentinel", err: domain.ErrQueueAlreadyExists, want: domain.CodeQueueAlreadyExists},
		{name: "wrapped sentinel", err: fmt.Errorf("create: %w", domain.ErrQueueAlreadyExists), want: domain.CodeQueueAlreadyExists},
		{name: "validation error", err: parseErr, want: domain.CodeInvalidPriority},
		{name: "unavailable", err: domain.Unavailable(errors.New("timeout")), want: domain.CodeUnavailable},
		{name: "plain error", err: errors.New("boom"), want: domain.CodeInternal},
		{name: "wrapped plain error", err: fmt.Errorf("ctx: %w", errors.New("boom")), want: domain.CodeInternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(domain.ErrorCode(tc.err), tc.want) // the first coded error decides; no code means internal_error
		})
	}
}

func TestErrorMessage_NeverShowsUncodedText(t *testing.T) {
	t.Parallel()
	const secret = "pq: password authentication failed for user \"retsu\""
	cases := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "plain error",
			err:  errors.New(secret),
		},
		{
			name: "wrapped plain error",
			err:  fmt.Errorf("QueueStore.Get: %w", errors.New(secret)),
		},
		{
			name: "coded error with a cause",
			err:  &domain.Error{Code: domain.CodeInternal, Message: "the queue could not be read", Err: errors.New(secret)},
			want: "the queue could not be read",
		},
		{
			name: "wrapped sentinel",
			err:  fmt.Errorf("QueueStore.Get: %w", domain.ErrQueueNotFound),
			want: domain.ErrQueueNotFound.Message,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			msg := domain.ErrorMessage(tc.err)
			is.True(msg != "")                          // every error gets a sentence for the caller
			is.True(!strings.Contains(msg, secret))     // the internal text never reaches the caller
			is.True(!strings.Contains(msg, "password")) // not even part of it
			if tc.want != "" {
				is.Equal(msg, tc.want) // a coded error shows its own safe message
			}
		})
	}
}

func TestUnavailable_WrapsCauseWithoutShowingIt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cause := errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")

	err := domain.Unavailable(cause)

	is.Equal(domain.ErrorCode(err), domain.CodeUnavailable)        // the code is service_unavailable
	is.Equal(errors.Unwrap(err), cause)                            // Unwrap returns the cause itself
	is.True(errors.Is(err, cause))                                 // the cause stays reachable for logs
	is.True(errors.Is(err, domain.ErrUnavailable))                 // it matches the sentinel
	is.True(!strings.Contains(domain.ErrorMessage(err), "10.0.0")) // the caller's message hides the cause
	var coded *domain.Error
	is.True(errors.As(err, &coded))                                        // it is a coded error
	is.True(!strings.Contains(coded.Message, cause.Error()))               // its Message field hides the cause
	is.Equal(coded.Message, domain.ErrUnavailable.Message)                 // it says what the sentinel says
	is.True(strings.Contains(err.Error(), cause.Error()))                  // Error() keeps the cause for logs
	is.True(strings.HasPrefix(err.Error(), domain.ErrUnavailable.Message)) // and starts with the safe message
}

func TestError_Error(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  *domain.Error
		want string
	}{
		{name: "without cause", err: &domain.Error{Code: domain.CodeInvalidTTL, Message: "bad ttl"}, want: "bad ttl"},
		{name: "with cause", err: &domain.Error{Code: domain.CodeInternal, Message: "read failed", Err: errors.New("eof")}, want: "read failed: eof"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.err.Error(), tc.want) // the message, then the cause when there is one
		})
	}
}

func TestEntryError_CarriesIndexAndCode(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	inner := &domain.Error{Code: domain.CodeInvalidPriority, Message: "priority must be HIGH, MEDIUM or LOW"}
	var err error = fmt.Errorf("enqueue: %w", &domain.EntryError{Index: 3, Err: inner})

	var entry *domain.EntryError
	is.True(errors.As(err, &entry))                                          // the entry error is found through wrapping
	is.Equal(entry.Index, 3)                                                 // with its index
	is.Equal(domain.ErrorCode(err), domain.CodeInvalidPriority)              // the batch's code is the entry's
	is.Equal(domain.ErrorMessage(err), inner.Message)                        // and so is the message shown to callers
	is.Equal(entry.Error(), "entry 3: priority must be HIGH, MEDIUM or LOW") // the text names the entry
	is.Equal(errors.Unwrap(entry), error(inner))                             // Unwrap returns the entry's error
}
