package domain_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// The documented ranges, written out as the product documents state them rather than taken
// from the package's constants, so that a changed constant fails these tests.
const (
	day                  = 24 * time.Hour
	maxVisibilityTimeout = 21_600 * time.Second    // 6 hours
	maxMessageTTL        = 2_592_000 * time.Second // 30 days
	maxDelay             = 2_591_999 * time.Second // 30 days less a second
)

func TestValidateQueueName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		queueName string
		want      domain.Code
	}{
		{name: "one letter", queueName: "a"},
		{name: "one digit", queueName: "7"},
		{name: "64 characters", queueName: strings.Repeat("a", 64)},
		{name: "digits only", queueName: "0123456789"},
		{name: "dot inside", queueName: "emails.v2"},
		{name: "underscore inside", queueName: "welcome_emails"},
		{name: "hyphen inside", queueName: "welcome-emails"},
		{name: "every separator inside", queueName: "a.b_c-d"},
		{name: "separators next to each other", queueName: "a._-b"},
		{name: "two characters", queueName: "a1"},

		{name: "empty", queueName: "", want: domain.CodeInvalidQueueName},
		{name: "65 characters", queueName: strings.Repeat("a", 65), want: domain.CodeInvalidQueueName},
		{name: "uppercase first", queueName: "Emails", want: domain.CodeInvalidQueueName},
		{name: "uppercase inside", queueName: "eMails", want: domain.CodeInvalidQueueName},
		{name: "uppercase last of 64", queueName: strings.Repeat("a", 63) + "A", want: domain.CodeInvalidQueueName},
		{name: "leading dot", queueName: ".emails", want: domain.CodeInvalidQueueName},
		{name: "trailing dot", queueName: "emails.", want: domain.CodeInvalidQueueName},
		{name: "leading underscore", queueName: "_emails", want: domain.CodeInvalidQueueName},
		{name: "trailing underscore", queueName: "emails_", want: domain.CodeInvalidQueueName},
		{name: "leading hyphen", queueName: "-emails", want: domain.CodeInvalidQueueName},
		{name: "trailing hyphen", queueName: "emails-", want: domain.CodeInvalidQueueName},
		{name: "single dot", queueName: ".", want: domain.CodeInvalidQueueName},
		{name: "single hyphen", queueName: "-", want: domain.CodeInvalidQueueName},
		{name: "space inside", queueName: "my emails", want: domain.CodeInvalidQueueName},
		{name: "leading space", queueName: " emails", want: domain.CodeInvalidQueueName},
		{name: "trailing space", queueName: "emails ", want: domain.CodeInvalidQueueName},
		{name: "tab inside", queueName: "my\temails", want: domain.CodeInvalidQueueName},
		{name: "NUL inside", queueName: "my\x00emails", want: domain.CodeInvalidQueueName},
		{name: "unicode letter", queueName: "café", want: domain.CodeInvalidQueueName},
		{name: "unicode only", queueName: "メール", want: domain.CodeInvalidQueueName},
		{name: "slash", queueName: "emails/eu", want: domain.CodeInvalidQueueName},
		{name: "other punctuation", queueName: "emails:eu", want: domain.CodeInvalidQueueName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateQueueName(tc.queueName)), tc.want) // 1-64 of a-z 0-9 . _ -, letter or digit at both ends
		})
	}
}

// durationRule is one setting's validator and the code it reports.
type durationRule struct {
	name     string
	validate func(time.Duration) error
	code     domain.Code
	max      time.Duration
}

