package ports

import (
	"context"

	"github.com/retsu/retsu/domain"
)

// DeadLetterStore keeps the dead letters that dequeues move out of their queues, and sends
// them back.
type DeadLetterStore interface {
	// DeadLetters returns a page of the queue's dead letters in ID order.
	DeadLetters(ctx context.Context, queueID domain.ID, p DeadLetterPage) ([]domain.DeadLetter, error)

	// DeadLetter returns one dead letter. Returns domain.ErrDeadLetterNotFound.
	DeadLetter(ctx context.Context, queueID, messageID domain.ID) (domain.DeadLetter, error)

	// DeleteDeadLetter deletes one dead letter, if there is one.
	DeleteDeadLetter(ctx context.Context, queueID, messageID domain.ID) error

	// DeleteAllDeadLetters deletes every dead letter of the queue and returns how many.
	DeleteAllDeadLetters(ctx context.Context, queueID domain.ID) (int, error)

	// Redrive sends the selected dead letters of queue q back to it (see
	// domain.DeadLetter.Redrive), each in one atomic step, so that a message is never in
	// both places nor in neither, and returns the IDs it moved: those selected by IDs that
	// have a dead letter, in the order given, or the lowest IDs up to the limit. The
	// messages join the end of their priority's line, in that order. A deleted queue takes
	// nothing back: Redrive moves none of its dead letters.
	Redrive(ctx context.Context, q domain.Queue, r domain.Redrive) ([]domain.ID, error)
}

// DeadLetterPage selects a page of dead letters.
type DeadLetterPage struct {
	// After, when not zero, starts the page after this ID, which need not be a dead letter's:
	// the page holds the dead letters with greater IDs.
	After domain.ID
	// Limit is the page size, from 1 to domain.MaxListLimit.
	Limit int
}
