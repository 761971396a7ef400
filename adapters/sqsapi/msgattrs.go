package sqsapi

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"regexp"
	"strings"

	"github.com/retsu/retsu/domain"
)

// The limits of a message, as SQS sets them.
const (
	// maxMessageBytes bounds a message: its body and its attributes' names, types and
	// values, and a batch's messages together. It is SQS's limit, 1 MiB, and Retsu's own:
	// the native API takes bodies of up to 1 MiB.
	maxMessageBytes   = 1 << 20
	maxMessageAttrs   = 10
	maxAttrNameLength = 256
	maxAttrTypeLength = 256
	priorityAttribute = "Priority"
	// traceHeaderAttribute is the name under which a message's AWSTraceHeader system
	// attribute is stored among its attributes: a name that no message attribute may have
	// (they may not start with "AWS."), so it never mixes with them.
	traceHeaderAttribute = "AWS.TraceHeader"
	binaryTransportType  = 2
	stringTransportType  = 1
)

// attributeValue is a message attribute as the SQS JSON protocol carries it; BinaryValue
// is base64 in JSON.
type attributeValue struct {
	DataType         string
	StringValue      *string  `json:",omitempty"`
	BinaryValue      []byte   `json:",omitempty"`
	StringListValues []string `json:",omitempty"`
	BinaryListValues [][]byte `json:",omitempty"`
	// loneSurrogate is the unpaired surrogate that a request's StringValue escaped, or 0
	// (see text).
	loneSurrogate rune
}

// UnmarshalJSON decodes an attribute of a request, remembering a lone surrogate escape of
// its StringValue.
func (v *attributeValue) UnmarshalJSON(data []byte) error {
	type plain attributeValue // without this method
	var in struct {
		plain
		StringValue *text
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*v = attributeValue(in.plain)
	if in.StringValue != nil {
		v.StringValue, v.loneSurrogate = &in.StringValue.value, in.StringValue.loneSurrogate
	}
	return nil
}

// attributeName is SQS's rule for the names of message attributes: letters, digits, _ - .,
// at most 256 of them.
var attributeName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// numberValue is a decimal number, as a Number attribute holds.
var numberValue = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// messageAttributes checks the attributes of a message to send and returns them as Retsu
// stores them, with the priority that the String attribute Priority gives (MEDIUM without
// one) and their size, which counts towards the message's.
func messageAttributes(in map[string]attributeValue) (domain.Attributes, domain.Priority, int, error) {
	if len(in) > maxMessageAttrs {
		return nil, 0, 0, fail(errInvalidParameterValue, "Number of message attributes [%d] exceeds the allowed maximum [%d].", len(in), maxMessageAttrs)
	}
	priority, size := domain.PriorityMedium, 0
	var stored domain.Attributes
	for name, value := range in {
		attribute, err := messageAttribute(name, value)
		if err != nil {
			return nil, 0, 0, err
		}
		if name == priorityAttribute {
			if priority, err = priorityOf(attribute); err != nil {
				return nil, 0, 0, err
			}
		}
		if stored == nil {
			stored = domain.Attributes{}
		}
		stored[name] = attribute
		size += len(name) + len(attribute.DataType) + len(attribute.StringValue) + len(attribute.BinaryValue)
	}
	return stored, priority, size, nil
}

// messageAttribute checks one attribute.
func messageAttribute(name string, v attributeValue) (domain.Attribute, error) {
	lower := strings.ToLower(name)
	if len(name) > maxAttrNameLength || !attributeName.MatchString(name) || strings.HasPrefix(lower, "aws.") ||
		strings.HasPrefix(lower, "amazon.") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return domain.Attribute{}, fail(errInvalidParameterValue, "Message (user) attribute name '%s' is invalid.", name)
	}
	if v.StringListValues != nil || v.BinaryListValues != nil {
		return domain.Attribute{}, fail(errInvalidParameterValue, "Message attribute '%s': StringListValues and BinaryListValues are not supported.", name)
	}
	isBinary, err := dataType(name, v.DataType)
	if err != nil {
		return domain.Attribute{}, err
	}
	empty := fail(errInvalidParameterValue, "Message attribute '%s' must contain a non-empty message attribute value for message attribute type '%s'.", name, v.DataType)
	if isBinary {
		if len(v.BinaryValue) == 0 || v.StringValue != nil {
			return domain.Attribute{}, empty
		}
		return domain.Attribute{DataType: v.DataType, BinaryValue: v.BinaryValue}, nil
	}
	if v.StringValue == nil || *v.StringValue == "" || v.BinaryValue != nil {
		return domain.Attribute{}, empty
	}
	if strings.HasPrefix(v.DataType, "Number") && !numberValue.MatchString(*v.StringValue) {
		return domain.Attribute{}, fail(errInvalidParameterValue, "Can't cast message attribute '%s' value %q to a number.", name, *v.StringValue)
	}
	if v.loneSurrogate != 0 {
		return domain.Attribute{}, fail(errInvalidParameterValue, "Message attribute '%s' holds the lone surrogate \\u%04x, which is no character.", name, v.loneSurrogate)
	}
	if bad, ok := invalidCharacter(*v.StringValue); ok {
		return domain.Attribute{}, fail(errInvalidParameterValue, "Message attribute '%s' holds the character %#U, which SQS does not allow.", name, bad)
	}
	return domain.Attribute{DataType: v.DataType, StringValue: *v.StringValue}, nil
}

