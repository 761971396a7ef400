package sqsapi

import (
	"regexp"
	"slices"
)

// maxBatchEntries is the size of every SQS batch.
const maxBatchEntries = 10

// batchEntryID is SQS's rule for the IDs of batch entries.
var batchEntryID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// batch holds the outcome of each entry of a batch action, in request order.
type batch struct {
	ids     []string
	answers []any // nil while an entry is pending
}

// idAnswer is the success of an entry that answers nothing else.
type idAnswer struct {
	ID string `json:"Id"`
}

// failureAnswer is the failure of an entry.
type failureAnswer struct {
	ID          string `json:"Id"`
	SenderFault bool
	Code        string
	Message     string
}

// newBatch checks a batch's size and the IDs of its entries: 1 to 10 entries, each with
// a distinct ID of SQS's form.
func newBatch(ids []*string) (*batch, error) {
	switch {
	case len(ids) == 0:
		return nil, fail(errEmptyBatchRequest, "There should be at least one entry in the request.")
	case len(ids) > maxBatchEntries:
		return nil, fail(errTooManyEntries, "Maximum number of entries per request are %d. You have sent %d.", maxBatchEntries, len(ids))
	}
	b := &batch{ids: make([]string, len(ids)), answers: make([]any, len(ids))}
	for i, id := range ids {
		if id == nil || !batchEntryID.MatchString(*id) {
			return nil, fail(errInvalidBatchEntryID, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if slices.Contains(b.ids[:i], *id) {
			return nil, fail(errBatchIDsNotDistinct, "Id %s repeated.", *id)
		}
		b.ids[i] = *id
	}
	return b, nil
}

// fail records entry's failure with err's SQS code.
func (b *batch) fail(entry int, err error) {
	kind, message := classify(err)
	b.answers[entry] = failureAnswer{ID: b.ids[entry], SenderFault: !kind.receiver, Code: kind.shape, Message: message}
}

// succeed records entry's success.
func (b *batch) succeed(entry int, answer any) { b.answers[entry] = answer }

// pending returns the entries without an outcome, in order.
func (b *batch) pending() []int {
	var entries []int
	for i, answer := range b.answers {
		if answer == nil {
			entries = append(entries, i)
		}
	}
	return entries
}

// clone returns a copy whose outcomes can be recorded apart.
func (b *batch) clone() *batch {
	return &batch{ids: b.ids, answers: slices.Clone(b.answers)}
}

// answer returns the batch's answer: the successes and the failures, each in request
// order.
func (b *batch) answer() any {
	answer := struct {
		Successful []any
		Failed     []failureAnswer
	}{Successful: []any{}, Failed: []failureAnswer{}}
	for _, a := range b.answers {
		if failure, ok := a.(failureAnswer); ok {
			answer.Failed = append(answer.Failed, failure)
		} else {
			answer.Successful = append(answer.Successful, a)
		}
	}
	return answer
}
