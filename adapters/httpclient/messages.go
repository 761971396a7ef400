package httpclient

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// ErrAttributesNotSupported answers an enqueue of a message with attributes: the HTTP API
// does not carry them (only the SQS endpoint does), and the client does not drop them
// silently.
var ErrAttributesNotSupported = errors.New("httpclient: the HTTP API does not carry message attributes")

// errSingleRouteSize answers a request for the single enqueue route (Batch false) that does
// not hold exactly one message.
var errSingleRouteSize = &domain.Error{Code: domain.CodeInvalidBatchSize,
	Message: "a request without Batch goes to the single enqueue route, which takes exactly one message"}

// EnqueueMessages stores the messages of one request, all or none: p.Batch sends them to
// POST /v1/queues/{id}/messages/batch (1 to 1,000 of them), otherwise the one message goes
// to POST /v1/queues/{id}/messages.
//
// Every request carries an Idempotency-Key: p.IdempotencyKey, or a random key when it is
// empty (unless Options.NoEnqueueKeys, which sends it without a key, and once). The client
// can therefore retry it after a lost answer, a 502, a 503 or a 504 without storing its
// messages twice: the server answers the retry with the first attempt's IDs. A random key is
// the client's own, so its replay does not set Replayed, which reports the replay of the
// caller's key only. Returns invalid_idempotency_key, invalid_batch_size, invalid_priority,
// invalid_ttl, invalid_delay (the entry's as a *domain.EntryError, its index read from the
// problem's pointer), queue_not_found, idempotency_key_reused or idempotency_key_in_use.
func (c *Client) EnqueueMessages(ctx context.Context, p app.EnqueueParams) (app.Enqueued, error) {
	for _, m := range p.Messages {
		if len(m.Attributes) > 0 {
			return app.Enqueued{}, ErrAttributesNotSupported
		}
	}
	key, ownKey := p.IdempotencyKey, false
	if key == "" {
		key, ownKey = c.keyGen(), true
	}
	var ids []domain.ID
	var a answer
	var err error
	if p.Batch {
		ids, a, err = c.enqueueBatch(ctx, p.QueueID, p.Messages, key)
	} else {
		ids, a, err = c.enqueueOne(ctx, p.QueueID, p.Messages, key)
	}
	if err != nil {
		return app.Enqueued{}, err
	}
	replayed := !ownKey && a.header.Get("Idempotent-Replayed") == "true"
	return app.Enqueued{IDs: ids, Replayed: replayed}, nil
}

// enqueueOne sends the single enqueue route.
func (c *Client) enqueueOne(ctx context.Context, queueID domain.ID, messages []domain.NewMessage, key string) ([]domain.ID, answer, error) {
	if len(messages) != 1 {
		return nil, answer{}, errSingleRouteSize
	}
	var created struct {
		ID wireID `json:"id"`
	}
	req := request{method: http.MethodPost, path: queuePath(queueID, "/messages"), body: toNewMessageJSON(messages[0]),
		header: keyHeader(key), safety: enqueueSafety(key)}
	a, err := c.do(ctx, req, &created)
	if err != nil {
		return nil, answer{}, asFirstEntryError(err)
	}
	return []domain.ID{domain.ID(created.ID)}, a, nil
}

// enqueueBatch sends the batch enqueue route.
func (c *Client) enqueueBatch(ctx context.Context, queueID domain.ID, messages []domain.NewMessage, key string) ([]domain.ID, answer, error) {
	var body struct {
		Messages []newMessageJSON `json:"messages"`
	}
	body.Messages = make([]newMessageJSON, len(messages))
	for i, m := range messages {
		body.Messages[i] = toNewMessageJSON(m)
	}
	var created struct {
		IDs []wireID `json:"ids"`
	}
	req := request{method: http.MethodPost, path: queuePath(queueID, "/messages/batch"), body: body,
		header: keyHeader(key), safety: enqueueSafety(key)}
	a, err := c.do(ctx, req, &created)
	if err != nil {
		return nil, answer{}, asEntryError(err)
	}
	if len(created.IDs) != len(messages) {
		return nil, answer{}, fmt.Errorf("httpclient: the batch enqueue answered %d IDs for %d messages", len(created.IDs), len(messages))
	}
	return toDomainIDs(created.IDs), a, nil
}

