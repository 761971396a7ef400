package domain

import (
	"encoding/hex"
	"errors"
)

// ID identifies a queue or a message, or names one delivery as a receipt handle. It holds the
// 16 bytes of a UUID: version 7 for queues and messages, version 4 for receipt handles.
type ID [16]byte

// errInvalidID is returned by ParseID; callers translate it into the code of their context.
var errInvalidID = errors.New("not a canonical UUID")

// ParseID accepts only the canonical spelling of a UUID: 36 characters, 8-4-4-4-12
// hexadecimal digits in either case. Braces, a urn:uuid: prefix and the 32-digit form are
// rejected so that one ID has one spelling in addresses.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, errInvalidID
	}
	groups := [5][2]int{{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}}
	at := 0
	for _, g := range groups {
		n, err := hex.Decode(id[at:], []byte(s[g[0]:g[1]]))
		if err != nil {
			return ID{}, errInvalidID
		}
		at += n
	}
	return id, nil
}

// String returns the canonical lowercase spelling.
func (id ID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], id[10:16])
	return string(b[:])
}

// IsZero reports whether id is the all-zero UUID, which Retsu never issues.
func (id ID) IsZero() bool { return id == ID{} }

// MarshalText encodes the canonical spelling, so IDs appear as strings in JSON.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// MarshalBinary encodes the 16 bytes of the UUID, which encoding/gob uses: instances
// forward rounds to each other as gob (adapters/postgres/forward.go).
func (id ID) MarshalBinary() ([]byte, error) { return id[:], nil }

var errIDLength = errors.New("an ID is 16 bytes")

// UnmarshalBinary decodes what MarshalBinary encoded: exactly 16 bytes.
func (id *ID) UnmarshalBinary(data []byte) error {
	if len(data) != len(id) {
		return errIDLength
	}
	copy(id[:], data)
	return nil
}
