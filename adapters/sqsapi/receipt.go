package sqsapi

import (
	"encoding/base64"

	"github.com/retsu/retsu/domain"
)

// encodeReceiptHandle returns the SQS receipt handle of a delivery of the queue. A receipt
// handle is all that a DeleteMessage or ChangeMessageVisibility names, so the endpoint's
// handles carry everything Retsu's acknowledge, extend and release take: the queue's ID,
// the message's ID and Retsu's receipt handle of the delivery, 48 bytes in unpadded
// base64url (64 characters). Retsu's handle is random, so a handle cannot be forged from
// the IDs.
func encodeReceiptHandle(queueID domain.ID, d domain.Delivery) string {
	var raw [48]byte
	copy(raw[0:16], queueID[:])
	copy(raw[16:32], d.MessageID[:])
	copy(raw[32:48], d.ReceiptHandle[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// receiptHandle is a receipt handle of this endpoint, as a request gave it.
type receiptHandle struct {
	text    string
	queueID domain.ID
	receipt domain.Receipt
}

// parseReceiptHandle reads a receipt handle. One that this endpoint did not issue is
// ReceiptHandleIsInvalid.
func parseReceiptHandle(text *string) (receiptHandle, error) {
	if text == nil || *text == "" {
		return receiptHandle{}, fail(errMissingParameter, "The request must contain the parameter ReceiptHandle.")
	}
	h := receiptHandle{text: *text}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(*text)
	if err != nil || len(raw) != 48 {
		return receiptHandle{}, h.invalid()
	}
	copy(h.queueID[:], raw[0:16])
	copy(h.receipt.MessageID[:], raw[16:32])
	copy(h.receipt.ReceiptHandle[:], raw[32:48])
	if h.receipt.MessageID.IsZero() || h.receipt.ReceiptHandle.IsZero() {
		return receiptHandle{}, h.invalid()
	}
	return h, nil
}

// forQueue returns the receipt of the handle when it names a delivery of the queue
// queueID, and ReceiptHandleIsInvalid otherwise, as SQS answers a handle of another queue.
func (h receiptHandle) forQueue(queueID domain.ID) (domain.Receipt, error) {
	if h.queueID != queueID {
		return domain.Receipt{}, h.invalid()
	}
	return h.receipt, nil
}

func (h receiptHandle) invalid() error {
	return fail(errReceiptHandleIsInvalid, "The input receipt handle %q is not a valid receipt handle.", h.text)
}
