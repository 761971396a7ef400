package domain_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

func TestAttributes_Names_InByteOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a := domain.Attributes{"b": {}, "B": {}, "a": {}, "aa": {}, "_": {}}
	is.Equal(a.Names(), []string{"B", "_", "a", "aa", "b"}) // ascending byte order, uppercase before lowercase
}

func TestAttributes_Names_Empty(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(len(domain.Attributes(nil).Names()), 0) // no attributes, no names
}

func TestAttributes_Equal(t *testing.T) {
	t.Parallel()
	text := domain.Attribute{DataType: "String", StringValue: "v"}
	binary := domain.Attribute{DataType: "Binary", BinaryValue: []byte{1, 2}}
	cases := []struct {
		name string
		a, b domain.Attributes
		want bool
	}{
		{name: "both nil", a: nil, b: nil, want: true},
		{name: "nil and empty", a: nil, b: domain.Attributes{}, want: true},
		{name: "same names and values", a: domain.Attributes{"t": text, "b": binary}, b: domain.Attributes{"b": binary, "t": text}, want: true},
		{name: "binary value copied", a: domain.Attributes{"b": binary}, b: domain.Attributes{"b": {DataType: "Binary", BinaryValue: []byte{1, 2}}}, want: true},
		{name: "nil and one", a: nil, b: domain.Attributes{"t": text}, want: false},
		{name: "other name", a: domain.Attributes{"t": text}, b: domain.Attributes{"u": text}, want: false},
		{name: "other data type", a: domain.Attributes{"t": text}, b: domain.Attributes{"t": {DataType: "Number", StringValue: "v"}}, want: false},
		{name: "other string value", a: domain.Attributes{"t": text}, b: domain.Attributes{"t": {DataType: "String", StringValue: "w"}}, want: false},
		{name: "other binary value", a: domain.Attributes{"b": binary}, b: domain.Attributes{"b": {DataType: "Binary", BinaryValue: []byte{1, 3}}}, want: false},
		{name: "one more", a: domain.Attributes{"t": text}, b: domain.Attributes{"t": text, "b": binary}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			is.Equal(tc.a.Equal(tc.b), tc.want) // the same names with the same values; nil equals empty
			is.Equal(tc.b.Equal(tc.a), tc.want) // whichever side asks
		})
	}
}
