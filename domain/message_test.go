package domain_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

func TestParsePriority(t *testing.T) {
	t.Parallel()
	cases := []struct {
		input string
		want  domain.Priority
		code  domain.Code
	}{
		{input: "HIGH", want: domain.PriorityHigh},
		{input: "MEDIUM", want: domain.PriorityMedium},
		{input: "LOW", want: domain.PriorityLow},

		{input: "high", code: domain.CodeInvalidPriority},
		{input: "High", code: domain.CodeInvalidPriority},
		{input: "medium", code: domain.CodeInvalidPriority},
		{input: "low", code: domain.CodeInvalidPriority},
		{input: "", code: domain.CodeInvalidPriority},
		{input: " HIGH", code: domain.CodeInvalidPriority},
		{input: "HIGH ", code: domain.CodeInvalidPriority},
		{input: "HIGH\n", code: domain.CodeInvalidPriority},
		{input: "MED", code: domain.CodeInvalidPriority},
		{input: "URGENT", code: domain.CodeInvalidPriority},
		{input: "1", code: domain.CodeInvalidPriority},
	}
	for _, tc := range cases {
		t.Run(tc.input, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			got, err := domain.ParsePriority(tc.input)
			is.Equal(codeOf(err), tc.code) // exactly HIGH, MEDIUM or LOW, case-sensitive
			is.Equal(got, tc.want)         // a rejected input yields no priority
		})
	}
}

func TestPriority_String(t *testing.T) {
	t.Parallel()
	cases := []struct {
		priority domain.Priority
		want     string
	}{
		{priority: domain.PriorityHigh, want: "HIGH"},
		{priority: domain.PriorityMedium, want: "MEDIUM"},
		{priority: domain.PriorityLow, want: "LOW"},
		{priority: 0, want: ""},
		{priority: 4, want: ""},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(int(tc.priority)), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.priority.String(), tc.want) // the wire spelling, or "" for no priority
		})
	}
}

func TestPriority_String_RoundTripsThroughParsePriority(t *testing.T) {
	t.Parallel()
	for _, p := range domain.Priorities {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			got, err := domain.ParsePriority(p.String())
			is.NoErr(err)    // every priority's spelling parses
			is.Equal(got, p) // back to the same priority
		})
	}
}

func TestPriority_Valid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		priority domain.Priority
		want     bool
	}{
		{priority: 0},
		{priority: domain.PriorityHigh, want: true},
		{priority: domain.PriorityMedium, want: true},
		{priority: domain.PriorityLow, want: true},
		{priority: 4},
		{priority: 255},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(int(tc.priority)), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.priority.Valid(), tc.want) // only the three named priorities are valid; zero is unset
		})
	}
}

func TestPriority_DeliveryOrder_HighThenMediumThenLow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.True(domain.PriorityHigh < domain.PriorityMedium)                                                              // a smaller value is delivered first: HIGH before MEDIUM
	is.True(domain.PriorityMedium < domain.PriorityLow)                                                               // MEDIUM before LOW
	is.Equal(domain.Priorities[:], []domain.Priority{domain.PriorityHigh, domain.PriorityMedium, domain.PriorityLow}) // Priorities lists them in delivery order
}

func TestNewMessage_Validate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		message domain.NewMessage
		want    domain.Code
	}{
		{name: "priority without ttl", message: domain.NewMessage{Priority: domain.PriorityLow}},
		{name: "ttl one second", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(time.Second)}},
		{name: "ttl thirty days", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(maxMessageTTL)}},
		{name: "empty payload", message: domain.NewMessage{Payload: "", Priority: domain.PriorityMedium}},

		{name: "unset priority", message: domain.NewMessage{Payload: "x"}, want: domain.CodeInvalidPriority},
		{name: "out-of-range priority", message: domain.NewMessage{Priority: 4}, want: domain.CodeInvalidPriority},
		{name: "ttl zero", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(time.Duration(0))}, want: domain.CodeInvalidTTL},
		{name: "ttl negative", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(-time.Second)}, want: domain.CodeInvalidTTL},
		{name: "ttl 1500ms", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(1500 * time.Millisecond)}, want: domain.CodeInvalidTTL},
		{name: "ttl above thirty days", message: domain.NewMessage{Priority: domain.PriorityHigh, TTL: new(maxMessageTTL + time.Second)}, want: domain.CodeInvalidTTL},
		{name: "priority checked before ttl", message: domain.NewMessage{TTL: new(time.Duration(0))}, want: domain.CodeInvalidPriority},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(tc.message.Validate()), tc.want) // a priority is required; a ttl, when given, is 1 s to 30 days
		})
	}
}

