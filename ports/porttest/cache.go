package porttest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestQueueCache runs the QueueCache contract against the cache that newCache returns.
// newCache may return the same cache to every test.
func TestQueueCache(t *testing.T, newCache func(t *testing.T) ports.QueueCache) {
	queue := func() domain.Queue {
		return domain.Queue{ID: newID(), Name: uniqueName("cached"), Settings: domain.DefaultSettings()}
	}

	t.Run("Queue_Miss_IsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, found, err := newCache(t).Queue(ctx, newID())
		is.NoErr(err)
		is.True(!found) // an unknown queue is a miss
	})

	t.Run("Store_ThenQueue_ReturnsIt", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		is.NoErr(c.Store(ctx, q))
		got, found, err := c.Queue(ctx, q.ID)
		is.NoErr(err)
		is.True(found)   // the stored entry is found
		is.Equal(got, q) // with every detail
	})

	t.Run("Store_ReplacesEntry", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		is.NoErr(c.Store(ctx, q))
		_, _, err := c.Queue(ctx, q.ID)
		is.NoErr(err)
		q.VisibilityTimeout = 60 * time.Second
		is.NoErr(c.Store(ctx, q))
		got, found, err := c.Queue(ctx, q.ID)
		is.NoErr(err)
		is.True(found)
		is.Equal(got.VisibilityTimeout, 60*time.Second) // a read after Store sees the new details
	})

	t.Run("Fill_OnMiss_StoresEntry", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		_, found, err := c.Queue(ctx, q.ID)
		is.NoErr(err)
		is.True(!found)
		is.NoErr(c.Fill(ctx, q))
		got, found, err := c.Queue(ctx, q.ID)
		is.NoErr(err)
		is.True(found)   // the filled entry is found
		is.Equal(got, q) // with every detail
	})

	t.Run("Fill_DoesNotReplaceNewerEntry", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		updated := queue()
		updated.MaxDeliveryAttempts = 9
		is.NoErr(c.Store(ctx, updated))
		stale := updated
		stale.MaxDeliveryAttempts = 5
		is.NoErr(c.Fill(ctx, stale))
		got, _, err := c.Queue(ctx, updated.ID)
		is.NoErr(err)
		is.Equal(got.MaxDeliveryAttempts, 9) // a fill from an older read loses to the stored update
	})

	// Whichever of a Fill with older details and a Store runs first, the Store's details
	// must stay: a Fill that looks for an entry and then writes apart lets a Store slip in
	// between and overwrites it.
	t.Run("Fill_ConcurrentWithStore_NeverOverwritesIt", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		for range 200 {
			updated := queue()
			updated.MaxDeliveryAttempts = 9
			stale := updated
			stale.MaxDeliveryAttempts = 5
			var wg sync.WaitGroup
			var fillErr, storeErr error
			wg.Go(func() { fillErr = c.Fill(ctx, stale) })
			wg.Go(func() { storeErr = c.Store(ctx, updated) })
			wg.Wait()
			is.NoErr(fillErr)
			is.NoErr(storeErr)
			got, found, err := c.Queue(ctx, updated.ID)
			is.NoErr(err)
			is.True(found)
			is.Equal(got.MaxDeliveryAttempts, 9) // the stored update survives the concurrent fill
		}
	})

	t.Run("Delete_ThenQueue_ReturnsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		is.NoErr(c.Store(ctx, q))
		is.NoErr(c.Delete(ctx, q.ID))
		_, found, err := c.Queue(ctx, q.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // the cache answers that the queue is gone
		is.True(!found)                                  // with no details
	})

	t.Run("Delete_ThenFill_DoesNotBringItBack", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		is.NoErr(c.Store(ctx, q))
		is.NoErr(c.Delete(ctx, q.ID))
		is.NoErr(c.Fill(ctx, q)) // details read before the deletion
		_, _, err := c.Queue(ctx, q.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // do not bring the queue back
	})

	t.Run("Delete_WithoutEntry_ThenFill_DoesNotBringItBack", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		q := queue()
		is.NoErr(c.Delete(ctx, q.ID))
		is.NoErr(c.Fill(ctx, q))
		_, _, err := c.Queue(ctx, q.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // a deletion recorded on a miss holds too
	})

	t.Run("Delete_OtherEntriesStay", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		c := newCache(t)
		gone, kept := queue(), queue()
		is.NoErr(c.Store(ctx, gone))
		is.NoErr(c.Store(ctx, kept))
		is.NoErr(c.Delete(ctx, gone.ID))
		got, found, err := c.Queue(ctx, kept.ID)
		is.NoErr(err)
		is.True(found)      // another queue's entry stays
		is.Equal(got, kept) // with its details
	})
}
