package domain_test

import (
	"errors"
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

		{name: "delay zero", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(time.Duration(0))}},
		{name: "delay without ttl", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(time.Hour)}},
		{name: "longest delay without ttl", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(maxDelay)}},
		{name: "delay shorter than ttl", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(time.Minute), Delay: new(59 * time.Second)}},
		{name: "longest delay, longest ttl", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(maxMessageTTL), Delay: new(maxDelay)}},
		{name: "delay equal to ttl", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(time.Minute), Delay: new(time.Minute)}, want: domain.CodeInvalidDelay},
		{name: "delay longer than ttl", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(time.Minute), Delay: new(time.Hour)}, want: domain.CodeInvalidDelay},
		{name: "delay negative", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(-time.Second)}, want: domain.CodeInvalidDelay},
		{name: "delay 1500ms", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(1500 * time.Millisecond)}, want: domain.CodeInvalidDelay},
		{name: "delay of thirty days", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(maxDelay + time.Second)}, want: domain.CodeInvalidDelay},
		{name: "ttl checked before delay", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(time.Duration(0)), Delay: new(-time.Second)}, want: domain.CodeInvalidTTL},
		{name: "priority checked before delay", message: domain.NewMessage{Delay: new(-time.Second)}, want: domain.CodeInvalidPriority},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(tc.message.Validate()), tc.want) // a priority is required; a ttl is 1 s to 30 days; a delay 0 s to 2,591,999 s and shorter than a given ttl
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
		name      string
		message   domain.NewMessage
		wantTTL   time.Duration
		wantDelay time.Duration
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
		{
			name:      "delay shorter than the queue default",
			message:   domain.NewMessage{Payload: "later", Priority: domain.PriorityMedium, Delay: new(2*time.Hour - time.Second)},
			wantTTL:   2 * time.Hour,
			wantDelay: 2*time.Hour - time.Second,
		},
		{
			name:      "delay longer than the queue default, shorter than the request ttl",
			message:   domain.NewMessage{Payload: "later", Priority: domain.PriorityMedium, TTL: new(5 * time.Hour), Delay: new(3 * time.Hour)},
			wantTTL:   5 * time.Hour,
			wantDelay: 3 * time.Hour,
		},
		{
			name: "attributes",
			message: domain.NewMessage{Payload: "x", Priority: domain.PriorityHigh, Attributes: domain.Attributes{
				"n": {DataType: "Number", StringValue: "7"},
			}},
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
				Attributes:          tc.message.Attributes,
				TTL:                 tc.wantTTL,
				Delay:               tc.wantDelay,
				VisibilityTimeout:   45 * time.Second,
				MaxDeliveryAttempts: 3,
			}) // ttl from the request or the queue, the request's delay and attributes; visibility timeout and attempts copied from the queue
		})
	}
}

func TestNewStoredMessage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	attributes := domain.Attributes{"kind": {DataType: "String", StringValue: "welcome"}}
	cases := []struct {
		name          string
		delay         time.Duration
		wantVisibleAt time.Time
	}{
		{name: "without delay", delay: 0, wantVisibleAt: now},
		{name: "with a delay", delay: 10 * time.Minute, wantVisibleAt: now.Add(10 * time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			enqueue := domain.Enqueue{
				QueueID:             domain.ID{1},
				MessageID:           domain.ID{2},
				Priority:            domain.PriorityMedium,
				Payload:             "hello",
				Attributes:          attributes,
				TTL:                 time.Hour,
				Delay:               tc.delay,
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
				Attributes:          attributes,
				EnqueuedAt:          now,
				ExpiresAt:           now.Add(time.Hour),
				VisibleAt:           tc.wantVisibleAt,
				MaxDeliveryAttempts: 3,
				VisibilityTimeout:   45 * time.Second,
			}) // expiry is now + ttl, counted from the enqueue even with a delay; visible after the delay; never delivered
		})
	}
}

func TestNewStoredMessage_DeliverableAfterItsDelay(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		delay time.Duration
		at    time.Time
		want  bool
	}{
		{name: "no delay, at once", delay: 0, at: now, want: true},
		{name: "delayed, at once", delay: time.Minute, at: now, want: false},
		{name: "delayed, 1ns before the delay ends", delay: time.Minute, at: now.Add(time.Minute - time.Nanosecond), want: false},
		{name: "delayed, when the delay ends", delay: time.Minute, at: now.Add(time.Minute), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			m := domain.NewStoredMessage(domain.Enqueue{Priority: domain.PriorityLow, TTL: time.Hour, Delay: tc.delay, MaxDeliveryAttempts: 1}, 1, now)
			is.Equal(m.IsDeliverable(tc.at), tc.want) // a stored message is deliverable once its delay has passed
		})
	}
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

