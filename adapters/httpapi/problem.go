package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

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
	domain.CodeInvalidQueueName:           http.StatusBadRequest,
	domain.CodeInvalidVisibilityTimeout:   http.StatusBadRequest,
	domain.CodeInvalidMaxDeliveryAttempts: http.StatusBadRequest,
	domain.CodeInvalidDefaultMessageTTL:   http.StatusBadRequest,
	domain.CodeInvalidPriority:            http.StatusBadRequest,
	domain.CodeInvalidTTL:                 http.StatusBadRequest,
	domain.CodeInvalidQuery:               http.StatusBadRequest,
	domain.CodeEmptyQueueUpdate:           http.StatusBadRequest,
	domain.CodeQueueNotFound:              http.StatusNotFound,
	domain.CodeQueueAlreadyExists:         http.StatusConflict,
	domain.CodeUnavailable:                http.StatusServiceUnavailable,
	domain.CodeInternal:                   http.StatusInternalServerError,
}

// retryAfterSeconds is the Retry-After of a 503: the database is usually back, or the
// connection pool refilled, within a second or two.
const retryAfterSeconds = "1"

// problem is the body of every error answer (RFC 9457).
type problem struct {
	Type   string      `json:"type"`
	Title  string      `json:"title"`
	Status int         `json:"status"`
	Detail string      `json:"detail"`
	Code   domain.Code `json:"code"`
}

// requestError returns an error in the request with the given code and detail.
func requestError(code domain.Code, detail string) error {
	return &domain.Error{Code: code, Message: detail}
}

// writeError answers err as problem+json with the caller-safe message of its code; an
// error without a code is internal and gets a generic detail. 5xx errors are logged with
// their full text, which the client never sees.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, context.DeadlineExceeded) && domain.ErrorCode(err) == domain.CodeInternal {
		// The request ran out of its time (see Options.RequestTimeout) somewhere that did
		// not say why: the work may succeed when it is retried.
		err = domain.Unavailable(err)
	}
	code := domain.ErrorCode(err)
	status, ok := statusByCode[code]
	if !ok {
		code, status = domain.CodeInternal, http.StatusInternalServerError
	}
	// An internal error is a bug or an outage to look into. A 503 is logged at debug
	// level only: during an outage or an overload it would be logged for every request,
	// and its cause is logged where it is detected.
	level := slog.LevelError
	if status == http.StatusServiceUnavailable {
		level = slog.LevelDebug
	}
	if status >= 500 {
		log.LogAttrs(r.Context(), level, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.String("err", err.Error()),
			slog.String("request_id", RequestID(r.Context())))
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	writeProblem(w, status, code, domain.ErrorMessage(err))
}

func writeProblem(w http.ResponseWriter, status int, code domain.Code, detail string) {
	body, _ := json.Marshal(problem{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code,
	})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
