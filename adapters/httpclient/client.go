package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/retsu/retsu/app"
)

// Client calls a remote Retsu over its HTTP API. It is safe for concurrent use.
type Client struct {
	// base is the API's URL without a trailing slash; paths are appended to it.
	base   string
	token  string
	http   *http.Client
	retry  RetryPolicy
	log    *slog.Logger
	agent  string
	keyGen func() string
}

var _ app.Retsu = (*Client)(nil)

// Options configure a Client; the zero value is the default of each field.
type Options struct {
	// Token is the bearer token sent with every request (RETSU_API_TOKENS on the server);
	// empty sends none.
	Token string
	// HTTPClient sends the requests; nil is a client of its own with a transport like the
	// standard one that keeps up to 64 idle connections to the server (the standard keeps
	// 2), so that a Worker of up to 64 handlers, or as many concurrent calls, reuses its
	// connections rather than opening new ones. Give your own client with enough
	// MaxIdleConnsPerHost for your concurrency. Leave its Timeout at zero: a long-polling dequeue waits up to 20 s, and
	// every call takes a context to bound it.
	HTTPClient *http.Client
	// Retry says how retries are made (see RetryPolicy).
	Retry RetryPolicy
	// Logger receives a line for each retry; nil discards them.
	Logger *slog.Logger
	// NoEnqueueKeys stops the client from giving an Idempotency-Key of its own to each
	// enqueue that has none: such an enqueue is then sent once (a retry after a lost answer
	// could store its messages twice), and the server stores no key for it. By default every
	// enqueue carries a key, so that the client can retry it safely.
	NoEnqueueKeys bool
}

// New returns a client of the API at baseURL, such as http://127.0.0.1:2424.
func New(baseURL string, o Options) (*Client, error) {
	base := strings.TrimRight(baseURL, "/")
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("httpclient: the base URL %q must be an http or https URL with a host and no query", baseURL)
	}
	c := &Client{base: base, token: o.Token, http: o.HTTPClient, retry: o.Retry.withDefaults(), log: o.Logger,
		agent: "retsu-httpclient", keyGen: newIdempotencyKey}
	if o.NoEnqueueKeys {
		c.keyGen = func() string { return "" }
	}
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport()}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// maxIdleConnsPerHost is how many idle connections the default transport keeps to the
// server: more than a worker's handlers, their extensions and its poll usually need at once.
const maxIdleConnsPerHost = 64

// newTransport returns the standard transport with maxIdleConnsPerHost.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdleConnsPerHost)
	return t
}

// request is one call of the API.
type request struct {
	method string
	// path is the escaped path, such as /v1/queues/<id>/messages.
	path  string
	query url.Values
	// body is encoded as JSON; nil sends no body.
	body   any
	header http.Header
	safety retrySafety
}

// answer is what the caller needs of a successful answer besides its body.
type answer struct {
	status int
	header http.Header
	// afterUnknown is true when an earlier attempt's outcome was unknown (its answer was
	// lost): what this answer says may then include that attempt's effect.
	afterUnknown bool
}

// do sends req, retrying as its safety allows, and decodes a successful answer's JSON body
// into out (when out is not nil and the answer has a body). Error answers are *Error
// values, requests without an answer *TransportError values.
func (c *Client) do(ctx context.Context, req request, out any) (answer, error) {
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return answer{}, fmt.Errorf("httpclient: encode the body of %s %s: %w", req.method, req.path, err)
		}
	}
	unknown := false
	for attempt := 1; ; attempt++ {
		a, err := c.send(ctx, req, body, out)
		if err == nil {
			a.afterUnknown = unknown
			return a, nil
		}
		pause, again := c.retry.pauseBeforeRetry(ctx, req.safety, attempt, err)
		if !again {
			return answer{}, outcomeOf(err, unknown)
		}
		unknown = unknown || errors.Is(err, ErrOutcomeUnknown)
		c.log.LogAttrs(ctx, slog.LevelInfo, "retrying a Retsu request",
			slog.String("method", req.method), slog.String("path", req.path),
			slog.Int("attempt", attempt), slog.Duration("pause", pause), slog.String("err", err.Error()))
		if !sleep(ctx, pause) {
			return answer{}, outcomeOf(err, unknown)
		}
	}
}

// outcomeOf returns the error of the last attempt of a request, marked with
// ErrOutcomeUnknown when an earlier attempt's answer was lost: that attempt may have done
// what the request asked, whatever the last one says.
func outcomeOf(err error, earlierUnknown bool) error {
	if !earlierUnknown || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	return fmt.Errorf("%w (%w: an earlier attempt's answer was lost)", err, ErrOutcomeUnknown)
}

// send makes one attempt of req.
func (c *Client) send(ctx context.Context, req request, body []byte, out any) (answer, error) {
	httpReq, err := c.newHTTPRequest(ctx, req, body)
	if err != nil {
		return answer{}, err
	}
	res, err := c.http.Do(httpReq)
	if err != nil {
		return answer{}, &TransportError{Method: req.method, Path: req.path, Err: err}
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return answer{}, errorOf(res)
	}
	if err := decodeAnswer(res, out); err != nil {
		return answer{}, &TransportError{Method: req.method, Path: req.path, Err: err}
	}
	return answer{status: res.StatusCode, header: res.Header}, nil
}

// newHTTPRequest builds the HTTP request of one attempt.
func (c *Client) newHTTPRequest(ctx context.Context, req request, body []byte) (*http.Request, error) {
	address := c.base + req.path
	if len(req.query) > 0 {
		address += "?" + req.query.Encode()
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.method, address, reader)
	if err != nil {
		return nil, fmt.Errorf("httpclient: %s %s: %w", req.method, req.path, err)
	}
	for name, values := range req.header {
		httpReq.Header[name] = values
	}
	if body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	httpReq.Header.Set("Accept", "application/json, application/problem+json")
	httpReq.Header.Set("User-Agent", c.agent)
	if c.token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+c.token)
	}
	return httpReq, nil
}

// decodeAnswer reads a successful answer's body into out; a 204, or a nil out, reads
// nothing.
func decodeAnswer(res *http.Response, out any) error {
	if out == nil || res.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxProblemBytes))
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("read the answer (%d): %w", res.StatusCode, err)
	}
	return nil
}