// dataType checks an attribute's data type, String, Number or Binary with an optional
// .custom suffix, and reports whether its values travel as binary.
func dataType(name, t string) (isBinary bool, err error) {
	base, custom, hasCustom := strings.Cut(t, ".")
	if len(t) > maxAttrTypeLength || hasCustom && custom == "" || base != "String" && base != "Number" && base != "Binary" {
		return false, fail(errInvalidParameterValue, "The type of message (user) attribute '%s' is invalid: it must be String, Number or Binary, optionally followed by .custom.", name)
	}
	return base == "Binary", nil
}

// priorityOf returns the priority that the attribute Priority gives.
func priorityOf(a domain.Attribute) (domain.Priority, error) {
	p, err := domain.ParsePriority(a.StringValue)
	if a.DataType != "String" || err != nil {
		return 0, fail(errInvalidParameterValue, "The message attribute Priority must be a String attribute of HIGH, MEDIUM or LOW.")
	}
	return p, nil
}

// checkBody checks a message body: present, and of the characters SQS allows, which a
// lone surrogate escape is not.
func checkBody(body *text) error {
	if body == nil || body.value == "" {
		return fail(errMissingParameter, "The request must contain the parameter MessageBody.")
	}
	bad, ok := invalidCharacter(body.value)
	if body.loneSurrogate != 0 {
		bad, ok = body.loneSurrogate, true
	}
	if ok {
		return fail(errInvalidMessageContents, "Invalid binary character %#U was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.", bad)
	}
	return nil
}

// invalidCharacter returns the first character of s that SQS does not allow in a body or
// a String value: those of XML 1.0.
func invalidCharacter(s string) (rune, bool) {
	for _, r := range s {
		allowed := r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
		if !allowed {
			return r, true
		}
	}
	return 0, false
}

// md5Hex returns the hexadecimal MD5 of s: MD5OfMessageBody, MD5OfBody. SQS's digests
// are MD5, which the SDKs verify; they guard against corruption, not tampering.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// md5OfAttributes returns MD5OfMessageAttributes as SQS computes it, or "" for no
// attributes: for each attribute in ascending order of name, the name, the data type, one
// byte of transport type (1 for String and Number, 2 for Binary) and the value, each but
// the transport type as a 4-byte big-endian length and its bytes.
func md5OfAttributes(attributes domain.Attributes) string {
	if len(attributes) == 0 {
		return ""
	}
	digest := md5.New()
	field := func(b []byte) {
		_ = binary.Write(digest, binary.BigEndian, uint32(len(b)))
		digest.Write(b)
	}
	for _, name := range attributes.Names() {
		a := attributes[name]
		field([]byte(name))
		field([]byte(a.DataType))
		if strings.HasPrefix(a.DataType, "Binary") {
			digest.Write([]byte{binaryTransportType})
			field(a.BinaryValue)
		} else {
			digest.Write([]byte{stringTransportType})
			field([]byte(a.StringValue))
		}
	}
	return hex.EncodeToString(digest.Sum(nil))
}

// toAttributeValues returns stored attributes in the SQS JSON shape.
func toAttributeValues(attributes domain.Attributes) map[string]attributeValue {
	out := make(map[string]attributeValue, len(attributes))
	for name, a := range attributes {
		v := attributeValue{DataType: a.DataType}
		if strings.HasPrefix(a.DataType, "Binary") {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = &a.StringValue
		}
		out[name] = v
	}
	return out
}

// selectAttributes returns the attributes that a ReceiveMessage's MessageAttributeNames
// ask for: All or .*, a name, or a prefix followed by .* ("order.*").
func selectAttributes(attributes domain.Attributes, names []string) domain.Attributes {
	var selected domain.Attributes
	for name, a := range attributes {
		if name == traceHeaderAttribute {
			continue
		}
		for _, want := range names {
			prefix, isPrefix := strings.CutSuffix(want, ".*")
			if want == "All" || want == ".*" || want == name || isPrefix && strings.HasPrefix(name, prefix+".") {
				if selected == nil {
					selected = domain.Attributes{}
				}
				selected[name] = a
				break
			}
		}
	}
	return selected
}

// The message system attribute that Retsu keeps: the X-Ray trace header.
const sysTraceHeader = "AWSTraceHeader"

// traceHeader checks a message's system attributes, of which SQS accepts only
// AWSTraceHeader, a non-empty String, and returns that header, or "" without one. It does
// not count towards the message's size, as in SQS.
func traceHeader(in map[string]attributeValue) (string, error) {
	var header string
	for name, v := range in {
		if name != sysTraceHeader {
			return "", fail(errInvalidParameterValue, "Message system attribute name '%s' is invalid: the only message system attribute is %s.", name, sysTraceHeader)
		}
		if v.DataType != "String" || v.StringValue == nil || *v.StringValue == "" || v.BinaryValue != nil ||
			v.StringListValues != nil || v.BinaryListValues != nil {
			return "", fail(errInvalidParameterValue, "The message system attribute %s must be a non-empty String.", sysTraceHeader)
		}
		if bad, ok := invalidCharacter(*v.StringValue); ok || v.loneSurrogate != 0 {
			return "", fail(errInvalidParameterValue, "The message system attribute %s holds the character %#U, which SQS does not allow.", sysTraceHeader, max(bad, v.loneSurrogate))
		}
		header = *v.StringValue
	}
	return header, nil
}

// splitTraceHeader returns a message's stored attributes without its trace header, and
// the trace header as the system attribute it was sent as (nil without one).
func splitTraceHeader(stored domain.Attributes) (attributes, system domain.Attributes) {
	header, ok := stored[traceHeaderAttribute]
	if !ok {
		return stored, nil
	}
	attributes = maps.Clone(stored)
	delete(attributes, traceHeaderAttribute)
	return attributes, domain.Attributes{sysTraceHeader: header}
}
