package sqsapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// AccountID is the AWS account that every queue of the endpoint belongs to, in its URL and
// ARN: one Retsu is one account, whoever signs the request.
const AccountID = "000000000000"

// DefaultRegion is the region of the queues' ARNs for a request whose signature names none
// (an unsigned request to an open endpoint), unless Options.Region is set.
const DefaultRegion = "us-east-1"

// region is a region's name as it may appear in an ARN.
var region = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// queueURL returns the URL of the queue named name: the endpoint's own base URL, as the
// request reached it, then /<account>/<name>.
func queueURL(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/" + AccountID + "/" + name
}

// queueARN returns the ARN of the queue named name, in region.
func queueARN(region, name string) string {
	return "arn:aws:sqs:" + region + ":" + AccountID + ":" + name
}

// arnRegion returns the region of the ARNs that answer r: the configured one, else the
// region that r's signature is scoped to, else DefaultRegion. A Retsu is not in a region,
// so each client sees its queues in the region it signs for, unless one is configured.
func (h *handler) arnRegion(r *http.Request) string {
	if h.region != "" {
		return h.region
	}
	if auth, err := parseAuthorization(r.Header.Get("Authorization")); err == nil && region.MatchString(auth.region) {
		return auth.region
	}
	return DefaultRegion
}

// queueNameOf returns the name of the queue that a queue URL names. The host is not
// compared, so that a URL keeps working through any name of the endpoint; the account
// must be the endpoint's.
func queueNameOf(queueURL *string) (string, error) {
	if queueURL == nil || *queueURL == "" {
		return "", fail(errMissingParameter, "The request must contain the parameter QueueUrl.")
	}
	u, err := url.Parse(*queueURL)
	segments := []string{}
	if err == nil {
		segments = strings.Split(strings.Trim(u.Path, "/"), "/")
	}
	if err != nil || u.Scheme == "" || len(segments) < 2 {
		return "", fail(errInvalidAddress, "The address %s is not a queue URL of the form <endpoint>/%s/<queue name>.", *queueURL, AccountID)
	}
	account, name := segments[len(segments)-2], segments[len(segments)-1]
	if account != AccountID || name == "" {
		return "", fail(errQueueDoesNotExist, "The specified queue does not exist.")
	}
	return name, nil
}

// queueNames resolves queue names to IDs through app.Retsu.ListQueues, and keeps what it
// found for nameLifetime, so that the messages' actions do not read the queue table each
// time. An ID kept for a queue that was deleted is caught by the action that uses it,
// which meets queue_not_found and resolves the name again (see withQueue).
type queueNames struct {
	svc app.Retsu
	now func() time.Time

	mu      sync.Mutex
	entries map[string]nameEntry
}

// nameLifetime bounds how long a resolved name is kept.
const nameLifetime = time.Second

// maxNameEntries bounds the resolved names kept; past it, the expired ones are dropped.
const maxNameEntries = 10000

type nameEntry struct {
	id      domain.ID
	expires time.Time
}

func newQueueNames(svc app.Retsu, now func() time.Time) *queueNames {
	return &queueNames{svc: svc, now: now, entries: map[string]nameEntry{}}
}

// errNoSuchQueue answers a queue URL or name that names no queue.
var errNoSuchQueue = fail(errQueueDoesNotExist, "The specified queue does not exist.")

// resolve returns the queue named name, from what it kept unless fresh is set.
func (n *queueNames) resolve(ctx context.Context, name string, fresh bool) (domain.ID, error) {
	if !fresh {
		n.mu.Lock()
		entry, ok := n.entries[name]
		n.mu.Unlock()
		if ok && n.now().Before(entry.expires) {
			return entry.id, nil
		}
	}
	queues, err := n.svc.ListQueues(ctx, ports.ListQueuesParams{Name: &name, Limit: 1})
	if err != nil {
		return domain.ID{}, err
	}
	if len(queues) == 0 {
		n.forget(name)
		return domain.ID{}, errNoSuchQueue
	}
	n.remember(name, queues[0].ID)
	return queues[0].ID, nil
}

// remember keeps the ID of a queue that was just found or created.
func (n *queueNames) remember(name string, id domain.ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	if len(n.entries) >= maxNameEntries {
		for other, entry := range n.entries {
			if !now.Before(entry.expires) {
				delete(n.entries, other)
			}
		}
	}
	n.entries[name] = nameEntry{id: id, expires: now.Add(nameLifetime)}
}

// forget drops what is kept of name.
func (n *queueNames) forget(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.entries, name)
}

// withQueue runs do with the ID of the queue that queueURL names. When do meets
// queue_not_found for a kept ID, the queue may have been deleted and its name given to a
// new one: the name is resolved afresh, and do runs again for the new queue. do must
// change nothing when it meets queue_not_found, which Retsu's use cases guarantee.
func (c *call) withQueue(queueURL *string, do func(ctx context.Context, queueID domain.ID) error) error {
	name, err := queueNameOf(queueURL)
	if err != nil {
		return err
	}
	return c.withQueueNamed(c.ctx, name, do)
}

// withQueueNamed is withQueue for a queue name, under ctx.
func (c *call) withQueueNamed(ctx context.Context, name string, do func(ctx context.Context, queueID domain.ID) error) error {
	names := c.h.queues
	id, err := names.resolve(ctx, name, false)
	if err != nil {
		return err
	}
	err = do(ctx, id)
	if !errors.Is(err, domain.ErrQueueNotFound) {
		return err
	}
	fresh, err := names.resolve(ctx, name, true)
	if err != nil {
		return err
	}
	if fresh == id {
		return errNoSuchQueue
	}
	return do(ctx, fresh)
}
