package sqsapi

import (
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

// The examples of AWS's message-attribute digest.
func TestMD5OfAttributes_MatchesAWSsExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		attributes domain.Attributes
		want       string
	}{
		{"two strings", domain.Attributes{
			"test_attribute_name_2": {DataType: "String", StringValue: "test_attribute_value_2"},
			"test_attribute_name_1": {DataType: "String", StringValue: "test_attribute_value_1"},
		}, "d53f3b558fe951154770f25cb63dbba9"},
		{"binary", domain.Attributes{
			"test_attribute_name": {DataType: "Binary", BinaryValue: []byte("test_attribute_value")},
		}, "23f6bd27ea87aab7dfeadcc9aebee495"},
		{"none", nil, ""},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			is.Equal(md5OfAttributes(test.attributes), test.want) // byte for byte as AWS computes it
		})
	}
}

func TestReceiptHandle_RoundTripsAndNamesItsQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	queueID, otherQueue := domain.ID{1}, domain.ID{2}
	d := domain.Delivery{MessageID: domain.ID{3}, ReceiptHandle: domain.ID{4}}
	text := encodeReceiptHandle(queueID, d)

	handle, err := parseReceiptHandle(&text)
	is.NoErr(err)
	receipt, err := handle.forQueue(queueID)
	_, otherErr := handle.forQueue(otherQueue)

	is.Equal(len(text), 64) // 48 bytes, unpadded base64url
	is.NoErr(err)
	is.Equal(receipt, d.Receipt()) // what Retsu's acknowledge takes
	is.True(otherErr != nil)       // a handle of another queue is refused
}

func TestJustBefore_ListsFromThePrefixOn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	names := []string{"a", "az", "b", "b-1", "b.2", "ba", "c"}

	var listed []string
	after := justBefore("b")
	for _, name := range names {
		if name > after {
			listed = append(listed, name)
		}
	}

	is.Equal(listed, []string{"b", "b-1", "b.2", "ba", "c"}) // the prefix itself first, nothing before it
}
