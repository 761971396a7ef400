package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

func TestValidateIdempotencyKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		key  string
		want domain.Code
	}{
		{name: "one character", key: "a"},
		{name: "a UUID", key: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{name: "255 characters", key: strings.Repeat("k", 255)},
		{name: "the lowest visible character", key: "!"},
		{name: "the highest visible character", key: "~"},
		{name: "every kind of visible character", key: `aZ09!"#$%&'()*+,-./:;<=>?@[\]^_{|}~` + "`"},
		{name: "empty", key: "", want: domain.CodeInvalidIdempotencyKey},
		{name: "256 characters", key: strings.Repeat("k", 256), want: domain.CodeInvalidIdempotencyKey},
		{name: "a space (0x20)", key: "order 42", want: domain.CodeInvalidIdempotencyKey},
		{name: "only a space", key: " ", want: domain.CodeInvalidIdempotencyKey},
		{name: "DEL (0x7F)", key: "order\x7f42", want: domain.CodeInvalidIdempotencyKey},
		{name: "a tab", key: "order\t42", want: domain.CodeInvalidIdempotencyKey},
		{name: "NUL", key: "order\x0042", want: domain.CodeInvalidIdempotencyKey},
		{name: "a newline", key: "order42\n", want: domain.CodeInvalidIdempotencyKey},
		{name: "non-ASCII", key: "commande-é", want: domain.CodeInvalidIdempotencyKey},
		{name: "non-ASCII, 128 characters in 256 bytes", key: strings.Repeat("é", 128), want: domain.CodeInvalidIdempotencyKey},
		{name: "a byte above 0x7F", key: "k\x80", want: domain.CodeInvalidIdempotencyKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(codeOf(domain.ValidateIdempotencyKey(tc.key)), tc.want) // 1 to 255 characters, each 0x21 to 0x7E
		})
	}
}

func TestFingerprintOf_SameRequest_IsEqual(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	request := func() []domain.NewMessage {
		return []domain.NewMessage{
			{Payload: "a", Priority: domain.PriorityHigh, TTL: new(time.Minute), Delay: new(time.Second),
				Attributes: domain.Attributes{"x": {DataType: "String", StringValue: "1"}, "y": {DataType: "Binary", BinaryValue: []byte{1}}}},
			{Payload: "b", Priority: domain.PriorityLow},
		}
	}
	is.Equal(domain.FingerprintOf(true, request()), domain.FingerprintOf(true, request())) // a request built twice has one fingerprint
}

func TestFingerprintOf_DifferentRequests_Differ(t *testing.T) {
	t.Parallel()
	base := func() domain.NewMessage {
		return domain.NewMessage{Payload: "a", Priority: domain.PriorityMedium, TTL: new(time.Minute), Delay: new(time.Second),
			Attributes: domain.Attributes{"x": {DataType: "String", StringValue: "1"}}}
	}
	with := func(change func(*domain.NewMessage)) []domain.NewMessage {
		n := base()
		change(&n)
		return []domain.NewMessage{n}
	}
	other := domain.NewMessage{Payload: "b", Priority: domain.PriorityLow}
	cases := []struct {
		name  string
		batch bool
		other []domain.NewMessage
	}{
		{name: "payload", other: with(func(n *domain.NewMessage) { n.Payload = "b" })},
		{name: "payload empty", other: with(func(n *domain.NewMessage) { n.Payload = "" })},
		{name: "priority", other: with(func(n *domain.NewMessage) { n.Priority = domain.PriorityHigh })},
		{name: "ttl", other: with(func(n *domain.NewMessage) { n.TTL = new(2 * time.Minute) })},
		{name: "ttl omitted", other: with(func(n *domain.NewMessage) { n.TTL = nil })},
		{name: "delay", other: with(func(n *domain.NewMessage) { n.Delay = new(2 * time.Second) })},
		{name: "delay omitted", other: with(func(n *domain.NewMessage) { n.Delay = nil })},
		{name: "attribute value", other: with(func(n *domain.NewMessage) {
			n.Attributes = domain.Attributes{"x": {DataType: "String", StringValue: "2"}}
		})},
		{name: "attribute type", other: with(func(n *domain.NewMessage) {
			n.Attributes = domain.Attributes{"x": {DataType: "Number", StringValue: "1"}}
		})},
		{name: "attribute name", other: with(func(n *domain.NewMessage) {
			n.Attributes = domain.Attributes{"z": {DataType: "String", StringValue: "1"}}
		})},
		{name: "attribute added", other: with(func(n *domain.NewMessage) {
			n.Attributes = domain.Attributes{"x": {DataType: "String", StringValue: "1"}, "y": {DataType: "String", StringValue: "1"}}
		})},
		{name: "attributes omitted", other: with(func(n *domain.NewMessage) { n.Attributes = nil })},
		{name: "binary attribute", other: with(func(n *domain.NewMessage) {
			n.Attributes = domain.Attributes{"x": {DataType: "String", StringValue: "1", BinaryValue: []byte{0}}}
		})},
		{name: "one more message", other: []domain.NewMessage{base(), other}},
		{name: "batch flag", batch: true, other: []domain.NewMessage{base()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.True(domain.FingerprintOf(false, []domain.NewMessage{base()}) != domain.FingerprintOf(tc.batch, tc.other)) // a request that differs in any field is another request
		})
	}
}

func TestFingerprintOf_MessageOrderMatters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := domain.NewMessage{Payload: "a", Priority: domain.PriorityHigh}
	b := domain.NewMessage{Payload: "b", Priority: domain.PriorityHigh}
	is.True(domain.FingerprintOf(true, []domain.NewMessage{a, b}) != domain.FingerprintOf(true, []domain.NewMessage{b, a})) // the same messages in another order are another request
}

func TestFingerprintOf_TTLGivenWithDefaultValueDiffersFromOmitted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	omitted := domain.NewMessage{Payload: "a", Priority: domain.PriorityLow}
	given := domain.NewMessage{Payload: "a", Priority: domain.PriorityLow, TTL: new(domain.DefaultMessageTTL), Delay: new(time.Duration(0))}
	is.True(domain.FingerprintOf(false, []domain.NewMessage{omitted}) != domain.FingerprintOf(false, []domain.NewMessage{given})) // a field given with the default value is not the field left out
}

func TestFingerprintOf_FieldBoundariesAreUnambiguous(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	one := []domain.NewMessage{{Payload: "ab", Priority: domain.PriorityLow, Attributes: domain.Attributes{"c": {DataType: "String", StringValue: "d"}}}}
	two := []domain.NewMessage{{Payload: "a", Priority: domain.PriorityLow, Attributes: domain.Attributes{"bc": {DataType: "String", StringValue: "d"}}}}
	is.True(domain.FingerprintOf(true, one) != domain.FingerprintOf(true, two)) // text moved from one field to the next makes another request
}

func TestFingerprintOf_AttributesInAnyMapOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	attributes := domain.Attributes{}
	for _, name := range []string{"m", "a", "z", "b", "y", "c"} {
		attributes[name] = domain.Attribute{DataType: "String", StringValue: name}
	}
	want := domain.FingerprintOf(false, []domain.NewMessage{{Payload: "p", Priority: domain.PriorityLow, Attributes: attributes}})
	for range 20 {
		copied := domain.Attributes{}
		for name, a := range attributes {
			copied[name] = a
		}
		is.Equal(domain.FingerprintOf(false, []domain.NewMessage{{Payload: "p", Priority: domain.PriorityLow, Attributes: copied}}), want) // attributes count by name, not by map order
	}
}
