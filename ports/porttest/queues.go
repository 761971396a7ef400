package porttest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// TestQueueStore runs the QueueStore contract against the store that newStore returns.
// newStore may return the same store to every test.
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

		page, err := s.ListQueues(ctx, ports.ListQueuesParams{Name: q.Name, Limit: 10})
		is.NoErr(err)
		is.Equal(page, []domain.Queue{q}) // only the exact name matches
		page, err = s.ListQueues(ctx, ports.ListQueuesParams{Name: uniqueName("absent"), Limit: 10})
		is.NoErr(err)
		is.Equal(len(page), 0) // an unknown name gives an empty list
	})
}
