package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// FuzzParseObject checks the request decoder against encoding/json: parseObject accepts
// exactly the bodies that are one JSON object in valid UTF-8, without a duplicate or unknown
// member, keeps every member's value, refuses all others with invalid_json, and reads a
// string member as encoding/json does unless it escapes a lone surrogate.
func FuzzParseObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		is := is.New(t)
		obj, err := parseObject(body, enqueueFields...)
		want, valid := referenceObject(body, enqueueFields)
		if err != nil {
			is.Equal(domain.ErrorCode(err), codeInvalidJSON) // every refusal is invalid_json
		}
		is.Equal(err == nil, valid) // the decoder accepts exactly the well-formed objects
		if !valid {
			return
		}
		is.Equal(len(obj), len(want)) // with every member
		for name, raw := range want {
			is.Equal(compact(t, obj[name]), compact(t, raw)) // and each member's value
			assertTextAsEncodingJSON(t, obj, name)
		}
	})
}

// referenceObject decodes body with encoding/json and reports whether it is a single JSON
// object in valid UTF-8 whose members are distinct and among allowed.
func referenceObject(body []byte, allowed []string) (map[string]json.RawMessage, bool) {
	var members map[string]json.RawMessage
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if !utf8.Valid(body) || len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(body, &members) != nil {
		return nil, false
	}
	names, ok := memberNames(body)
	if !ok || len(names) != len(members) {
		return nil, false // a member appears twice
	}
	for name := range members {
		if !slices.Contains(allowed, name) {
			return nil, false
		}
	}
	return members, true
}

// memberNames lists the names of the members of the JSON object in body, repeats included.
func memberNames(body []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var names []string
	for dec.More() {
		name, err := dec.Token()
		var value json.RawMessage
		if err != nil || dec.Decode(&value) != nil {
			return nil, false
		}
		names = append(names, name.(string))
	}
	_, err := dec.Token()
	return names, err == nil
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %q: %v", raw, err)
	}
	return b.String()
}

// assertTextAsEncodingJSON checks that text reads a string member as encoding/json does,
// and refuses with invalid_json a member that is not a string or that encoding/json can read
// only by replacing part of it (a lone surrogate).
func assertTextAsEncodingJSON(t *testing.T, obj object, name string) {
	t.Helper()
	is := is.New(t)
	value, present, err := obj.text(name)
	is.True(present) // a member that is there is present
	var want string
	if json.Unmarshal(obj[name], &want) != nil || replacesText(obj[name], want) {
		is.Equal(domain.ErrorCode(err), codeInvalidJSON) // not a string, or not representable: invalid_json
		return
	}
	is.NoErr(err)         // a string member is read
	is.Equal(value, want) // as encoding/json reads it
}

// replacesText reports whether decoded, encoding/json's reading of the JSON string raw,
// holds more replacement characters than raw spells, literally or escaped.
func replacesText(raw json.RawMessage, decoded string) bool {
	spelled := bytes.Count(raw, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
	return strings.Count(decoded, "\uFFFD") > spelled
}