func TestValidateDurationSettings(t *testing.T) {
	t.Parallel()
	rules := []durationRule{
		{name: "VisibilityTimeout", validate: domain.ValidateVisibilityTimeout, code: domain.CodeInvalidVisibilityTimeout, max: maxVisibilityTimeout},
		{name: "DefaultMessageTTL", validate: domain.ValidateDefaultMessageTTL, code: domain.CodeInvalidDefaultMessageTTL, max: maxMessageTTL},
		{name: "TTL", validate: domain.ValidateTTL, code: domain.CodeInvalidTTL, max: maxMessageTTL},
	}
	for _, rule := range rules {
		cases := []struct {
			name  string
			value time.Duration
			valid bool
		}{
			{name: "zero", value: 0},
			{name: "negative", value: -time.Second},
			{name: "one nanosecond", value: time.Nanosecond},
			{name: "just under one second", value: 999 * time.Millisecond},
			{name: "one second", value: time.Second, valid: true},
			{name: "1500ms", value: 1500 * time.Millisecond},
			{name: "thirty seconds", value: 30 * time.Second, valid: true},
			{name: "max minus one second", value: rule.max - time.Second, valid: true},
			{name: "max", value: rule.max, valid: true},
			{name: "max plus one nanosecond", value: rule.max + time.Nanosecond},
			{name: "max plus one second", value: rule.max + time.Second},
		}
		for _, tc := range cases {
			t.Run(rule.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				want := rule.code
				if tc.valid {
					want = ""
				}
				is.Equal(codeOf(rule.validate(tc.value)), want) // whole seconds from 1 to the documented maximum
			})
		}
	}
}

func TestValidateMaxDeliveryAttempts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		attempts int
		want     domain.Code
	}{
		{attempts: -1, want: domain.CodeInvalidMaxDeliveryAttempts},
		{attempts: 0, want: domain.CodeInvalidMaxDeliveryAttempts},
		{attempts: 1},
		{attempts: 5},
		{attempts: 100},
		{attempts: 101, want: domain.CodeInvalidMaxDeliveryAttempts},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.attempts), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateMaxDeliveryAttempts(tc.attempts)), tc.want) // 1 to 100 deliveries
		})
	}
}

func TestValidateListLimit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		limit int
		want  domain.Code
	}{
		{limit: -1, want: domain.CodeInvalidQuery},
		{limit: 0, want: domain.CodeInvalidQuery},
		{limit: 1},
		{limit: 100},
		{limit: 1000},
		{limit: 1001, want: domain.CodeInvalidQuery},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.limit), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateListLimit(tc.limit)), tc.want) // a page holds 1 to 1000 queues
		})
	}
}

func TestDefaultListLimit_IsValid(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(domain.DefaultListLimit, 100)                      // the contract's default page size
	is.NoErr(domain.ValidateListLimit(domain.DefaultListLimit)) // the default passes its own rule
}

func TestNewQueue_Settings_DefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	defaults := domain.Settings{
		VisibilityTimeout:   30 * time.Second,
		MaxDeliveryAttempts: 5,
		DefaultMessageTTL:   7 * day,
	}
	cases := []struct {
		name   string
		update domain.SettingsUpdate
		want   domain.Settings
	}{
		{
			name: "name only takes every default",
			want: defaults,
		},
		{
			name:   "visibility timeout supplied",
			update: domain.SettingsUpdate{VisibilityTimeout: new(60 * time.Second)},
			want:   domain.Settings{VisibilityTimeout: 60 * time.Second, MaxDeliveryAttempts: 5, DefaultMessageTTL: 7 * day},
		},
		{
			name:   "delivery attempts supplied",
			update: domain.SettingsUpdate{MaxDeliveryAttempts: new(10)},
			want:   domain.Settings{VisibilityTimeout: 30 * time.Second, MaxDeliveryAttempts: 10, DefaultMessageTTL: 7 * day},
		},
		{
			name:   "message lifetime supplied",
			update: domain.SettingsUpdate{DefaultMessageTTL: new(day)},
			want:   domain.Settings{VisibilityTimeout: 30 * time.Second, MaxDeliveryAttempts: 5, DefaultMessageTTL: day},
		},
		{
			name: "everything supplied at the maxima",
			update: domain.SettingsUpdate{
				VisibilityTimeout:   new(maxVisibilityTimeout),
				MaxDeliveryAttempts: new(100),
				DefaultMessageTTL:   new(maxMessageTTL),
			},
			want: domain.Settings{VisibilityTimeout: maxVisibilityTimeout, MaxDeliveryAttempts: 100, DefaultMessageTTL: maxMessageTTL},
		},
		{
			name: "everything supplied at the minima",
			update: domain.SettingsUpdate{
				VisibilityTimeout:   new(time.Second),
				MaxDeliveryAttempts: new(1),
				DefaultMessageTTL:   new(time.Second),
			},
			want: domain.Settings{VisibilityTimeout: time.Second, MaxDeliveryAttempts: 1, DefaultMessageTTL: time.Second},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			got, err := domain.NewQueue{Name: "emails", SettingsUpdate: tc.update}.Settings()
			is.NoErr(err)          // a valid name with valid settings is accepted
			is.Equal(got, tc.want) // supplied settings override, the others take their defaults
		})
	}
}

func TestDefaultSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	want := domain.Settings{VisibilityTimeout: 30 * time.Second, MaxDeliveryAttempts: 5, DefaultMessageTTL: 604_800 * time.Second}
	is.Equal(domain.DefaultSettings(), want) // 30 s, 5 attempts, 7 days, as the product documents say
}

func TestNewQueue_Settings_FirstBrokenRuleDecidesCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input domain.NewQueue
		want  domain.Code
	}{
		{
			name: "missing name before every bad setting",
			input: domain.NewQueue{SettingsUpdate: domain.SettingsUpdate{
				VisibilityTimeout: new(time.Duration(0)), MaxDeliveryAttempts: new(0), DefaultMessageTTL: new(time.Duration(0)),
			}},
			want: domain.CodeInvalidQueueName,
		},
		{
			name: "bad name before every bad setting",
			input: domain.NewQueue{Name: "Emails", SettingsUpdate: domain.SettingsUpdate{
				VisibilityTimeout: new(time.Duration(0)), MaxDeliveryAttempts: new(0), DefaultMessageTTL: new(time.Duration(0)),
			}},
			want: domain.CodeInvalidQueueName,
		},
		{
			name: "visibility timeout before attempts and lifetime",
			input: domain.NewQueue{Name: "emails", SettingsUpdate: domain.SettingsUpdate{
				VisibilityTimeout: new(maxVisibilityTimeout + time.Second), MaxDeliveryAttempts: new(101), DefaultMessageTTL: new(maxMessageTTL + time.Second),
			}},
			want: domain.CodeInvalidVisibilityTimeout,
		},
		{
			name: "attempts before lifetime",
			input: domain.NewQueue{Name: "emails", SettingsUpdate: domain.SettingsUpdate{
				VisibilityTimeout: new(time.Second), MaxDeliveryAttempts: new(101), DefaultMessageTTL: new(1500 * time.Millisecond),
			}},
			want: domain.CodeInvalidMaxDeliveryAttempts,
		},
		{
			name: "lifetime alone",
			input: domain.NewQueue{Name: "emails", SettingsUpdate: domain.SettingsUpdate{
				DefaultMessageTTL: new(1500 * time.Millisecond),
			}},
			want: domain.CodeInvalidDefaultMessageTTL,
		},
		{
			name:  "name alone",
			input: domain.NewQueue{Name: "emails-"},
			want:  domain.CodeInvalidQueueName,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			_, err := tc.input.Settings()
			is.Equal(codeOf(err), tc.want) // checked in the order name, visibility timeout, attempts, lifetime
		})
	}
}

func TestSettingsUpdate_IsEmpty(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		update domain.SettingsUpdate
		want   bool
	}{
		{name: "nothing supplied", update: domain.SettingsUpdate{}, want: true},
		{name: "visibility timeout supplied", update: domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)}},
		{name: "attempts supplied", update: domain.SettingsUpdate{MaxDeliveryAttempts: new(3)}},
		{name: "lifetime supplied", update: domain.SettingsUpdate{DefaultMessageTTL: new(time.Hour)}},
		{name: "supplied zero is still supplied", update: domain.SettingsUpdate{MaxDeliveryAttempts: new(0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.update.IsEmpty(), tc.want) // only an update without any field is empty
		})
	}
}

