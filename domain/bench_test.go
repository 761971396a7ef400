package domain_test

import (
	"strings"
	"testing"

	"github.com/retsu/retsu/domain"
)

func BenchmarkParseID(b *testing.B) {
	inputs := []struct {
		name  string
		input string
		valid bool
	}{
		{name: "lowercase", input: canonicalID, valid: true},
		{name: "uppercase", input: strings.ToUpper(canonicalID), valid: true},
		{name: "rejected non-hex", input: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g"},
		{name: "rejected length", input: "{" + canonicalID + "}"},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := domain.ParseID(in.input); (err == nil) != in.valid {
					b.Fatalf("ParseID(%q): %v", in.input, err)
				}
			}
		})
	}
}

func BenchmarkValidateQueueName(b *testing.B) {
	inputs := []struct {
		name  string
		input string
		valid bool
	}{
		{name: "short", input: "emails", valid: true},
		{name: "64 characters", input: strings.Repeat("a.b-c_d", 9) + "a", valid: true},
		{name: "rejected last character", input: strings.Repeat("a", 63) + "-"},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := domain.ValidateQueueName(in.input); (err == nil) != in.valid {
					b.Fatalf("ValidateQueueName(%q): %v", in.input, err)
				}
			}
		})
	}
}
