package apptest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// errorTests cover the codes of the errors, which callers test with errors.Is and
// domain.ErrorCode whatever the implementation.
var errorTests = []testCase{
	{"UnknownQueue_EveryUseCase_QueueNotFound", func(t *testing.T, r *retsuTest) {
		unknown := newID()
		receipt := domain.Receipt{MessageID: newID(), ReceiptHandle: newID()}
		calls := map[string]func() error{
			"Queue": func() error { _, err := r.Queue(ctx, unknown); return err },
			"UpdateQueue": func() error {
				_, err := r.UpdateQueue(ctx, unknown, domain.SettingsUpdate{MaxDeliveryAttempts: new(2)})
				return err
			},
			"DeleteQueue": func() error { return r.DeleteQueue(ctx, unknown) },
			"PurgeQueue":  func() error { _, err := r.PurgeQueue(ctx, unknown); return err },
			"Stats":       func() error { _, err := r.Stats(ctx, unknown); return err },
			"EnqueueMessages": func() error {
				_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: unknown, Messages: []domain.NewMessage{message(domain.PriorityLow, "x")}, Batch: true})
				return err
			},
			"DequeueMessages": func() error {
				_, err := r.DequeueMessages(ctx, app.DequeueParams{QueueID: unknown, Max: 10})
				return err
			},
			"AcknowledgeMessages": func() error { _, err := r.AcknowledgeMessages(ctx, unknown, []domain.Receipt{receipt}); return err },
			"Extend":              func() error { return r.Extend(ctx, unknown, receipt, time.Minute) },
			"Release":             func() error { return r.Release(ctx, unknown, receipt, 0) },
			"DeadLetters":         func() error { _, err := r.DeadLetters(ctx, unknown, ports.DeadLetterPage{}); return err },
			"DeadLetter":          func() error { _, err := r.DeadLetter(ctx, unknown, receipt.MessageID); return err },
			"DeleteDeadLetter":    func() error { return r.DeleteDeadLetter(ctx, unknown, receipt.MessageID) },
			"DeleteDeadLetters":   func() error { _, err := r.DeleteDeadLetters(ctx, unknown); return err },
			"Redrive":             func() error { _, err := r.Redrive(ctx, unknown, domain.Redrive{Limit: 10}); return err },
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, domain.ErrQueueNotFound) {
				t.Errorf("%s of an unknown queue: %v, want queue_not_found", name, err)
			}
			var coded *domain.Error
			if !errors.As(err, &coded) || coded.Code != domain.CodeQueueNotFound {
				t.Errorf("%s of an unknown queue: no *domain.Error with the code in %v", name, err)
			}
		}
	}},

	{"CreateQueue_InvalidSettings_CodeOfTheFirst", func(t *testing.T, r *retsuTest) {
		tests := []struct {
			name     string
			newQueue domain.NewQueue
			code     domain.Code
		}{
			{"empty name", domain.NewQueue{}, domain.CodeInvalidQueueName},
			{"uppercase name", domain.NewQueue{Name: "Emails"}, domain.CodeInvalidQueueName},
			{"name too long", domain.NewQueue{Name: strings.Repeat("a", domain.MaxQueueNameLength+1)}, domain.CodeInvalidQueueName},
			{"bad name before bad setting", domain.NewQueue{Name: "-x", SettingsUpdate: domain.SettingsUpdate{MaxDeliveryAttempts: new(0)}}, domain.CodeInvalidQueueName},
			{"visibility timeout", domain.NewQueue{Name: uniqueName("v"), SettingsUpdate: domain.SettingsUpdate{VisibilityTimeout: new(domain.MaxVisibilityTimeout + time.Second)}}, domain.CodeInvalidVisibilityTimeout},
			{"fractional visibility timeout", domain.NewQueue{Name: uniqueName("v"), SettingsUpdate: domain.SettingsUpdate{VisibilityTimeout: new(1500 * time.Millisecond)}}, domain.CodeInvalidVisibilityTimeout},
			{"attempts", domain.NewQueue{Name: uniqueName("a"), SettingsUpdate: domain.SettingsUpdate{MaxDeliveryAttempts: new(domain.MaxMaxDeliveryAttempts + 1)}}, domain.CodeInvalidMaxDeliveryAttempts},
			{"lifetime", domain.NewQueue{Name: uniqueName("l"), SettingsUpdate: domain.SettingsUpdate{DefaultMessageTTL: new(time.Duration(0))}}, domain.CodeInvalidDefaultMessageTTL},
		}
		for _, tc := range tests {
			_, err := r.CreateQueue(ctx, tc.newQueue)
			if codeOf(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		}
	}},

	{"UpdateQueue_InvalidUpdate_Code", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		_, err := r.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{})
		r.is.True(errors.Is(err, domain.ErrEmptyQueueUpdate)) // an update must supply a setting
		_, err = r.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{MaxDeliveryAttempts: new(0)})
		r.is.Equal(codeOf(err), domain.CodeInvalidMaxDeliveryAttempts) // in range
		_, err = r.UpdateQueue(ctx, newID(), domain.SettingsUpdate{})
		r.is.Equal(codeOf(err), domain.CodeEmptyQueueUpdate) // the update is checked before the queue's existence
	}},

	{"ListQueues_LimitOutOfRange_InvalidQuery", func(t *testing.T, r *retsuTest) {
		for _, limit := range []int{-1, domain.MaxListLimit + 1} {
			_, err := r.ListQueues(ctx, ports.ListQueuesParams{Limit: limit})
			r.is.Equal(codeOf(err), domain.CodeInvalidQuery) // 1 to 1,000
		}
	}},

	{"ListQueues_CursorNoNameCouldFollow_InvalidQuery", func(t *testing.T, r *retsuTest) {
		for _, after := range []string{"a\x00b", "\xff", strings.Repeat("a", 1025)} {
			_, err := r.ListQueues(ctx, ports.ListQueuesParams{After: after})
			r.is.Equal(codeOf(err), domain.CodeInvalidQuery) // a NUL, invalid UTF-8, or more than 1,024 bytes
		}
	}},

	{"DequeueMessages_OutOfRange_Code", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		tests := []struct {
			params app.DequeueParams
			code   domain.Code
		}{
			{app.DequeueParams{QueueID: q.ID, Max: domain.MaxDequeueBatch + 1}, domain.CodeInvalidMaxMessages},
			{app.DequeueParams{QueueID: q.ID, Max: -1}, domain.CodeInvalidMaxMessages},
			{app.DequeueParams{QueueID: q.ID, Max: 1, Wait: domain.MaxWait + time.Second}, domain.CodeInvalidWait},
			{app.DequeueParams{QueueID: q.ID, Max: 1, Wait: 1500 * time.Millisecond}, domain.CodeInvalidWait},
			{app.DequeueParams{QueueID: newID(), Max: 1, Wait: -time.Second}, domain.CodeInvalidWait},
		}
		for _, tc := range tests {
			_, err := r.DequeueMessages(ctx, tc.params)
			if codeOf(err) != tc.code {
				t.Errorf("dequeue %+v: %v, want %s", tc.params, err, tc.code)
			}
		}
	}},

	{"EnqueueMessages_InvalidValueOfUnknownQueue_ValueCodeFirst", func(t *testing.T, r *retsuTest) {
		_, err := r.EnqueueMessages(ctx, app.EnqueueParams{QueueID: newID(), Messages: []domain.NewMessage{{Payload: "x"}}, Batch: true})
		r.is.Equal(codeOf(err), domain.CodeInvalidPriority) // values are checked before the queue's existence
	}},
}