func TestSettingsUpdate_Validate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		update domain.SettingsUpdate
		want   domain.Code
	}{
		{name: "nothing supplied", update: domain.SettingsUpdate{}},
		{name: "every setting valid", update: domain.SettingsUpdate{
			VisibilityTimeout: new(time.Minute), MaxDeliveryAttempts: new(100), DefaultMessageTTL: new(maxMessageTTL),
		}},
		{name: "visibility timeout zero", update: domain.SettingsUpdate{VisibilityTimeout: new(time.Duration(0))}, want: domain.CodeInvalidVisibilityTimeout},
		{name: "visibility timeout not whole", update: domain.SettingsUpdate{VisibilityTimeout: new(1500 * time.Millisecond)}, want: domain.CodeInvalidVisibilityTimeout},
		{name: "attempts zero", update: domain.SettingsUpdate{MaxDeliveryAttempts: new(0)}, want: domain.CodeInvalidMaxDeliveryAttempts},
		{name: "attempts above 100", update: domain.SettingsUpdate{MaxDeliveryAttempts: new(101)}, want: domain.CodeInvalidMaxDeliveryAttempts},
		{name: "lifetime above 30 days", update: domain.SettingsUpdate{DefaultMessageTTL: new(maxMessageTTL + time.Second)}, want: domain.CodeInvalidDefaultMessageTTL},
		{name: "lifetime negative", update: domain.SettingsUpdate{DefaultMessageTTL: new(-time.Second)}, want: domain.CodeInvalidDefaultMessageTTL},
		{name: "bad visibility timeout reported first", update: domain.SettingsUpdate{
			VisibilityTimeout: new(time.Duration(0)), MaxDeliveryAttempts: new(0), DefaultMessageTTL: new(time.Duration(0)),
		}, want: domain.CodeInvalidVisibilityTimeout},
		{name: "bad attempts reported before bad lifetime", update: domain.SettingsUpdate{
			MaxDeliveryAttempts: new(0), DefaultMessageTTL: new(time.Duration(0)),
		}, want: domain.CodeInvalidMaxDeliveryAttempts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(tc.update.Validate()), tc.want) // each supplied field is checked against its range
		})
	}
}

func TestSettingsUpdate_Apply_ChangesOnlySuppliedFields(t *testing.T) {
	t.Parallel()
	current := domain.Settings{VisibilityTimeout: 45 * time.Second, MaxDeliveryAttempts: 3, DefaultMessageTTL: 2 * time.Hour}
	cases := []struct {
		name   string
		update domain.SettingsUpdate
		want   domain.Settings
	}{
		{
			name: "nothing supplied",
			want: current,
		},
		{
			name:   "visibility timeout",
			update: domain.SettingsUpdate{VisibilityTimeout: new(time.Minute)},
			want:   domain.Settings{VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 3, DefaultMessageTTL: 2 * time.Hour},
		},
		{
			name:   "attempts",
			update: domain.SettingsUpdate{MaxDeliveryAttempts: new(10)},
			want:   domain.Settings{VisibilityTimeout: 45 * time.Second, MaxDeliveryAttempts: 10, DefaultMessageTTL: 2 * time.Hour},
		},
		{
			name:   "lifetime",
			update: domain.SettingsUpdate{DefaultMessageTTL: new(day)},
			want:   domain.Settings{VisibilityTimeout: 45 * time.Second, MaxDeliveryAttempts: 3, DefaultMessageTTL: day},
		},
		{
			name:   "two of three",
			update: domain.SettingsUpdate{VisibilityTimeout: new(time.Minute), DefaultMessageTTL: new(day)},
			want:   domain.Settings{VisibilityTimeout: time.Minute, MaxDeliveryAttempts: 3, DefaultMessageTTL: day},
		},
		{
			name:   "same value again",
			update: domain.SettingsUpdate{MaxDeliveryAttempts: new(3)},
			want:   current,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			got, err := tc.update.Apply(current)
			is.NoErr(err)          // every supplied value is in range
			is.Equal(got, tc.want) // supplied fields replace, the others keep their value
		})
	}
}

func TestSettingsUpdate_Apply_RejectsOutOfRange(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	update := domain.SettingsUpdate{VisibilityTimeout: new(time.Minute), MaxDeliveryAttempts: new(101)}

	_, err := update.Apply(domain.DefaultSettings())

	is.Equal(codeOf(err), domain.CodeInvalidMaxDeliveryAttempts) // a bad field fails the whole update, valid ones included
}
