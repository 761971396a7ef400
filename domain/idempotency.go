package domain

import (
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// The rules of idempotency keys.
const (
	MaxIdempotencyKeyLength     = 255
	DefaultIdempotencyRetention = 24 * time.Hour
)

// ValidateIdempotencyKey checks a key: 1 to 255 characters, each visible ASCII (0x21 to
// 0x7E). It returns an *Error with invalid_idempotency_key.
func ValidateIdempotencyKey(key string) error {
	if len(key) == 0 || len(key) > MaxIdempotencyKeyLength {
		return errInvalidIdempotencyKey
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return errInvalidIdempotencyKey
		}
	}
	return nil
}

var errInvalidIdempotencyKey = invalid(CodeInvalidIdempotencyKey,
	"Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)")

// Fingerprint identifies a request for the idempotency rule: two requests with one key are
// the same request when their fingerprints are equal, that is when they came by the same
// route (batch or single) with the same fields and values, in the same order of messages.
type Fingerprint [sha256.Size]byte

// FingerprintOf returns the fingerprint of an enqueue request. A field given with its
// default value differs from the field left out, as the two requests differ in their fields.
func FingerprintOf(batch bool, messages []NewMessage) Fingerprint {
	h := sha256.New()
	var buf []byte
	buf = binary.AppendUvarint(buf, boolBit(batch))
	buf = binary.AppendUvarint(buf, uint64(len(messages)))
	for _, n := range messages {
		buf = appendString(buf, n.Payload)
		buf = binary.AppendUvarint(buf, uint64(n.Priority))
		buf = appendOptionalDuration(buf, n.TTL)
		buf = appendOptionalDuration(buf, n.Delay)
		buf = binary.AppendUvarint(buf, uint64(len(n.Attributes)))
		for _, name := range n.Attributes.Names() {
			a := n.Attributes[name]
			buf = appendString(buf, name)
			buf = appendString(buf, a.DataType)
			buf = appendString(buf, a.StringValue)
			buf = appendString(buf, string(a.BinaryValue))
		}
		h.Write(buf)
		buf = buf[:0]
	}
	h.Write(buf)
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

func appendOptionalDuration(buf []byte, d *time.Duration) []byte {
	if d == nil {
		return binary.AppendUvarint(buf, 0)
	}
	return binary.AppendVarint(binary.AppendUvarint(buf, 1), int64(*d))
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
