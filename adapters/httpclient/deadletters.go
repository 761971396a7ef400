package httpclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// DeadLetters returns a page of the queue's dead letters in ID order (GET
// /v1/queues/{id}/dead-letters); a zero Limit takes the server's default (100). Returns
// invalid_query or queue_not_found.
func (c *Client) DeadLetters(ctx context.Context, queueID domain.ID, p ports.DeadLetterPage) ([]domain.DeadLetter, error) {
	query := url.Values{}
	if !p.After.IsZero() {
		query.Set("after", p.After.String())
	}
	if p.Limit != 0 {
		query.Set("limit", strconv.Itoa(p.Limit))
	}
	var page struct {
		DeadLetters []deadLetterJSON `json:"dead_letters"`
	}
	req := request{method: http.MethodGet, path: queuePath(queueID, "/dead-letters"), query: query, safety: idempotent}
	if _, err := c.do(ctx, req, &page); err != nil {
		return nil, err
	}
	letters := make([]domain.DeadLetter, len(page.DeadLetters))
	for i, d := range page.DeadLetters {
		var err error
		if letters[i], err = d.deadLetter(queueID); err != nil {
			return nil, err
		}
	}
	return letters, nil
}

// deadLetterPath returns the path of one dead letter of a queue.
func deadLetterPath(queueID, messageID domain.ID) string {
	return queuePath(queueID, "/dead-letters/"+messageID.String())
}

// DeadLetter returns one dead letter (GET /v1/queues/{id}/dead-letters/{message_id}).
// Returns queue_not_found or dead_letter_not_found.
func (c *Client) DeadLetter(ctx context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error) {
	var d deadLetterJSON
	req := request{method: http.MethodGet, path: deadLetterPath(queueID, messageID), safety: idempotent}
	if _, err := c.do(ctx, req, &d); err != nil {
		return domain.DeadLetter{}, err
	}
	return d.deadLetter(queueID)
}

// DeleteDeadLetter deletes one dead letter, if there is one (DELETE
// /v1/queues/{id}/dead-letters/{message_id}); it answers alike either way, so it is retried
// after a lost answer. Returns queue_not_found.
func (c *Client) DeleteDeadLetter(ctx context.Context, queueID, messageID domain.ID) error {
	req := request{method: http.MethodDelete, path: deadLetterPath(queueID, messageID), safety: idempotent}
	_, err := c.do(ctx, req, nil)
	return err
}

// DeleteDeadLetters deletes every dead letter of the queue and returns how many (DELETE
// /v1/queues/{id}/dead-letters). It is sent once, since a retry would count nothing.
// Returns queue_not_found.
func (c *Client) DeleteDeadLetters(ctx context.Context, queueID domain.ID) (int, error) {
	var deleted deletedJSON
	if _, err := c.do(ctx, request{method: http.MethodDelete, path: queuePath(queueID, "/dead-letters")}, &deleted); err != nil {
		return 0, err
	}
	return deleted.Deleted, nil
}

// Redrive sends dead letters back to their queue and returns the IDs it moved (POST
// /v1/queues/{id}/dead-letters/redrive): r.IDs when it is not nil, else the r.Limit lowest
// IDs. It is sent once, since a retry would not report what the lost attempt moved.
// Returns invalid_batch_size or queue_not_found.
func (c *Client) Redrive(ctx context.Context, queueID domain.ID, r domain.Redrive) ([]domain.ID, error) {
	// Pointers, so that an empty list of IDs or a zero limit goes to the server, which
	// refuses it with invalid_batch_size.
	var body struct {
		IDs   *[]wireID `json:"ids,omitempty"`
		Limit *int      `json:"limit,omitempty"`
	}
	if r.IDs != nil {
		ids := toWireIDs(r.IDs)
		body.IDs = &ids
	} else {
		body.Limit = &r.Limit
	}
	var redriven struct {
		Redriven []wireID `json:"redriven"`
	}
	req := request{method: http.MethodPost, path: queuePath(queueID, "/dead-letters/redrive"), body: body}
	if _, err := c.do(ctx, req, &redriven); err != nil {
		return nil, err
	}
	return toDomainIDs(redriven.Redriven), nil
}
