package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	if err := c.call(ctx, "/v1/queues", body, http.StatusCreated, &q); err != nil {
		return queue{}, fmt.Errorf("create queue %s: %w", name, err)
	}
	return q, nil
}

// enqueue adds a message with the given payload, which must need no JSON escaping.
func (c *client) enqueue(ctx context.Context, queueID, payload, priority string) error {
	body := `{"payload":"` + payload + `","priority":"` + priority + `"}`
	return c.call(ctx, "/v1/queues/"+queueID+"/messages", []byte(body), http.StatusCreated, nil)
}

// dequeue takes the next message; ok is false when the queue had none ready.
func (c *client) dequeue(ctx context.Context, queueID string) (d delivery, ok bool, err error) {
	err = c.call(ctx, "/v1/queues/"+queueID+"/messages/dequeue", nil, http.StatusOK, &d)
	if errors.Is(err, errNoContent) {
		return delivery{}, false, nil
	}
	return d, err == nil, err
}

// acknowledge completes a delivery.
func (c *client) acknowledge(ctx context.Context, queueID string, d delivery) error {
	body := `{"receipt_handle":"` + d.ReceiptHandle + `"}`
	return c.call(ctx, "/v1/queues/"+queueID+"/messages/"+d.ID+"/acknowledge", []byte(body), http.StatusNoContent, nil)
}

// errNoContent is returned by call for a 204 where another status was expected.
var errNoContent = errors.New("204 No Content")

// call POSTs body to path and expects status want, decoding the answer into result when
// it is not nil.
func (c *client) call(ctx context.Context, path string, body []byte, want int, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
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
