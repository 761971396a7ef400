package httpapi

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestParseWholeNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		number string
		want   int64
	}{
		{"30", 30},
		{"30.0", 30},
		{"3e1", 30},
		{"3E1", 30},
		{"300e-2", 3},
		{"0.03e2", 3},
		{"1E+1", 10},
		{"0", 0},
		{"0.0", 0},
		{"0e5", 0},
		{"0e100", 0},
		{"0.000e-99999999", 0},
		{"0E+99999999999999999999", 0},
		{"1", 1},
		{"2147483647", 2147483647},
		{"2147483647.000", 2147483647},
		{"2.147483647e9", 2147483647},
		{"2147483648", -1},
		{"12345678901", -1},
		{"-1", -1},
		{"-0", 0},
		{"-0.0e7", 0},
		{"0.5", -1},
		{"1.5", -1},
		{"30.5", -1},
		{"1e400", -1},
		{"1e-400", -1},
		{"1e-1", -1},
		{"1.000000000000000000001", -1},
		{"99999999999999999999", -1},
	}
	for _, tc := range tests {
		t.Run(tc.number, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			is.Equal(parseWholeNumber(tc.number), tc.want) // the exact whole value, or -1
		})
	}
}

// FuzzParseWholeNumber checks parseWholeNumber against exact rational arithmetic on every
// JSON number: equal for whole numbers from 0 to 2^31-1, negative for all others. Zero must
// come out as 0 however it is spelled: delays and waits accept it.
func FuzzParseWholeNumber(f *testing.F) {
	for _, seed := range []string{"30", "30.0", "3e1", "300e-2", "0.5", "1e400", "2147483647", "2147483648", "-1", "0", "1E+1", "1.000000000000000000001", "0e999", "0e100", "0E-99999999999999999999", "10e-1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, number string) {
		if !isJSONNumber(number) {
			t.Skip()
		}
		if isZero(number) {
			if got := parseWholeNumber(number); got != 0 {
				t.Fatalf("parseWholeNumber(%q) = %d, want 0", number, got)
			}
			return
		}
		if exponentTooLarge(number) {
			t.Skip()
		}
		exact, ok := new(big.Rat).SetString(number)
		if !ok {
			t.Fatalf("big.Rat refuses the JSON number %q", number)
		}
		got := parseWholeNumber(number)
		inRange := exact.IsInt() && exact.Sign() > 0 && exact.Num().IsInt64() && exact.Num().Int64() <= 1<<31-1
		switch {
		case inRange && got != exact.Num().Int64():
			t.Fatalf("parseWholeNumber(%q) = %d, want %s", number, got, exact.Num())
		case !inRange && got >= 0:
			t.Fatalf("parseWholeNumber(%q) = %d, want a negative value for %s", number, got, exact.RatString())
		}
	})
}

// isJSONNumber reports whether s is one JSON number and nothing else.
func isJSONNumber(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return false
	}
	var n json.Number
	return json.Valid([]byte(s)) && json.Unmarshal([]byte(s), &n) == nil
}

// isZero reports whether the JSON number s has no digit but 0 before its exponent, whatever
// the exponent: big.Rat could not read the largest ones.
func isZero(s string) bool {
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	return strings.Trim(mantissa, "-0.") == ""
}

// exponentTooLarge keeps the exact reference cheap.
func exponentTooLarge(s string) bool {
	_, exponent, found := strings.Cut(strings.ToLower(s), "e")
	if !found {
		return false
	}
	e, err := strconv.Atoi(exponent)
	return err != nil || e > 10000 || e < -10000
}

func TestHasLoneSurrogate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string // a JSON string as written
		want bool
	}{
		{"no escape", `"abc"`, false},
		{"empty", `""`, false},
		{"BMP escape", `"\u00e9"`, false},
		{"NUL escape", `"\u0000"`, false},
		{"surrogate pair", `"\ud83d\ude00"`, false},
		{"surrogate pair in uppercase", `"\uD83D\uDE00"`, false},
		{"two surrogate pairs", `"\ud83d\ude00\ud83d\ude01"`, false},
		{"surrogate pair among text", `"a\ud83d\ude00b"`, false},
		{"escaped backslash before u", `"\\ud800"`, false},
		{"escaped backslash before a pair's half", `"\\\ud83d\ude00"`, false},
		{"escaped quote before u", `"\"ud800"`, false},
		{"lone high", `"\ud800"`, true},
		{"lone high in uppercase", `"\uD800"`, true},
		{"lone low", `"\udc00"`, true},
		{"lone high at the end after text", `"abc\udbff"`, true},
		{"lone high before text", `"\ud800abcdef"`, true},
		{"high then high", `"\ud800\ud800"`, true},
		{"high then BMP escape", `"\ud800\u0041"`, true},
		{"low then high", `"\udc00\ud800"`, true},
		{"pair then lone low", `"\ud83d\ude00\ude00"`, true},
		{"escaped backslash then lone high", `"\\\ud800"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			is.Equal(hasLoneSurrogate([]byte(tc.raw)), tc.want) // whether a half pair is escaped
		})
	}
}

func TestParseObject_KeepsMembersRaw(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	obj, err := parseObject([]byte(` { "payload" : "a" ,"priority":"LOW", "ttl_seconds" : 60 } `), enqueueFields...)

	is.NoErr(err)                              // a well-formed object with allowed members
	is.Equal(len(obj), 3)                      // every member
	is.Equal(string(obj["payload"]), `"a"`)    // a string member, without the spaces around it
	is.Equal(string(obj["ttl_seconds"]), `60`) // a number member, without the spaces around it
}

// typicalEnqueueBody is an enqueue body as clients usually send it.
const typicalEnqueueBody = `{"payload":"{\"to\":\"ada@example.com\",\"template\":\"welcome\",\"locale\":\"en-GB\"}","priority":"HIGH","ttl_seconds":3600}`

func BenchmarkParseObject(b *testing.B) {
	body := []byte(typicalEnqueueBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseObject(body, enqueueFields...); err != nil {
			b.Fatal(err)
		}
	}
}
