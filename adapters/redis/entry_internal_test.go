package redis

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
)

func TestDecodings_FollowTheValue(t *testing.T) {
	is := is.New(t)
	q := domain.Queue{ID: domain.ID(uuid.Must(uuid.NewV7())), Name: "orders", Settings: domain.DefaultSettings()}
	first, err := encodeEntry(q)
	is.NoErr(err)
	var d decodings

	got, found := d.decode(first, q.ID)
	is.Equal(found, queueEntry)
	is.Equal(got, q)
	got, found = d.decode(first, q.ID) // the same value again: the remembered decoding
	is.Equal(found, queueEntry)
	is.Equal(got, q)

	q.VisibilityTimeout = 90 * time.Second
	second, err := encodeEntry(q)
	is.NoErr(err)
	got, found = d.decode(second, q.ID) // a new value is decoded, never the old one reused
	is.Equal(found, queueEntry)
	is.Equal(got.VisibilityTimeout, 90*time.Second)

	_, found = d.decode(`{"v":1`, q.ID) // an odd value stays a miss
	is.Equal(found, notAnEntry)
	_, found = d.decode(second, domain.ID(uuid.Must(uuid.NewV7()))) // an entry under another queue's key
	is.Equal(found, notAnEntry)

	deletion, err := encodeDeletion(q.ID)
	is.NoErr(err)
	_, found = d.decode(deletion, q.ID) // the record of a deletion
	is.Equal(found, deletionEntry)
	_, found = d.decode(`{"v":1,"id":"`+q.ID.String()+`","name":"orders","deleted":true}`, q.ID) // a deletion with settings is odd
	is.Equal(found, notAnEntry)
}

func TestDecodings_StayBounded(t *testing.T) {
	is := is.New(t)
	var d decodings
	for range maxDecodings + 10 {
		q := domain.Queue{ID: domain.ID(uuid.Must(uuid.NewV7())), Name: "q", Settings: domain.DefaultSettings()}
		value, err := encodeEntry(q)
		is.NoErr(err)
		_, found := d.decode(value, q.ID)
		is.Equal(found, queueEntry)
	}
	is.True(len(d.m) <= maxDecodings)
}
