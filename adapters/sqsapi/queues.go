package sqsapi

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// noAnswer is the answer of the actions that return nothing.
type noAnswer struct{}

// queueURLAnswer is the answer of CreateQueue and GetQueueUrl.
type queueURLAnswer struct {
	QueueURL string `json:"QueueUrl"`
}

// createQueue answers CreateQueue. Creating a queue that exists succeeds when the request
// asks for the settings it has, as in SQS, and is QueueNameExists otherwise.
func createQueue(c *call) (any, error) {
	// Parse: the name, then the attributes.
	var in struct {
		QueueName  *string
		Attributes map[string]string
		Tags       map[string]string `json:"tags"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := newQueueName(in.QueueName)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) > 0 {
		return nil, fail(errInvalidParameterValue, "Tags are not supported: Retsu queues have no tags.")
	}
	settings, err := queueSettings(in.Attributes, c.region, name)
	if err != nil {
		return nil, err
	}
	// Call; an existing queue is compared with what was asked.
	q, err := c.h.svc.CreateQueue(c.ctx, domain.NewQueue{Name: name, SettingsUpdate: settings})
	if errors.Is(err, domain.ErrQueueAlreadyExists) {
		err = c.withQueueNamed(c.ctx, name, func(ctx context.Context, id domain.ID) error {
			if q, err = c.h.svc.Queue(ctx, id); err != nil {
				return err
			}
			if differing := differingSetting(settings, q); differing != "" {
				return fail(errQueueNameExists, "A queue already exists with the same name and a different value for attribute %s.", differing)
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	// Encode.
	c.h.queues.remember(name, q.ID)
	return queueURLAnswer{QueueURL: queueURL(c.r, name)}, nil
}

// newQueueName checks the name of a queue to create. Retsu's names are stricter than
// SQS's (1 to 64 of a-z 0-9 . _ -, starting and ending with a letter or digit); a name
// Retsu cannot hold is refused, never changed, and a FIFO queue's name is refused with
// why.
func newQueueName(name *string) (string, error) {
	switch {
	case name == nil || *name == "":
		return "", fail(errMissingParameter, "The request must contain the parameter QueueName.")
	case strings.HasSuffix(*name, ".fifo"):
		return "", fail(errInvalidParameterValue, "Retsu has no FIFO queues: the queue name %q ends with .fifo.", *name)
	case domain.ValidateQueueName(*name) != nil:
		return "", fail(errInvalidParameterValue,
			"Retsu cannot hold the queue name %q: its names are 1 to 64 lowercase letters, digits, dots, underscores or hyphens, starting and ending with a letter or digit.", *name)
	}
	return *name, nil
}

// getQueueURL answers GetQueueUrl.
func getQueueURL(c *call) (any, error) {
	var in struct {
		QueueName      *string
		OwnerAccountID *string `json:"QueueOwnerAWSAccountId"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.QueueName == nil || *in.QueueName == "" {
		return nil, fail(errMissingParameter, "The request must contain the parameter QueueName.")
	}
	if in.OwnerAccountID != nil && *in.OwnerAccountID != AccountID {
		return nil, errNoSuchQueue
	}
	if _, err := c.h.queues.resolve(c.ctx, *in.QueueName, false); err != nil {
		return nil, err
	}
	return queueURLAnswer{QueueURL: queueURL(c.r, *in.QueueName)}, nil
}

// The page sizes of ListQueues: SQS returns up to 1,000 URLs, and pages only when
// MaxResults is given.
const maxListQueues = 1000

// listQueues answers ListQueues: the queues whose names start with QueueNamePrefix, in
// name order, a page of MaxResults at a time. The NextToken is the last name of the page.
func listQueues(c *call) (any, error) {
	// Parse.
	var in struct {
		QueueNamePrefix string
		MaxResults      *int
		NextToken       *string
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	pageSize := maxListQueues
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > maxListQueues {
			return nil, fail(errInvalidParameterValue, "Value %d for parameter MaxResults is invalid. Reason: must be between 1 and %d.", *in.MaxResults, maxListQueues)
		}
		pageSize = *in.MaxResults
	}
	if !couldPrefixName(in.QueueNamePrefix) {
		return listAnswer{QueueURLs: []string{}}, nil
	}
	after := justBefore(in.QueueNamePrefix)
	if in.NextToken != nil {
		last, err := base64.RawURLEncoding.DecodeString(*in.NextToken)
		if err != nil || !strings.HasPrefix(string(last), in.QueueNamePrefix) {
			return nil, fail(errInvalidParameterValue, "Invalid NextToken value.")
		}
		after = string(last)
	}
	// Call: one more than the page when it can, to know whether another follows.
	fetch := min(pageSize+1, maxListQueues)
	queues, err := c.h.svc.ListQueues(c.ctx, ports.ListQueuesParams{After: after, Limit: fetch})
	if err != nil {
		return nil, err
	}
	// Encode the queues of the prefix, which come first.
	matching := len(queues)
	for i, q := range queues {
		if !strings.HasPrefix(q.Name, in.QueueNamePrefix) {
			matching = i
			break
		}
	}
	more := matching > pageSize || matching == fetch && fetch == pageSize
	answer := listAnswer{QueueURLs: make([]string, 0, min(matching, pageSize))}
	for _, q := range queues[:min(matching, pageSize)] {
		answer.QueueURLs = append(answer.QueueURLs, queueURL(c.r, q.Name))
	}
	if in.MaxResults != nil && more {
		answer.NextToken = base64.RawURLEncoding.EncodeToString([]byte(queues[pageSize-1].Name))
	}
	return answer, nil
}

// listAnswer is the answer of ListQueues.
type listAnswer struct {
	QueueURLs []string `json:"QueueUrls"`
	NextToken string   `json:",omitempty"`
}

// couldPrefixName reports whether some Retsu queue name could start with prefix.
func couldPrefixName(prefix string) bool {
	if len(prefix) > domain.MaxQueueNameLength {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// justBefore returns a string that sorts before every name that starts with prefix and
// after every other name that sorts before prefix, so that a listing after it starts at
// the prefix: Retsu lists after a name, exclusive, and its names hold only lowercase
// letters, digits and . _ -, which all sort before '~' (couldPrefixName checked prefix).
func justBefore(prefix string) string {
	if prefix == "" {
		return ""
	}
	last := prefix[len(prefix)-1]
	return prefix[:len(prefix)-1] + string(rune(last-1)) + strings.Repeat("~", domain.MaxQueueNameLength)
}

// getQueueAttributes answers GetQueueAttributes; the message counts come from Retsu's
// statistics, which are read only when one is asked for.
func getQueueAttributes(c *call) (any, error) {
	var in struct {
		QueueURL       *string `json:"QueueUrl"`
		AttributeNames []string
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	names, err := requestedAttributes(in.AttributeNames)
	if err != nil {
		return nil, err
	}
	var answer struct {
		Attributes map[string]string `json:",omitempty"`
	}
	err = c.withQueue(in.QueueURL, func(ctx context.Context, id domain.ID) error {
		q, err := c.h.svc.Queue(ctx, id)
		if err != nil {
			return err
		}
		var stats domain.QueueStats
		if needsStats(names) {
			if stats, err = c.h.svc.Stats(ctx, id); err != nil {
				return err
			}
		}
		answer.Attributes = queueAttributes(names, c.region, q, stats)
		return nil
	})
	return answer, err
}

// setQueueAttributes answers SetQueueAttributes. Attributes that Retsu holds at one value
// (such as DelaySeconds 0) change nothing.
func setQueueAttributes(c *call) (any, error) {
	var in struct {
		QueueURL   *string `json:"QueueUrl"`
		Attributes map[string]string
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := queueNameOf(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if len(in.Attributes) == 0 {
		return nil, fail(errMissingParameter, "The request must contain the parameter Attributes.")
	}
	settings, err := queueSettings(in.Attributes, c.region, name)
	if err != nil {
		return nil, err
	}
	err = c.withQueueNamed(c.ctx, name, func(ctx context.Context, id domain.ID) error {
		var err error
		if settings.IsEmpty() {
			_, err = c.h.svc.Queue(ctx, id)
		} else {
			_, err = c.h.svc.UpdateQueue(ctx, id, settings)
		}
		return err
	})
	return noAnswer{}, err
}

// deleteQueue answers DeleteQueue: the queue, its messages and its dead letters.
func deleteQueue(c *call) (any, error) {
	var in struct {
		QueueURL *string `json:"QueueUrl"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	err := c.withQueue(in.QueueURL, func(ctx context.Context, id domain.ID) error {
		return c.h.svc.DeleteQueue(ctx, id)
	})
	if name, nameErr := queueNameOf(in.QueueURL); nameErr == nil {
		c.h.queues.forget(name)
	}
	return noAnswer{}, err
}

// purgeQueue answers PurgeQueue: Retsu removes the messages at once, so a second purge
// within 60 seconds is not refused as in SQS.
func purgeQueue(c *call) (any, error) {
	var in struct {
		QueueURL *string `json:"QueueUrl"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	err := c.withQueue(in.QueueURL, func(ctx context.Context, id domain.ID) error {
		_, err := c.h.svc.PurgeQueue(ctx, id)
		return err
	})
	return noAnswer{}, err
}