// keyHeader returns the header of an enqueue with key; none for the empty key.
func keyHeader(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Idempotency-Key": {key}}
}

// enqueueSafety returns how an enqueue with key may be retried: only a keyed one after it
// may have reached the server.
func enqueueSafety(key string) retrySafety {
	if key == "" {
		return sendOnce
	}
	return keyedEnqueue
}

// Enqueue stores one message and returns its ID: EnqueueMessages of one message without
// Batch, whose entry error it returns as the request's, as app.Service's Enqueue does.
func (c *Client) Enqueue(ctx context.Context, queueID domain.ID, n domain.NewMessage) (domain.ID, error) {
	enqueued, err := c.EnqueueMessages(ctx, app.EnqueueParams{QueueID: queueID, Messages: []domain.NewMessage{n}})
	if entry := (*domain.EntryError)(nil); errors.As(err, &entry) {
		return domain.ID{}, entry.Err
	}
	if err != nil {
		return domain.ID{}, err
	}
	return enqueued.IDs[0], nil
}

// DequeueMessages starts deliveries of up to p.Max messages (zero takes 1), waiting up to
// p.Wait for one (POST /v1/queues/{id}/messages/dequeue/batch). It is never retried once
// sent: a retry after a lost answer would start a second batch of deliveries and leave the
// first one's messages hidden until their visibility timeout ends. Returns
// invalid_max_messages, invalid_wait or queue_not_found.
func (c *Client) DequeueMessages(ctx context.Context, p app.DequeueParams) ([]domain.Delivery, error) {
	if p.Max == 0 {
		p.Max = 1
	}
	body := struct {
		MaxMessages int         `json:"max_messages"`
		WaitSeconds wireSeconds `json:"wait_seconds"`
	}{p.Max, wireSeconds(p.Wait)}
	var list struct {
		Messages []messageJSON `json:"messages"`
	}
	req := request{method: http.MethodPost, path: queuePath(p.QueueID, "/messages/dequeue/batch"), body: body}
	if _, err := c.do(ctx, req, &list); err != nil {
		return nil, err
	}
	deliveries := make([]domain.Delivery, len(list.Messages))
	for i, m := range list.Messages {
		var err error
		if deliveries[i], err = m.delivery(); err != nil {
			return nil, err
		}
	}
	return deliveries, nil
}

// Dequeue starts a delivery of the queue's next message without waiting, by the single
// dequeue route (POST /v1/queues/{id}/messages/dequeue); ok is false when none is
// deliverable. Like DequeueMessages, it is never retried once sent. Returns
// queue_not_found.
func (c *Client) Dequeue(ctx context.Context, queueID domain.ID) (d domain.Delivery, ok bool, err error) {
	var m messageJSON
	a, err := c.do(ctx, request{method: http.MethodPost, path: queuePath(queueID, "/messages/dequeue")}, &m)
	if err != nil || a.status == http.StatusNoContent {
		return domain.Delivery{}, false, err
	}
	d, err = m.delivery()
	return d, err == nil, err
}

