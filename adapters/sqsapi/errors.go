package sqsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/retsu/retsu/domain"
)

// errorKind is one SQS error as the SDKs recognise it: the shape name of the JSON body's
// __type (what errors.As to the SDK's types.X matches), the legacy code of the
// x-amzn-query-error header (what the SDKs report as the error code, since SQS's model is
// query-compatible), and the status.
type errorKind struct {
	status    int
	shape     string
	queryCode string
	// receiver marks a fault of the server ("Receiver"); the others are the caller's
	// ("Sender").
	receiver bool
}

// The SQS errors this endpoint answers. The shapes and legacy codes are those of the SQS
// model that the SDKs are generated from.
var (
	errQueueDoesNotExist      = errorKind{http.StatusBadRequest, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", false}
	errQueueNameExists        = errorKind{http.StatusBadRequest, "QueueNameExists", "QueueAlreadyExists", false}
	errReceiptHandleIsInvalid = errorKind{http.StatusBadRequest, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", false}
	errInvalidParameterValue  = errorKind{http.StatusBadRequest, "InvalidParameterValue", "InvalidParameterValue", false}
	errMissingParameter       = errorKind{http.StatusBadRequest, "MissingParameter", "MissingParameter", false}
	errInvalidAttributeName   = errorKind{http.StatusBadRequest, "InvalidAttributeName", "InvalidAttributeName", false}
	errInvalidAttributeValue  = errorKind{http.StatusBadRequest, "InvalidAttributeValue", "InvalidAttributeValue", false}
	errInvalidMessageContents = errorKind{http.StatusBadRequest, "InvalidMessageContents", "InvalidMessageContents", false}
	errInvalidAddress         = errorKind{http.StatusBadRequest, "InvalidAddress", "InvalidAddress", false}
	errEmptyBatchRequest      = errorKind{http.StatusBadRequest, "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", false}
	errTooManyEntries         = errorKind{http.StatusBadRequest, "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", false}
	errBatchIDsNotDistinct    = errorKind{http.StatusBadRequest, "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", false}
	errInvalidBatchEntryID    = errorKind{http.StatusBadRequest, "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", false}
	errBatchRequestTooLong    = errorKind{http.StatusBadRequest, "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", false}
	errUnsupportedOperation   = errorKind{http.StatusBadRequest, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", false}
	errInvalidAction          = errorKind{http.StatusBadRequest, "InvalidAction", "InvalidAction", false}
	errSerialization          = errorKind{http.StatusBadRequest, "SerializationException", "SerializationException", false}
	errRequestTooLarge        = errorKind{http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "RequestEntityTooLarge", false}

	errMissingAuthentication = errorKind{http.StatusForbidden, "MissingAuthenticationToken", "MissingAuthenticationToken", false}
	errIncompleteSignature   = errorKind{http.StatusBadRequest, "IncompleteSignature", "IncompleteSignature", false}
	errInvalidClientTokenID  = errorKind{http.StatusForbidden, "InvalidClientTokenId", "InvalidClientTokenId", false}
	// errSignatureDoesNotMatch also answers a stale X-Amz-Date, as SQS does: the SDKs then
	// compare the answer's Date header with their clock and retry with the skew corrected.
	errSignatureDoesNotMatch = errorKind{http.StatusForbidden, "SignatureDoesNotMatch", "SignatureDoesNotMatch", false}

	errServiceUnavailable = errorKind{http.StatusServiceUnavailable, "ServiceUnavailable", "ServiceUnavailable", true}
	errInternal           = errorKind{http.StatusInternalServerError, "InternalFailure", "InternalFailure", true}
)

// kindByCode maps each of Retsu's error codes to the SQS error it is answered as. The
// handlers check SQS's parameters before they call Retsu, so most of these carry Retsu's
// own sentence only when a rule of Retsu's is stricter than SQS's. A code missing here is
// internal.
var kindByCode = map[domain.Code]errorKind{
	domain.CodeQueueNotFound:              errQueueDoesNotExist,
	domain.CodeQueueAlreadyExists:         errQueueNameExists,
	domain.CodeInvalidQueueName:           errInvalidParameterValue,
	domain.CodeInvalidVisibilityTimeout:   errInvalidAttributeValue,
	domain.CodeInvalidMaxDeliveryAttempts: errInvalidAttributeValue,
	domain.CodeInvalidDefaultMessageTTL:   errInvalidAttributeValue,
	domain.CodeEmptyQueueUpdate:           errInvalidAttributeValue,
	domain.CodeInvalidPriority:            errInvalidParameterValue,
	domain.CodeInvalidTTL:                 errInvalidParameterValue,
	domain.CodeInvalidDelay:               errInvalidParameterValue,
	domain.CodeInvalidQuery:               errInvalidParameterValue,
	domain.CodeInvalidBatchSize:           errInvalidParameterValue,
	domain.CodeInvalidWait:                errInvalidParameterValue,
	domain.CodeInvalidMaxMessages:         errInvalidParameterValue,
	domain.CodeLeaseLost:                  errInvalidParameterValue,
	domain.CodeUnavailable:                errServiceUnavailable,
	domain.CodeInternal:                   errInternal,
}

// apiError is an error answered with an SQS error kind and a sentence for the caller.
type apiError struct {
	kind    errorKind
	message string
}

func (e *apiError) Error() string { return e.kind.shape + ": " + e.message }

// fail returns an apiError of kind with a formatted message.
func fail(kind errorKind, format string, args ...any) error {
	return &apiError{kind: kind, message: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON body of an error answer.
type errorBody struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

// writeError answers err as an SQS error. An error that is neither an apiError nor one of
// Retsu's coded errors is internal: it is logged, and the caller sees a generic sentence.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	kind, message := classify(err)
	if kind.status >= http.StatusInternalServerError {
		level := slog.LevelError
		if kind.status == http.StatusServiceUnavailable { // logged where it is detected
			level = slog.LevelDebug
		}
		log.LogAttrs(r.Context(), level, "SQS request failed",
			slog.String("target", r.Header.Get(targetHeader)), slog.Int("status", kind.status),
			slog.String("err", err.Error()))
	}
	if kind.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	fault := "Sender"
	if kind.receiver {
		fault = "Receiver"
	}
	w.Header().Set("x-amzn-query-error", kind.queryCode+";"+fault)
	body, _ := json.Marshal(errorBody{Type: "com.amazonaws.sqs#" + kind.shape, Message: message})
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(kind.status)
	_, _ = w.Write(body)
}

// classify returns the SQS error kind and the caller-safe sentence of err.
func classify(err error) (errorKind, string) {
	var api *apiError
	if errors.As(err, &api) {
		return api.kind, api.message
	}
	if errors.Is(err, context.DeadlineExceeded) && domain.ErrorCode(err) == domain.CodeInternal {
		// The request ran out of its time somewhere that did not say why: the work may
		// succeed when it is retried.
		err = domain.Unavailable(err)
	}
	kind, ok := kindByCode[domain.ErrorCode(err)]
	if !ok {
		kind = errInternal
	}
	if kind == errInternal {
		return kind, "We encountered an internal error. Please try again."
	}
	return kind, domain.ErrorMessage(err)
}
