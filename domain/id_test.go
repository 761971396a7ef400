package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// canonicalID is a UUID version 7 in its canonical lowercase spelling, and canonicalBytes
// its 16 bytes.
const canonicalID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

var canonicalBytes = domain.ID{
	0x01, 0x90, 0xa1, 0xb2, 0xc3, 0xd4, 0x7e, 0x5f,
	0x8a, 0x9b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x5b,
}

// mustParseID parses s or fails the test.
func mustParseID(t *testing.T, s string) domain.ID {
	t.Helper()
	id, err := domain.ParseID(s)
	if err != nil {
		t.Fatalf("ParseID(%q): %v", s, err)
	}
	return id
}

func TestParseID_AcceptsCanonicalSpellingInEitherCase(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input string
	}{
		{name: "lowercase", input: canonicalID},
		{name: "uppercase", input: strings.ToUpper(canonicalID)},
		{name: "mixed case", input: "0190A1b2-C3d4-7E5f-8A9b-0C1d2E3f4A5b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			id, err := domain.ParseID(tc.input)
			is.NoErr(err)                      // 8-4-4-4-12 hex digits in either case is canonical
			is.Equal(id, canonicalBytes)       // every spelling decodes to the same 16 bytes
			is.Equal(id.String(), canonicalID) // String gives the lowercase spelling back
		})
	}
}

func TestParseID_RejectsOtherSpellings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input string
	}{
		{name: "empty", input: ""},
		{name: "braces", input: "{" + canonicalID + "}"},
		{name: "urn prefix", input: "urn:uuid:" + canonicalID},
		{name: "32 digits without hyphens", input: strings.ReplaceAll(canonicalID, "-", "")},
		{name: "first hyphen one early", input: "0190a1b-2c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{name: "last hyphen one late", input: "0190a1b2-c3d4-7e5f-8a9b0-c1d2e3f4a5b"},
		{name: "extra hyphen in last group", input: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a-b"},
		{name: "first hyphen replaced by a digit", input: "0190a1b20c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{name: "second hyphen replaced by a digit", input: "0190a1b2-c3d407e5f-8a9b-0c1d2e3f4a5b"},
		{name: "third hyphen replaced by a digit", input: "0190a1b2-c3d4-7e5f08a9b-0c1d2e3f4a5b"},
		{name: "fourth hyphen replaced by a digit", input: "0190a1b2-c3d4-7e5f-8a9b00c1d2e3f4a5b"},
		{name: "underscores for hyphens", input: strings.ReplaceAll(canonicalID, "-", "_")},
		{name: "hyphens only", input: strings.Repeat("-", 36)},
		{name: "non-hex letter", input: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g"},
		{name: "non-hex in first group", input: "z190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{name: "space inside", input: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5 "},
		{name: "plus sign", input: "0190a1b2-c3d4-7e5f-8a9b-+c1d2e3f4a5b"},
		{name: "35 characters", input: canonicalID[:35]},
		{name: "37 characters", input: canonicalID + "0"},
		{name: "trailing newline", input: canonicalID + "\n"},
		{name: "leading space", input: " " + canonicalID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			id, err := domain.ParseID(tc.input)
			is.True(err != nil)  // only the 36-character 8-4-4-4-12 spelling is an ID
			is.True(id.IsZero()) // a rejected input yields no ID
		})
	}
}

func TestID_String_IsCanonicalLowercase(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		id   domain.ID
		want string
	}{
		{name: "zero", id: domain.ID{}, want: "00000000-0000-0000-0000-000000000000"},
		{name: "every byte set", id: canonicalBytes, want: canonicalID},
		{name: "all ones", id: domain.ID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, want: "ffffffff-ffff-ffff-ffff-ffffffffffff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.id.String(), tc.want)        // 8-4-4-4-12 lowercase hex
			is.Equal(mustParseID(t, tc.want), tc.id) // and it parses back to the same ID
		})
	}
}

func TestID_MarshalText_GivesCanonicalString(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	id := mustParseID(t, strings.ToUpper(canonicalID))

	text, err := id.MarshalText()
	is.NoErr(err)                       // encoding an ID cannot fail
	is.Equal(string(text), canonicalID) // the text is the canonical lowercase spelling

	body, err := json.Marshal(struct {
		ID domain.ID `json:"id"`
	}{ID: id})
	is.NoErr(err)                                      // an ID is JSON-encodable
	is.Equal(string(body), `{"id":"`+canonicalID+`"}`) // IDs appear as strings in JSON, not byte arrays
}

func TestID_IsZero(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		id   domain.ID
		want bool
	}{
		{name: "zero value", id: domain.ID{}, want: true},
		{name: "parsed zero UUID", id: mustParseID(t, "00000000-0000-0000-0000-000000000000"), want: true},
		{name: "last byte set", id: mustParseID(t, "00000000-0000-0000-0000-000000000001")},
		{name: "first byte set", id: domain.ID{1}},
		{name: "canonical", id: canonicalBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.id.IsZero(), tc.want) // only all 16 bytes zero is the zero ID
		})
	}
}

func TestID_MarshalBinary_RoundTripsAndRefusesOtherLengths(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	id := mustParseID(t, canonicalID)

	data, err := id.MarshalBinary()
	is.NoErr(err)           // encoding an ID cannot fail
	is.Equal(len(data), 16) // the 16 bytes of the UUID, not its spelling
	var back domain.ID
	is.NoErr(back.UnmarshalBinary(data)) // what MarshalBinary gives decodes
	is.Equal(back, id)                   // to the same ID

	is.True(back.UnmarshalBinary(data[:15]) != nil)       // 15 bytes are no ID
	is.True(back.UnmarshalBinary(append(data, 0)) != nil) // nor are 17
	is.Equal(back, id)                                    // and a refused decoding changes nothing
}
