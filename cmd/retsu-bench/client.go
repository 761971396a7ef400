package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// client calls the Retsu API of one server.
type client struct {
	http    *http.Client
	baseURL string
	token   string
}

// newClient returns a client that keeps up to connections connections open to baseURL, one
// per worker, as a real fleet of producers and consumers would.
func newClient(baseURL, token string, connections int) *client {
	transport := &http.Transport{
		MaxIdleConns:        connections,
		MaxIdleConnsPerHost: connections,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &client{
		http:    &http.Client{Transport: transport, Timeout: 30 * time.Second},
		baseURL: strings.TrimRight(baseURL, "/"),
		token:   token,
	}
}

// queue is the part of a queue's representation the load needs.
type queue struct {
	ID                       string `json:"id"`
	VisibilityTimeoutSeconds int    `json:"visibility_timeout_seconds"`
}

// delivery is a dequeued message.
type delivery struct {
	ID            string `json:"id"`
	Payload       string `json:"payload"`
	ReceiptHandle string `json:"receipt_handle"`
}

// createQueue creates a queue named name with the server's default settings.
func (c *client) createQueue(ctx context.Context, name string) (queue, error) {
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return queue{}, err
	}
	var q queue
	if err := c.call(ctx, "/v1/queues", "", body, http.StatusCreated, &q); err != nil {
		return queue{}, fmt.Errorf("create queue %s: %w", name, err)
	}
	return q, nil
}

// message is a message to enqueue; its payload must need no JSON escaping.
type message struct {
	payload, priority string
}

// enqueue adds a message, with an Idempotency-Key when key is not empty.
func (c *client) enqueue(ctx context.Context, queueID string, m message, key string) error {
	body := `{"payload":"` + m.payload + `","priority":"` + m.priority + `"}`
	return c.call(ctx, "/v1/queues/"+queueID+"/messages", key, []byte(body), http.StatusCreated, nil)
}

// enqueueBatch adds messages in one request of the batch route, with an Idempotency-Key
// when key is not empty.
func (c *client) enqueueBatch(ctx context.Context, queueID string, messages []message, key string) error {
	var body strings.Builder
	body.WriteString(`{"messages":[`)
	for i, m := range messages {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`{"payload":"` + m.payload + `","priority":"` + m.priority + `"}`)
	}
	body.WriteString(`]}`)
	return c.call(ctx, "/v1/queues/"+queueID+"/messages/batch", key, []byte(body.String()), http.StatusCreated, nil)
}

// dequeue takes the next message, waiting up to wait for one; ok is false when the queue had
// none ready.
func (c *client) dequeue(ctx context.Context, queueID string, wait time.Duration) (d delivery, ok bool, err error) {
	var body []byte
	if wait > 0 {
		body = []byte(`{"wait_seconds":` + strconv.Itoa(int(wait/time.Second)) + `}`)
	}
	err = c.call(ctx, "/v1/queues/"+queueID+"/messages/dequeue", "", body, http.StatusOK, &d)
	if errors.Is(err, errNoContent) {
		return delivery{}, false, nil
	}
	return d, err == nil, err
}

// dequeueBatch takes up to max messages in one request, waiting up to wait for the first.
func (c *client) dequeueBatch(ctx context.Context, queueID string, max int, wait time.Duration) ([]delivery, error) {
	body := `{"max_messages":` + strconv.Itoa(max) + `,"wait_seconds":` + strconv.Itoa(int(wait/time.Second)) + `}`
	var answer struct {
		Messages []delivery `json:"messages"`
	}
	err := c.call(ctx, "/v1/queues/"+queueID+"/messages/dequeue/batch", "", []byte(body), http.StatusOK, &answer)
	return answer.Messages, err
}

// acknowledge completes a delivery.
func (c *client) acknowledge(ctx context.Context, queueID string, d delivery) error {
	body := `{"receipt_handle":"` + d.ReceiptHandle + `"}`
	return c.call(ctx, "/v1/queues/"+queueID+"/messages/"+d.ID+"/acknowledge", "", []byte(body), http.StatusNoContent, nil)
}

// acknowledgeBatch completes deliveries in one request and reports which ones it removed.
func (c *client) acknowledgeBatch(ctx context.Context, queueID string, deliveries []delivery) ([]bool, error) {
	var body strings.Builder
	body.WriteString(`{"messages":[`)
	for i, d := range deliveries {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`{"id":"` + d.ID + `","receipt_handle":"` + d.ReceiptHandle + `"}`)
	}
	body.WriteString(`]}`)
	var answer struct {
		Results []struct {
			Acknowledged bool `json:"acknowledged"`
		} `json:"results"`
	}
	if err := c.call(ctx, "/v1/queues/"+queueID+"/messages/acknowledge/batch", "", []byte(body.String()), http.StatusOK, &answer); err != nil {
		return nil, err
	}
	if len(answer.Results) != len(deliveries) {
		return nil, fmt.Errorf("acknowledge batch: %d results for %d messages", len(answer.Results), len(deliveries))
	}
	removed := make([]bool, len(deliveries))
	for i, r := range answer.Results {
		removed[i] = r.Acknowledged
	}
	return removed, nil
}

// errNoContent is returned by call for a 204 where another status was expected.
var errNoContent = errors.New("204 No Content")

// call POSTs body to path, with the Idempotency-Key key when not empty, and expects status
// want, decoding the answer into result when it is not nil.
func (c *client) call(ctx context.Context, path, key string, body []byte, want int, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return err
	case resp.StatusCode == want && result != nil:
		return json.Unmarshal(answer, result)
	case resp.StatusCode == want:
		return nil
	case resp.StatusCode == http.StatusNoContent:
		return errNoContent
	}
	return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(answer))
}