func TestNewMessage_Resolve_TakesQueueSettings(t *testing.T) {
	t.Parallel()
	queue := domain.Queue{
		ID:   mustParseID(t, "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
		Name: "emails",
		Settings: domain.Settings{
			VisibilityTimeout:   45 * time.Second,
			MaxDeliveryAttempts: 3,
			DefaultMessageTTL:   2 * time.Hour,
		},
	}
	messageID := mustParseID(t, "0190a1b2-c3d4-7e5f-8a9b-000000000001")
	cases := []struct {
		name    string
		message domain.NewMessage
		wantTTL time.Duration
	}{
		{
			name:    "ttl from the queue default",
			message: domain.NewMessage{Payload: "send welcome email", Priority: domain.PriorityHigh},
			wantTTL: 2 * time.Hour,
		},
		{
			name:    "ttl from the request",
			message: domain.NewMessage{Payload: "send welcome email", Priority: domain.PriorityLow, TTL: new(10 * time.Minute)},
			wantTTL: 10 * time.Minute,
		},
		{
			name:    "request ttl longer than the default",
			message: domain.NewMessage{Payload: "", Priority: domain.PriorityMedium, TTL: new(maxMessageTTL)},
			wantTTL: maxMessageTTL,
		},
		{
			name:    "payload with NUL",
			message: domain.NewMessage{Payload: "a\x00b", Priority: domain.PriorityMedium},
			wantTTL: 2 * time.Hour,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			got, err := tc.message.Resolve(queue, messageID)
			is.NoErr(err) // a valid request resolves
			is.Equal(got, domain.Enqueue{
				QueueID:             queue.ID,
				MessageID:           messageID,
				Priority:            tc.message.Priority,
				Payload:             tc.message.Payload,
				TTL:                 tc.wantTTL,
				VisibilityTimeout:   45 * time.Second,
				MaxDeliveryAttempts: 3,
			}) // ttl from the request or the queue; visibility timeout and attempts copied from the queue
		})
	}
}

func TestNewStoredMessage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	enqueue := domain.Enqueue{
		QueueID:             domain.ID{1},
		MessageID:           domain.ID{2},
		Priority:            domain.PriorityMedium,
		Payload:             "hello",
		TTL:                 time.Hour,
		VisibilityTimeout:   45 * time.Second,
		MaxDeliveryAttempts: 3,
	}

	got := domain.NewStoredMessage(enqueue, 42, now)

	is.Equal(got, domain.Message{
		QueueID:             domain.ID{1},
		ID:                  domain.ID{2},
		Seq:                 42,
		Priority:            domain.PriorityMedium,
		Payload:             "hello",
		EnqueuedAt:          now,
		ExpiresAt:           now.Add(time.Hour),
		MaxDeliveryAttempts: 3,
		VisibilityTimeout:   45 * time.Second,
	}) // expiry is now + ttl; never delivered, so no handle, attempts or VisibleAt
	is.True(got.IsDeliverable(now)) // a stored message is ready at once
}

func TestMessage_DeliversBefore_PriorityThenSeq(t *testing.T) {
	t.Parallel()
	msg := func(p domain.Priority, seq int64) domain.Message { return domain.Message{Priority: p, Seq: seq} }
	cases := []struct {
		name  string
		m     domain.Message
		other domain.Message
		want  bool
	}{
		{name: "higher priority enqueued later", m: msg(domain.PriorityHigh, 9), other: msg(domain.PriorityMedium, 1), want: true},
		{name: "lower priority enqueued earlier", m: msg(domain.PriorityMedium, 1), other: msg(domain.PriorityHigh, 9), want: false},
		{name: "medium before low", m: msg(domain.PriorityMedium, 5), other: msg(domain.PriorityLow, 2), want: true},
		{name: "low after high", m: msg(domain.PriorityLow, 1), other: msg(domain.PriorityHigh, 2), want: false},
		{name: "same priority earlier seq", m: msg(domain.PriorityLow, 3), other: msg(domain.PriorityLow, 4), want: true},
		{name: "same priority later seq", m: msg(domain.PriorityLow, 4), other: msg(domain.PriorityLow, 3), want: false},
		{name: "same message", m: msg(domain.PriorityHigh, 7), other: msg(domain.PriorityHigh, 7), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.m.DeliversBefore(tc.other), tc.want) // priority decides first, then enqueue order
		})
	}
}

func TestMessage_DeliversBefore_SortsAQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	queue := []domain.Message{
		{Seq: 1, Priority: domain.PriorityLow},
		{Seq: 2, Priority: domain.PriorityHigh},
		{Seq: 3, Priority: domain.PriorityMedium},
		{Seq: 4, Priority: domain.PriorityHigh},
		{Seq: 5, Priority: domain.PriorityLow},
	}

	slices.SortFunc(queue, func(a, b domain.Message) int {
		switch {
		case a.DeliversBefore(b):
			return -1
		case b.DeliversBefore(a):
			return 1
		}
		return 0
	})

	var seqs []int64
	for _, m := range queue {
		seqs = append(seqs, m.Seq)
	}
	is.Equal(seqs, []int64{2, 4, 3, 1, 5}) // HIGH in enqueue order, then MEDIUM, then LOW in enqueue order
}
