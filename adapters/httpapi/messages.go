package httpapi

import (
	"errors"
	"net/http"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// enqueue answers POST /v1/queues/{queue_id}/messages.
func (a *api) enqueue(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, the key, then the body's shape and types.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	obj, err := readObject(r, enqueueFields)
	if err != nil {
		return err
	}
	message, err := obj.newMessage("")
	if err != nil {
		return err
	}
	// Call: the service checks the values, then that the queue exists. An entry's error
	// is the request's: a single enqueue has nothing to point at.
	enqueued, err := a.svc.EnqueueMessages(r.Context(), app.EnqueueParams{
		QueueID: queueID, Messages: []domain.NewMessage{message}, IdempotencyKey: key,
	})
	var entry *domain.EntryError
	if errors.As(err, &entry) {
		err = entry.Err
	}
	if err != nil {
		return err
	}
	// Encode: 201, a replay's as the first request's.
	markReplayed(w, enqueued)
	return writeJSON(w, http.StatusCreated, enqueuedJSON{ID: enqueued.IDs[0]})
}

// enqueueBatch answers POST /v1/queues/{queue_id}/messages/batch.
func (a *api) enqueueBatch(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, the key, then every entry's shape and types.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	messages, err := readMessageBatch(r)
	if err != nil {
		return err
	}
	// Call: the service checks the size and every entry's values, all or nothing.
	enqueued, err := a.svc.EnqueueMessages(r.Context(), app.EnqueueParams{
		QueueID: queueID, Messages: messages, Batch: true, IdempotencyKey: key,
	})
	if err != nil {
		return pointAtEntry(err)
	}
	// Encode.
	markReplayed(w, enqueued)
	return writeJSON(w, http.StatusCreated, batchEnqueuedJSON{IDs: enqueued.IDs})
}

// dequeue answers POST /v1/queues/{queue_id}/messages/dequeue.
func (a *api) dequeue(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, then the optional body; its wait decides the request's cap.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	wait, err := readDequeue(r)
	if err != nil {
		return err
	}
	ctx, leave, err := a.admit(r, wait)
	if err != nil {
		return err
	}
	defer leave()
	// Call.
	deliveries, err := a.svc.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: 1, Wait: wait})
	if err != nil {
		return err
	}
	// Encode: 204 when nothing was deliverable by the end of the wait.
	if len(deliveries) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return writeJSON(w, http.StatusOK, toMessageJSON(deliveries[0]))
}

// dequeueBatch answers POST /v1/queues/{queue_id}/messages/dequeue/batch.
func (a *api) dequeueBatch(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, then the optional body; its wait decides the request's cap.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	max, wait, err := readDequeueBatch(r)
	if err != nil {
		return err
	}
	ctx, leave, err := a.admit(r, wait)
	if err != nil {
		return err
	}
	defer leave()
	// Call.
	deliveries, err := a.svc.DequeueMessages(ctx, app.DequeueParams{QueueID: queueID, Max: max, Wait: wait})
	if err != nil {
		return err
	}
	// Encode: 200 always, with an empty array when nothing was deliverable.
	return writeList(w, http.StatusOK, "messages", deliveries, toMessageJSON)
}

// acknowledge answers POST /v1/queues/{queue_id}/messages/{message_id}/acknowledge.
func (a *api) acknowledge(w http.ResponseWriter, r *http.Request) error {
	// Parse: both IDs of the address, then the receipt handle.
	queueID, messageID, err := pathIDs(r)
	if err != nil {
		return err
	}
	receipt, _, err := readReceipt(r, messageID, acknowledgeFields)
	if err != nil {
		return err
	}
	// Call: 204 whether or not this delivery removed the message.
	if _, err := a.svc.AcknowledgeMessages(r.Context(), queueID, []domain.Receipt{receipt}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// acknowledgeBatch answers POST /v1/queues/{queue_id}/messages/acknowledge/batch.
func (a *api) acknowledgeBatch(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	receipts, err := readReceipts(r)
	if err != nil {
		return err
	}
	removed, err := a.svc.AcknowledgeMessages(r.Context(), queueID, receipts)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toAcknowledgedJSON(receipts, removed))
}

// extend answers POST /v1/queues/{queue_id}/messages/{message_id}/extend.
func (a *api) extend(w http.ResponseWriter, r *http.Request) error {
	// Parse: both IDs, the receipt handle, then the new timeout, which is required.
	queueID, messageID, err := pathIDs(r)
	if err != nil {
		return err
	}
	receipt, obj, err := readReceipt(r, messageID, extendFields)
	if err != nil {
		return err
	}
	timeout, err := obj.requiredSeconds("visibility_timeout_seconds")
	if err != nil {
		return err
	}
	// Call: 204, or 409 lease_lost.
	return noContent(w, a.svc.Extend(r.Context(), queueID, receipt, timeout))
}

// release answers POST /v1/queues/{queue_id}/messages/{message_id}/release.
func (a *api) release(w http.ResponseWriter, r *http.Request) error {
	// Parse: both IDs, the receipt handle, then the delay, zero when missing.
	queueID, messageID, err := pathIDs(r)
	if err != nil {
		return err
	}
	receipt, obj, err := readReceipt(r, messageID, releaseFields)
	if err != nil {
		return err
	}
	delay, err := obj.optionalSeconds("delay_seconds")
	if err != nil {
		return err
	}
	// Call: 204, or 409 lease_lost.
	return noContent(w, a.svc.Release(r.Context(), queueID, receipt, delay))
}

// idempotentReplayedHeader marks the answer of a request that repeated an earlier one with
// its Idempotency-Key, and stored nothing.
const idempotentReplayedHeader = "Idempotent-Replayed"

// markReplayed sets Idempotent-Replayed on the answer of a replay.
func markReplayed(w http.ResponseWriter, enqueued app.Enqueued) {
	if enqueued.Replayed {
		w.Header().Set(idempotentReplayedHeader, "true")
	}
}

// memberOfCode names the member of a batch entry whose value the service refused with a
// code, for the pointer of the answer.
var memberOfCode = map[domain.Code]string{
	domain.CodeInvalidPriority: "priority",
	domain.CodeInvalidTTL:      "ttl_seconds",
	domain.CodeInvalidDelay:    "delay_seconds",
}

// pointAtEntry returns the error of a batch enqueue with a pointer to the entry's member at
// fault, when it is the error of one entry (a *domain.EntryError).
func pointAtEntry(err error) error {
	var entry *domain.EntryError
	if !errors.As(err, &entry) {
		return err
	}
	pointer := entryPointer("messages", entry.Index)
	if member, ok := memberOfCode[domain.ErrorCode(entry.Err)]; ok {
		pointer += "/" + member
	}
	return pointAt(pointer, entry.Err)
}

// noContent answers 204 when err is nil.
func noContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
