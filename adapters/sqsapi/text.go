package sqsapi

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
)

// text is a JSON string of a request that also remembers whether the JSON held a lone
// surrogate escape (\ud800 without its pair): encoding/json decodes one as U+FFFD, which
// would store a character the client did not send. The action refuses such a string, with
// the error of its field, instead of storing it changed.
type text struct {
	value string
	// loneSurrogate is the first unpaired surrogate that the JSON escaped, or 0.
	loneSurrogate rune
}

// UnmarshalJSON decodes a JSON string and looks for lone surrogate escapes in it.
func (t *text) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &t.value); err != nil {
		return err
	}
	t.loneSurrogate = loneSurrogate(data)
	return nil
}

// loneSurrogate returns the first \uXXXX escape of the JSON string quoted that is a
// surrogate without its pair, or 0. quoted is a valid JSON string.
func loneSurrogate(quoted []byte) rune {
	for i := 0; i < len(quoted); i++ {
		if quoted[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if quoted[i] != 'u' {
			continue
		}
		r := escapedRune(quoted[i+1 : i+5])
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 || i+6 >= len(quoted) || quoted[i+1] != '\\' || quoted[i+2] != 'u' {
			return r // a low surrogate first, or a high one without an escape after it
		}
		if low := escapedRune(quoted[i+3 : i+7]); utf16.DecodeRune(r, low) == 0xFFFD {
			return r // a high surrogate before an escape that is not a low one
		}
		i += 6
	}
	return 0
}

// escapedRune reads the four hexadecimal digits of a \uXXXX escape.
func escapedRune(hex []byte) rune {
	n, _ := strconv.ParseUint(string(hex), 16, 16) // a valid JSON string has four digits
	return rune(n)
}
