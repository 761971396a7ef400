package domain_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

func TestRedrive_Validate(t *testing.T) {
	t.Parallel()
	ids := func(n int) []domain.ID { return make([]domain.ID, n) }
	cases := []struct {
		name    string
		redrive domain.Redrive
		want    domain.Code
	}{
		{name: "one ID", redrive: domain.Redrive{IDs: ids(1)}},
		{name: "1,000 IDs", redrive: domain.Redrive{IDs: ids(1000)}},
		{name: "no ID", redrive: domain.Redrive{IDs: ids(0)}, want: domain.CodeInvalidBatchSize},
		{name: "1,001 IDs", redrive: domain.Redrive{IDs: ids(1001)}, want: domain.CodeInvalidBatchSize},
		{name: "limit 1", redrive: domain.Redrive{Limit: 1}},
		{name: "limit 10,000", redrive: domain.Redrive{Limit: 10000}},
		{name: "limit 0", redrive: domain.Redrive{Limit: 0}, want: domain.CodeInvalidBatchSize},
		{name: "limit negative", redrive: domain.Redrive{Limit: -1}, want: domain.CodeInvalidBatchSize},
		{name: "limit 10,001", redrive: domain.Redrive{Limit: 10001}, want: domain.CodeInvalidBatchSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(tc.redrive.Validate()), tc.want) // 1 to 1,000 IDs, or a limit of 1 to 10,000
		})
	}
}

func TestDeadLetter_Redrive_FreshAttemptsAndTheQueuesCurrentSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	attributes := domain.Attributes{"kind": {DataType: "Binary", BinaryValue: []byte{0, 1}}}
	d := domain.DeadLetter{
		QueueID:          domain.ID{1},
		MessageID:        domain.ID{2},
		Priority:         domain.PriorityHigh,
		Payload:          "poison",
		Attributes:       attributes,
		DeliveryAttempts: 5,
		EnqueuedAt:       now.Add(-48 * time.Hour),
		DeadLetteredAt:   now.Add(-time.Hour),
	}
	q := domain.Queue{ID: domain.ID{1}, Name: "orders", Settings: domain.Settings{
		VisibilityTimeout: 2 * time.Minute, MaxDeliveryAttempts: 8, DefaultMessageTTL: 3 * time.Hour,
	}}

	got := d.Redrive(q)

	is.Equal(got, domain.Enqueue{
		QueueID:             domain.ID{1},
		MessageID:           domain.ID{2},
		Priority:            domain.PriorityHigh,
		Payload:             "poison",
		Attributes:          attributes,
		TTL:                 3 * time.Hour,
		VisibilityTimeout:   2 * time.Minute,
		MaxDeliveryAttempts: 8,
	}) // the same ID, payload, priority and attributes; the queue's current settings; no delay

	m := domain.NewStoredMessage(got, 99, now)
	is.Equal(m.DeliveryAttempts, 0)             // stored again with no attempt used
	is.Equal(m.ExpiresAt, now.Add(3*time.Hour)) // living the queue's default from the redrive
	is.True(m.IsDeliverable(now))               // and deliverable at once
}
