package apptest

import (
	"errors"
	"testing"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// deadLetterTests cover the dead letters of a queue: listing, reading, deleting and
// redriving them.
var deadLetterTests = []testCase{
	{"DeadLetters_InIDOrder_WithWhatTheMessageKept", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		first := r.deadLetter(q, message(domain.PriorityLow, "one"))
		second := r.deadLetter(q, message(domain.PriorityHigh, "two"))
		letters, err := r.DeadLetters(ctx, q.ID, ports.DeadLetterPage{})
		r.is.NoErr(err)
		r.is.Equal(len(letters), 2)
		r.is.Equal([]domain.ID{letters[0].MessageID, letters[1].MessageID}, []domain.ID{first, second}) // in ID order
		d := letters[1]
		r.is.Equal([]any{d.QueueID, d.Payload, d.Priority, d.DeliveryAttempts}, []any{q.ID, "two", domain.PriorityHigh, 1}) // the message's queue, payload, priority and attempts
		r.is.True(!d.EnqueuedAt.IsZero() && !d.DeadLetteredAt.Before(d.EnqueuedAt))                                         // its enqueue time, then the time it was moved
	}},

	{"DeadLetters_PagedByAfterAndLimit", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		var all []domain.ID
		for range 3 {
			all = append(all, r.deadLetter(q, message(domain.PriorityMedium, "x")))
		}
		page, err := r.DeadLetters(ctx, q.ID, ports.DeadLetterPage{Limit: 2})
		r.is.NoErr(err)
		r.is.Equal(letterIDs(page), all[:2]) // the lowest IDs first, up to the limit
		page, err = r.DeadLetters(ctx, q.ID, ports.DeadLetterPage{After: all[1], Limit: 2})
		r.is.NoErr(err)
		r.is.Equal(letterIDs(page), all[2:]) // then those after the cursor
		_, err = r.DeadLetters(ctx, q.ID, ports.DeadLetterPage{Limit: domain.MaxListLimit + 1})
		r.is.Equal(codeOf(err), domain.CodeInvalidQuery) // a page holds at most 1,000
	}},

	{"DeadLetter_GetAndDelete", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		id := r.deadLetter(q, message(domain.PriorityHigh, "gone soon"))
		letter, err := r.DeadLetter(ctx, q.ID, id)
		r.is.NoErr(err)
		r.is.Equal(letter.Payload, "gone soon") // one dead letter by its ID
		r.is.NoErr(r.DeleteDeadLetter(ctx, q.ID, id))
		_, err = r.DeadLetter(ctx, q.ID, id)
		r.is.True(errors.Is(err, domain.ErrDeadLetterNotFound)) // deleted
		r.is.NoErr(r.DeleteDeadLetter(ctx, q.ID, id))           // and deleting it again is no error
	}},

	{"DeleteDeadLetters_RemovesAllAndCountsThem", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		r.deadLetter(q, message(domain.PriorityHigh, "a"))
		r.deadLetter(q, message(domain.PriorityLow, "b"))
		n, err := r.DeleteDeadLetters(ctx, q.ID)
		r.is.NoErr(err)
		r.is.Equal(n, 2)                  // how many it deleted
		r.is.Equal(r.counts(q), counts{}) // which were all of them
	}},

	{"Redrive_ByIDs_BackWithFreshAttempts", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		id := r.deadLetter(q, message(domain.PriorityHigh, "again"))
		moved, err := r.Redrive(ctx, q.ID, domain.Redrive{IDs: []domain.ID{newID(), id}})
		r.is.NoErr(err)
		r.is.Equal(moved, []domain.ID{id}) // the IDs moved, without those that had no dead letter
		d := r.dequeueOne(q)
		r.is.Equal([]any{d.MessageID, d.Payload, d.Priority}, []any{id, "again", domain.PriorityHigh}) // the same message
		r.is.Equal(d.DeliveryAttempts, 1)                                                              // starting again at 0 attempts
		r.is.Equal(r.counts(q), counts{inFlight: 1})                                                   // in the queue, no longer a dead letter
	}},

	{"Redrive_ByLimit_LowestIDsFirst", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{MaxDeliveryAttempts: new(1)})
		var all []domain.ID
		for range 3 {
			all = append(all, r.deadLetter(q, message(domain.PriorityMedium, "x")))
		}
		moved, err := r.Redrive(ctx, q.ID, domain.Redrive{Limit: 2})
		r.is.NoErr(err)
		r.is.Equal(moved, all[:2]) // the two lowest IDs
		r.is.Equal(r.counts(q), counts{ready: 2, deadLettered: 1})
	}},

	{"Redrive_SelectionSize_InvalidBatchSize", func(t *testing.T, r *retsuTest) {
		q := r.queue(domain.SettingsUpdate{})
		for _, selection := range []domain.Redrive{{IDs: []domain.ID{}}, {Limit: 0}, {Limit: domain.MaxRedriveLimit + 1}} {
			_, err := r.Redrive(ctx, q.ID, selection)
			r.is.Equal(codeOf(err), domain.CodeInvalidBatchSize) // 1 to 1,000 IDs, or a limit of 1 to 10,000
		}
	}},
}

// letterIDs returns the message IDs of dead letters.
func letterIDs(letters []domain.DeadLetter) []domain.ID {
	out := make([]domain.ID, len(letters))
	for i, d := range letters {
		out[i] = d.MessageID
	}
	return out
}