// AcknowledgeMessages completes deliveries in order (POST
// /v1/queues/{id}/messages/acknowledge/batch); removed[i] reports whether this call removed
// the message of receipts[i]. It is retried after a lost answer with the same receipts,
// which is safe: a receipt that the lost attempt used removes nothing the second time, so
// the retry's answer shows false for it. Such an answer is returned with an error that
// matches ErrOutcomeUnknown: removed[i] true is certain, false may be a message that the lost
// attempt removed. When no attempt got an answer the error matches ErrOutcomeUnknown too
// (and removed is nil): the messages may or may not be removed. Returns invalid_batch_size
// or queue_not_found.
func (c *Client) AcknowledgeMessages(ctx context.Context, queueID domain.ID, receipts []domain.Receipt) ([]bool, error) {
	var body struct {
		Messages []receiptJSON `json:"messages"`
	}
	body.Messages = make([]receiptJSON, len(receipts))
	for i, r := range receipts {
		body.Messages[i] = receiptJSON{ID: wireID(r.MessageID), ReceiptHandle: wireID(r.ReceiptHandle)}
	}
	var answer struct {
		Results []struct {
			Acknowledged bool `json:"acknowledged"`
		} `json:"results"`
	}
	req := request{method: http.MethodPost, path: queuePath(queueID, "/messages/acknowledge/batch"), body: body, safety: idempotent}
	a, err := c.do(ctx, req, &answer)
	if err != nil {
		return nil, err
	}
	if len(answer.Results) != len(receipts) {
		return nil, fmt.Errorf("httpclient: the batch acknowledgement answered %d results for %d receipts", len(answer.Results), len(receipts))
	}
	removed := make([]bool, len(receipts))
	uncertain := false
	for i, r := range answer.Results {
		removed[i] = r.Acknowledged
		uncertain = uncertain || !r.Acknowledged && a.afterUnknown
	}
	if uncertain {
		return removed, errAckUncertain
	}
	return removed, nil
}

// Acknowledge completes one delivery by the single route (POST
// /v1/queues/{id}/messages/{message_id}/acknowledge), which answers alike whether or not it
// removed the message. Returns queue_not_found.
func (c *Client) Acknowledge(ctx context.Context, queueID, messageID, receiptHandle domain.ID) error {
	body := struct {
		ReceiptHandle wireID `json:"receipt_handle"`
	}{wireID(receiptHandle)}
	req := request{method: http.MethodPost, path: messagePath(queueID, messageID, "/acknowledge"), body: body, safety: idempotent}
	_, err := c.do(ctx, req, nil)
	return err
}

// Extend makes the lease of receipt end timeout from now (POST
// /v1/queues/{id}/messages/{message_id}/extend). It is retried after a lost answer: the
// retry moves the end of the lease once more, from its own arrival. Returns
// invalid_visibility_timeout, queue_not_found or lease_lost.
func (c *Client) Extend(ctx context.Context, queueID domain.ID, receipt domain.Receipt, timeout time.Duration) error {
	body := struct {
		ReceiptHandle            wireID      `json:"receipt_handle"`
		VisibilityTimeoutSeconds wireSeconds `json:"visibility_timeout_seconds"`
	}{wireID(receipt.ReceiptHandle), wireSeconds(timeout)}
	req := request{method: http.MethodPost, path: messagePath(queueID, receipt.MessageID, "/extend"), body: body, safety: idempotent}
	_, err := c.do(ctx, req, nil)
	return err
}

// Release ends the lease of receipt; the message is deliverable again after delay (POST
// /v1/queues/{id}/messages/{message_id}/release). It is sent once: the retry of a release
// whose answer was lost would answer lease_lost. Returns invalid_delay, queue_not_found or
// lease_lost.
func (c *Client) Release(ctx context.Context, queueID domain.ID, receipt domain.Receipt, delay time.Duration) error {
	body := struct {
		ReceiptHandle wireID      `json:"receipt_handle"`
		DelaySeconds  wireSeconds `json:"delay_seconds"`
	}{wireID(receipt.ReceiptHandle), wireSeconds(delay)}
	req := request{method: http.MethodPost, path: messagePath(queueID, receipt.MessageID, "/release"), body: body}
	_, err := c.do(ctx, req, nil)
	return err
}

// errAckUncertain is returned with the results of a batch acknowledgement answered after a
// lost answer: its false results are unknown.
var errAckUncertain = fmt.Errorf("httpclient: acknowledge: %w: an earlier attempt's answer was lost, so a false result may be a message that it removed", ErrOutcomeUnknown)

// messagePath returns the path of an operation on one message of a queue.
func messagePath(queueID, messageID domain.ID, operation string) string {
	return queuePath(queueID, "/messages/"+messageID.String()+operation)
}

// newIdempotencyKey returns a random key of 128 bits, in the visible ASCII that keys allow.
func newIdempotencyKey() string { return "retsu-client-" + rand.Text() }
