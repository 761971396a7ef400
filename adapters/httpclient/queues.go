package httpclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// queuePath returns the path of a queue, with the path of what follows it appended.
func queuePath(id domain.ID, rest string) string { return "/v1/queues/" + id.String() + rest }

// CreateQueue creates a queue (POST /v1/queues). It is sent once: a retry after a lost answer
// would answer queue_already_exists for the queue it created. Returns invalid_queue_name,
// invalid_visibility_timeout, invalid_max_delivery_attempts, invalid_default_message_ttl or
// queue_already_exists.
func (c *Client) CreateQueue(ctx context.Context, n domain.NewQueue) (domain.Queue, error) {
	body := toSettingsJSON(n.SettingsUpdate)
	body.Name = n.Name
	var q queueJSON
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/queues", body: body}, &q); err != nil {
		return domain.Queue{}, err
	}
	return q.queue(), nil
}

// Queue returns a queue's settings (GET /v1/queues/{id}). Returns queue_not_found.
func (c *Client) Queue(ctx context.Context, id domain.ID) (domain.Queue, error) {
	var q queueJSON
	if _, err := c.do(ctx, request{method: http.MethodGet, path: queuePath(id, ""), safety: idempotent}, &q); err != nil {
		return domain.Queue{}, err
	}
	return q.queue(), nil
}

// ListQueues returns a page of queues ordered by name (GET /v1/queues); a zero Limit takes
// the server's default (100). Returns invalid_query.
func (c *Client) ListQueues(ctx context.Context, p ports.ListQueuesParams) ([]domain.Queue, error) {
	query := url.Values{}
	if p.Name != nil {
		query.Set("name", *p.Name)
	}
	if p.After != "" {
		query.Set("after", p.After)
	}
	if p.Limit != 0 {
		query.Set("limit", strconv.Itoa(p.Limit))
	}
	var page struct {
		Queues []queueJSON `json:"queues"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/queues", query: query, safety: idempotent}, &page); err != nil {
		return nil, err
	}
	queues := make([]domain.Queue, len(page.Queues))
	for i, q := range page.Queues {
		queues[i] = q.queue()
	}
	return queues, nil
}

// UpdateQueue changes the supplied settings of a queue (PATCH /v1/queues/{id}) and returns
// the complete queue. Returns empty_queue_update, invalid_visibility_timeout,
// invalid_max_delivery_attempts, invalid_default_message_ttl or queue_not_found.
func (c *Client) UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error) {
	var q queueJSON
	req := request{method: http.MethodPatch, path: queuePath(id, ""), body: toSettingsJSON(u), safety: idempotent}
	if _, err := c.do(ctx, req, &q); err != nil {
		return domain.Queue{}, err
	}
	return q.queue(), nil
}

// DeleteQueue deletes a queue and, in the background, its messages and dead letters
// (DELETE /v1/queues/{id}). It is sent once: a retry after a lost answer would answer
// queue_not_found. Returns queue_not_found.
func (c *Client) DeleteQueue(ctx context.Context, id domain.ID) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: queuePath(id, "")}, nil)
	return err
}

// PurgeQueue removes every message of the queue (DELETE /v1/queues/{id}/messages) and
// returns how many. It is sent once, since a retry would count nothing. Returns
// queue_not_found.
func (c *Client) PurgeQueue(ctx context.Context, id domain.ID) (int, error) {
	var deleted deletedJSON
	if _, err := c.do(ctx, request{method: http.MethodDelete, path: queuePath(id, "/messages")}, &deleted); err != nil {
		return 0, err
	}
	return deleted.Deleted, nil
}

// Stats counts a queue's messages by priority (GET /v1/queues/{id}/stats). Returns
// queue_not_found.
func (c *Client) Stats(ctx context.Context, id domain.ID) (domain.QueueStats, error) {
	var stats queueStatsJSON
	if _, err := c.do(ctx, request{method: http.MethodGet, path: queuePath(id, "/stats"), safety: idempotent}, &stats); err != nil {
		return domain.QueueStats{}, err
	}
	return stats.stats()
}

// deletedJSON counts what a purge or a deletion of dead letters removed.
type deletedJSON struct {
	Deleted int `json:"deleted"`
}
