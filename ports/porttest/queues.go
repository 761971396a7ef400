package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestQueueStore runs the QueueStore contract against the store that newStore returns.
// newStore may return the same store to every test. The store runs on a real clock: the
// suite sleeps a moment between two deletions to tell their ages apart.
func TestQueueStore(t *testing.T, newStore func(t *testing.T) ports.QueueStore) {
	ctx := context.Background()
	create := func(t *testing.T, s ports.QueueStore, name string) domain.Queue {
		t.Helper()
		q := domain.Queue{ID: newID(), Name: name, Settings: domain.DefaultSettings()}
		if err := s.CreateQueue(ctx, q); err != nil {
			t.Fatalf("create queue %q: %v", name, err)
		}
		return q
	}
	// deleted deletes q and forgets the deletion when the test ends, so that the records of
	// a shared store do not pile up.
	deleted := func(t *testing.T, s ports.QueueStore, q domain.Queue) {
		t.Helper()
		if err := s.DeleteQueue(ctx, q.ID); err != nil {
			t.Fatalf("delete queue %q: %v", q.Name, err)
		}
		t.Cleanup(func() { _ = s.ForgetDeletedQueue(ctx, q.ID) })
	}
	// recorded returns the store's records of the given queues' deletions, in its order.
	recorded := func(t *testing.T, s ports.QueueStore, limit int, ids ...domain.ID) []ports.DeletedQueue {
		t.Helper()
		all, err := s.DeletedQueues(ctx, domain.ID{}, limit)
		if err != nil {
			t.Fatalf("deleted queues: %v", err)
		}
		var mine []ports.DeletedQueue
		for _, d := range all {
			if slices.Contains(ids, d.ID) {
				mine = append(mine, d)
			}
		}
		return mine
	}

	t.Run("CreateQueue_ThenQueue_ReturnsIt", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		want := domain.Queue{ID: newID(), Name: uniqueName("create"), Settings: domain.Settings{
			VisibilityTimeout: 60 * time.Second, MaxDeliveryAttempts: 10, DefaultMessageTTL: 86400 * time.Second,
		}}
		is.NoErr(s.CreateQueue(ctx, want))
		got, err := s.Queue(ctx, want.ID)
		is.NoErr(err)
		is.Equal(got, want) // the stored queue comes back unchanged
	})

	t.Run("CreateQueue_NameTaken_ReturnsAlreadyExists", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		first := create(t, s, uniqueName("taken"))
		err := s.CreateQueue(ctx, domain.Queue{ID: newID(), Name: first.Name, Settings: domain.DefaultSettings()})
		is.True(errors.Is(err, domain.ErrQueueAlreadyExists)) // a second queue with the name is refused
	})

	t.Run("CreateQueue_ConcurrentSameName_OneWins", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		name := uniqueName("race")
		const creators = 8
		errs := make([]error, creators)
		var wg sync.WaitGroup
		for i := range creators {
			wg.Go(func() {
				errs[i] = s.CreateQueue(ctx, domain.Queue{ID: newID(), Name: name, Settings: domain.DefaultSettings()})
			})
		}
		wg.Wait()
		created := 0
		for _, err := range errs {
			switch {
			case err == nil:
				created++
			case !errors.Is(err, domain.ErrQueueAlreadyExists):
				t.Fatalf("unexpected error: %v", err)
			}
		}
		is.Equal(created, 1) // exactly one create of the name succeeds
	})

	t.Run("Queue_Unknown_ReturnsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, err := newStore(t).Queue(ctx, newID())
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // an unknown ID is not found
	})

	t.Run("UpdateQueue_ChangesOnlySuppliedSettings", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("update"))
		got, err := s.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{
			VisibilityTimeout: new(60 * time.Second), MaxDeliveryAttempts: new(10),
		})
		is.NoErr(err)
		want := q
		want.VisibilityTimeout, want.MaxDeliveryAttempts = 60*time.Second, 10
		is.Equal(got, want) // the update returns the complete queue
		stored, err := s.Queue(ctx, q.ID)
		is.NoErr(err)
		is.Equal(stored, want) // the update is stored; the lifetime kept its value
	})

	t.Run("UpdateQueue_Unknown_ReturnsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, err := newStore(t).UpdateQueue(ctx, newID(), domain.SettingsUpdate{MaxDeliveryAttempts: new(3)})
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // an unknown ID is not found
	})

	t.Run("ListQueues_OrdersByNameAndPages", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		prefix := uniqueName("list")
		c := create(t, s, prefix+"-c")
		a := create(t, s, prefix+"-a")
		b := create(t, s, prefix+"-b")

		page, err := s.ListQueues(ctx, ports.ListQueuesParams{After: prefix, Limit: 2})
		is.NoErr(err)
		is.Equal(page, []domain.Queue{a, b}) // the first page holds the first names in order
		page, err = s.ListQueues(ctx, ports.ListQueuesParams{After: b.Name, Limit: 2})
		is.NoErr(err)
		is.True(len(page) >= 1)
		is.Equal(page[0], c) // the next page starts after the cursor
	})

	t.Run("ListQueues_ByName_KeepsExactMatchOnly", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("byname"))
		create(t, s, q.Name+"x")

		page, err := s.ListQueues(ctx, ports.ListQueuesParams{Name: new(q.Name), Limit: 10})
		is.NoErr(err)
		is.Equal(page, []domain.Queue{q}) // only the exact name matches
		page, err = s.ListQueues(ctx, ports.ListQueuesParams{Name: new(uniqueName("absent")), Limit: 10})
		is.NoErr(err)
		is.Equal(len(page), 0) // an unknown name gives an empty list
	})

	t.Run("ListQueues_EmptyName_KeepsNone", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("empty"))

		page, err := s.ListQueues(ctx, ports.ListQueuesParams{Name: new(""), Limit: 10})
		is.NoErr(err)
		is.Equal(len(page), 0) // the empty name is a name that no queue has
		page, err = s.ListQueues(ctx, ports.ListQueuesParams{After: q.Name[:len(q.Name)-1], Limit: 10})
		is.NoErr(err)
		is.True(slices.Contains(page, q)) // no name at all keeps every queue
	})

	t.Run("DeleteQueue_ThenNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("delete"))
		deleted(t, s, q)
		_, err := s.Queue(ctx, q.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // a deleted queue is not found
		_, err = s.UpdateQueue(ctx, q.ID, domain.SettingsUpdate{MaxDeliveryAttempts: new(3)})
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // nor updated
		page, err := s.ListQueues(ctx, ports.ListQueuesParams{Name: new(q.Name), Limit: 10})
		is.NoErr(err)
		is.Equal(len(page), 0) // nor listed
	})

	t.Run("DeleteQueue_Unknown_ReturnsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		is.True(errors.Is(newStore(t).DeleteQueue(ctx, newID()), domain.ErrQueueNotFound)) // an unknown ID is not found
	})

	t.Run("DeleteQueue_Twice_SecondIsNotFound", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("twice"))
		deleted(t, s, q)
		is.True(errors.Is(s.DeleteQueue(ctx, q.ID), domain.ErrQueueNotFound)) // a deleted queue cannot be deleted again
		is.Equal(len(recorded(t, s, domain.MaxListLimit, q.ID)), 1)           // and its deletion is recorded once
	})

	t.Run("DeleteQueue_NameFreeAtOnce", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		q := create(t, s, uniqueName("reused"))
		deleted(t, s, q)
		again := domain.Queue{ID: newID(), Name: q.Name, Settings: domain.DefaultSettings()}
		is.NoErr(s.CreateQueue(ctx, again)) // the name can be used at once
		got, err := s.Queue(ctx, again.ID)
		is.NoErr(err)
		is.Equal(got, again) // by a new queue
		_, err = s.Queue(ctx, q.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // which does not bring the old one back
		page, err := s.ListQueues(ctx, ports.ListQueuesParams{Name: new(q.Name), Limit: 10})
		is.NoErr(err)
		is.Equal(page, []domain.Queue{again}) // the name lists the new queue only
	})

	t.Run("DeleteQueue_OtherQueuesStay", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		gone := create(t, s, uniqueName("gone"))
		kept := create(t, s, uniqueName("kept"))
		deleted(t, s, gone)
		got, err := s.Queue(ctx, kept.ID)
		is.NoErr(err)
		is.Equal(got, kept) // deleting a queue leaves the others alone
	})

	t.Run("DeletedQueues_ByIDWithAge", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		first := create(t, s, uniqueName("first"))
		second := create(t, s, uniqueName("second"))
		deleted(t, s, second)
		time.Sleep(20 * time.Millisecond)
		deleted(t, s, first)
		got := recorded(t, s, domain.MaxListLimit, first.ID, second.ID)
		is.Equal(len(got), 2)             // both deletions are recorded
		is.Equal(got[0].ID, first.ID)     // in ID order
		is.Equal(got[1].ID, second.ID)    // whatever the order of the deletions
		is.True(got[1].Age > got[0].Age)  // each with how long ago it was deleted
		is.True(got[0].Age >= 0)          // which is never negative
		is.True(got[1].Age < time.Minute) // and counts from the deletion
	})

	t.Run("DeletedQueues_PagesAfterAnID", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		first := create(t, s, uniqueName("first"))
		second := create(t, s, uniqueName("second"))
		deleted(t, s, first)
		deleted(t, s, second)
		page, err := s.DeletedQueues(ctx, first.ID, domain.MaxListLimit)
		is.NoErr(err)
		ids := make([]domain.ID, len(page))
		for i, d := range page {
			ids[i] = d.ID
		}
		is.True(!slices.Contains(ids, first.ID)) // the page starts after the ID given
		is.True(slices.Contains(ids, second.ID)) // with the records after it
	})

	t.Run("DeletedQueues_AtMostLimit", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		for i := range 3 {
			deleted(t, s, create(t, s, uniqueName(fmt.Sprintf("limit%d", i))))
		}
		all, err := s.DeletedQueues(ctx, domain.ID{}, 2)
		is.NoErr(err)
		is.Equal(len(all), 2) // no more records than the limit
	})

	t.Run("ForgetDeletedQueue_DropsTheRecord", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		forgotten := create(t, s, uniqueName("forgotten"))
		kept := create(t, s, uniqueName("kept"))
		deleted(t, s, forgotten)
		deleted(t, s, kept)
		is.NoErr(s.ForgetDeletedQueue(ctx, forgotten.ID))
		got := recorded(t, s, domain.MaxListLimit, forgotten.ID, kept.ID)
		is.Equal(len(got), 1)        // the forgotten record is gone
		is.Equal(got[0].ID, kept.ID) // the other stays
		_, err := s.Queue(ctx, forgotten.ID)
		is.True(errors.Is(err, domain.ErrQueueNotFound)) // and the queue stays deleted
	})

	t.Run("ForgetDeletedQueue_Unknown_IsNoError", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		s := newStore(t)
		is.NoErr(s.ForgetDeletedQueue(ctx, newID())) // nothing to forget is no error
		q := create(t, s, uniqueName("live"))
		is.NoErr(s.ForgetDeletedQueue(ctx, q.ID))
		_, err := s.Queue(ctx, q.ID)
		is.NoErr(err) // and a live queue is untouched
	})
}