func TestNewMessage_Resolve_DelayNotShorterThanQueueDefaultTTL(t *testing.T) {
	t.Parallel()
	queue := domain.Queue{ID: domain.ID{1}, Name: "emails", Settings: domain.Settings{
		VisibilityTimeout: 30 * time.Second, MaxDeliveryAttempts: 5, DefaultMessageTTL: time.Hour,
	}}
	cases := []struct {
		name    string
		message domain.NewMessage
		want    domain.Code
	}{
		{name: "delay 1s shorter than the default", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(time.Hour - time.Second)}},
		{name: "delay equal to the default", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(time.Hour)}, want: domain.CodeInvalidDelay},
		{name: "delay longer than the default", message: domain.NewMessage{Priority: domain.PriorityLow, Delay: new(2 * time.Hour)}, want: domain.CodeInvalidDelay},
		{name: "the request ttl decides, not the default", message: domain.NewMessage{Priority: domain.PriorityLow, TTL: new(3 * time.Hour), Delay: new(2 * time.Hour)}},
		{name: "no delay", message: domain.NewMessage{Priority: domain.PriorityLow}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			_, err := tc.message.Resolve(queue, domain.ID{2})
			is.Equal(codeOf(err), tc.want) // the delay must be shorter than the lifetime the message takes
		})
	}
}

func TestValidateDelay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		delay time.Duration
		want  domain.Code
	}{
		{name: "zero", delay: 0},
		{name: "one second", delay: time.Second},
		{name: "the longest", delay: maxDelay},
		{name: "negative", delay: -time.Second, want: domain.CodeInvalidDelay},
		{name: "one nanosecond", delay: time.Nanosecond, want: domain.CodeInvalidDelay},
		{name: "1500ms", delay: 1500 * time.Millisecond, want: domain.CodeInvalidDelay},
		{name: "thirty days", delay: maxDelay + time.Second, want: domain.CodeInvalidDelay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateDelay(tc.delay)), tc.want) // whole seconds from 0 to 2,591,999
		})
	}
}

func TestValidateNewMessages_BatchSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		size int
		want domain.Code
	}{
		{size: 0, want: domain.CodeInvalidBatchSize},
		{size: 1},
		{size: 1000},
		{size: 1001, want: domain.CodeInvalidBatchSize},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.size), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			messages := slices.Repeat([]domain.NewMessage{{Payload: "x", Priority: domain.PriorityLow}}, tc.size)
			err := domain.ValidateNewMessages(messages)
			is.Equal(codeOf(err), tc.want) // 1 to 1,000 messages
			var entry *domain.EntryError
			is.True(!errors.As(err, &entry)) // a size error names no entry
		})
	}
}

func TestValidateNewMessages_FirstBadEntry(t *testing.T) {
	t.Parallel()
	good := domain.NewMessage{Payload: "x", Priority: domain.PriorityLow}
	cases := []struct {
		name      string
		messages  []domain.NewMessage
		wantIndex int
		wantCode  domain.Code
	}{
		{name: "the only entry", messages: []domain.NewMessage{{Payload: "x"}}, wantIndex: 0, wantCode: domain.CodeInvalidPriority},
		{name: "the fourth entry", messages: []domain.NewMessage{good, good, good, {Priority: domain.PriorityLow, TTL: new(time.Duration(0))}}, wantIndex: 3, wantCode: domain.CodeInvalidTTL},
		{name: "the lowest of two bad entries", messages: []domain.NewMessage{good, {Priority: domain.PriorityLow, Delay: new(-time.Second)}, {Payload: "x"}}, wantIndex: 1, wantCode: domain.CodeInvalidDelay},
		{name: "the last of 1,000", messages: append(slices.Repeat([]domain.NewMessage{good}, 999), domain.NewMessage{Priority: 9}), wantIndex: 999, wantCode: domain.CodeInvalidPriority},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			err := domain.ValidateNewMessages(tc.messages)
			var entry *domain.EntryError
			is.True(errors.As(err, &entry))          // the error names an entry
			is.Equal(entry.Index, tc.wantIndex)      // the first failing one
			is.Equal(codeOf(err), tc.wantCode)       // with the code of its field
			is.Equal(codeOf(entry.Err), tc.wantCode) // which the entry's error carries
		})
	}
}
