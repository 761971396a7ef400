package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBodyBytes is the largest request body accepted: 1 MiB.
const MaxBodyBytes = 1 << 20

// readJSONBody checks that the request declares a JSON body and reads it, refusing more
// than MaxBodyBytes whether or not the body announced its length. Returns
// unsupported_media_type, payload_too_large or invalid_json.
func readJSONBody(r *http.Request) ([]byte, error) {
	if !declaresJSON(r) {
		return nil, requestError(codeUnsupportedMediaType, "the request must declare content-type: application/json")
	}
	return readBody(r)
}

// errBodyTooLarge answers a body over MaxBodyBytes.
var errBodyTooLarge = requestError(codePayloadTooLarge, "the request body is larger than 1 MiB")

// readBody reads at most MaxBodyBytes of the body. Returns payload_too_large or invalid_json.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errBodyTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, requestError(codeInvalidJSON, "the request body could not be read")
	}
	if len(body) > MaxBodyBytes {
		return nil, errBodyTooLarge
	}
	return body, nil
}

// declaresJSON reports whether the media type of the request is application/json, in any
// case and with any parameters.
func declaresJSON(r *http.Request) bool {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

// object is a JSON object whose members are kept raw, to be decoded one by one with the
// exact rules of the contract.
type object map[string]json.RawMessage

// errInvalidJSON is the error of every body that is not a single, well-formed JSON object.
func errInvalidJSON(detail string) error { return requestError(codeInvalidJSON, detail) }

// parseObject accepts exactly one JSON object in valid UTF-8, without duplicate member
// names, whose members are all among allowed (compared case-sensitively). Returns
// invalid_json otherwise.
func parseObject(body []byte, allowed ...string) (object, error) {
	if !utf8.Valid(body) {
		return nil, errInvalidJSON("the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errInvalidJSON("the request body must be a JSON object")
	}
	obj := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errInvalidJSON("the request body contains invalid JSON")
		}
		name := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, errInvalidJSON("the request body contains invalid JSON")
		}
		if _, dup := obj[name]; dup {
			return nil, errInvalidJSON(fmt.Sprintf("the field %s appears more than once", quoteField(name)))
		}
		if !slices.Contains(allowed, name) {
			return nil, errInvalidJSON(fmt.Sprintf("the field %s is not accepted here", quoteField(name)))
		}
		obj[name] = value
	}
	if _, err := dec.Token(); err != nil {
		return nil, errInvalidJSON("the request body contains invalid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errInvalidJSON("the request body must hold a single JSON object")
	}
	return obj, nil
}

// quoteField quotes a member name for an error detail, shortened so that a huge name does
// not come back whole.
func quoteField(name string) string {
	const max = 64
	if len(name) > max {
		name = strings.ToValidUTF8(name[:max], "") + "…"
	}
	return strconv.Quote(name)
}

// text returns the string member name. present is false when it is missing. Returns
// invalid_json when the member is not a JSON string (null included) or holds an escaped
// lone surrogate, which has no UTF-8 spelling and could not come back unchanged.
func (o object) text(name string) (value string, present bool, err error) {
	raw, present := o[name]
	if !present {
		return "", false, nil
	}
	if len(raw) == 0 || raw[0] != '"' || hasLoneSurrogate(raw) {
		return "", true, errInvalidJSON(fmt.Sprintf("%s must be a string", name))
	}
	if err := json.Unmarshal(raw, &value); err != nil {
		return "", true, errInvalidJSON(fmt.Sprintf("%s must be a string", name))
	}
	return value, true, nil
}

// wholeNumber returns the number member name when it is a whole number from 0 to 2^31-1,
// and -1 for any other number (fractional, negative, huge), which every range check of the
// domain then refuses with the field's own code. present is false when it is missing.
// Returns invalid_json when the member is not a JSON number (null included).
func (o object) wholeNumber(name string) (value int64, present bool, err error) {
	raw, present := o[name]
	if !present {
		return 0, false, nil
	}
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, true, errInvalidJSON(fmt.Sprintf("%s must be a number", name))
	}
	return parseWholeNumber(string(raw)), true, nil
}

// parseWholeNumber reads a JSON number, already known to be well formed, exactly: it is a
// whole number when no non-zero digit stands after the decimal point once the exponent is
// applied. Zero is 0 whatever its sign and exponent (-0, 0e100). It returns -1 for numbers
// that are not whole or fall outside 0 to 2^31-1.
func parseWholeNumber(number string) int64 {
	const outOfRange = -1
	unsigned, negative := strings.CutPrefix(number, "-")
	mantissa, exponentText, _ := strings.Cut(strings.ToLower(unsigned), "e")
	integer, fraction, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(integer+fraction, "0")
	if digits == "" {
		return 0 // checked first: the exponent of zero does not matter, however large
	}
	if negative {
		return outOfRange
	}
	exponent := 0
	if exponentText != "" {
		e, err := strconv.Atoi(exponentText)
		if err != nil || e > 64 || e < -1<<20 {
			// A huge or a tiny exponent of a number that is not zero: out of every range.
			return outOfRange
		}
		exponent = e
	}
	point := len(integer) + exponent - (len(integer+fraction) - len(digits))
	significant := strings.TrimRight(digits, "0")
	if point < len(significant) || point > 10 {
		return outOfRange
	}
	value, err := strconv.ParseInt(significant+strings.Repeat("0", point-len(significant)), 10, 64)
	if err != nil || value > 1<<31-1 {
		return outOfRange
	}
	return value
}

// hasLoneSurrogate reports whether a raw JSON string escapes half of a UTF-16 surrogate
// pair without the other half.
func hasLoneSurrogate(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return false // no escape at all, the common case: spare the copy below
	}
	s := string(raw)
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++ // an escape such as \\ or \": skip its second character
			continue
		}
		r := escapedUnit(s, i)
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if next := escapedUnit(s, i+6); next < 0xDC00 || next > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// escapedUnit returns the UTF-16 unit of the \uXXXX escape at s[i:], or -1.
func escapedUnit(s string, i int) int {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return -1
	}
	unit, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
	if err != nil {
		return -1
	}
	return int(unit)
}
