package domain

import (
	"maps"
	"slices"
)

// Attribute is a typed value that travels with a message, under a name: SQS's message
// attributes, which the SQS endpoint stores with a message and returns with its deliveries
// and dead letter. The native API neither sets nor shows them; the core keeps them as given.
type Attribute struct {
	// DataType is String, Number or Binary, optionally followed by a custom suffix such as
	// "Number.float".
	DataType    string
	StringValue string
	BinaryValue []byte
}

// Attributes are a message's attributes by name.
type Attributes map[string]Attribute

// Names returns the names in ascending byte order, the order in which the attributes are
// stored and compared.
func (a Attributes) Names() []string { return slices.Sorted(maps.Keys(a)) }

// Equal reports whether a and b hold the same names and values; nil equals empty.
func (a Attributes) Equal(b Attributes) bool {
	return maps.EqualFunc(a, b, func(x, y Attribute) bool {
		return x.DataType == y.DataType && x.StringValue == y.StringValue && slices.Equal(x.BinaryValue, y.BinaryValue)
	})
}
