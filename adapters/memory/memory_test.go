package memory_test

import (
	"testing"
	"time"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/ports"
	"github.com/retsu/retsu/ports/porttest"
)

func TestQueueStore(t *testing.T) {
	t.Parallel()
	porttest.TestQueueStore(t, func(*testing.T) ports.QueueStore { return memory.NewQueueStore(memory.QueueStoreOptions{}) })
}

// newHarness returns a message store, with the QueueStore whose deletions it honours, on a
// manual clock of their own that the test advances.
func newHarness(*testing.T) porttest.MessageHarness {
	clock := memory.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	queues := memory.NewQueueStore(memory.QueueStoreOptions{Clock: clock})
	store := memory.NewMessageStore(memory.MessageStoreOptions{Clock: clock, Queues: queues})
	return porttest.MessageHarness{
		Store: store, DeadLetters: store, Cleaning: store, Wakeups: store, Queues: queues, Wait: clock.Advance,
	}
}

func TestMessageStore(t *testing.T) {
	t.Parallel()
	porttest.TestMessageStore(t, newHarness)
}

func TestDeadLetterStore(t *testing.T) {
	t.Parallel()
	porttest.TestDeadLetterStore(t, newHarness)
}

func TestCleaning(t *testing.T) {
	t.Parallel()
	porttest.TestCleaning(t, newHarness)
}

func TestCleanerPasses(t *testing.T) {
	t.Parallel()
	porttest.TestCleanerPasses(t, newHarness)
}

func TestWakeups(t *testing.T) {
	t.Parallel()
	porttest.TestWakeups(t, newHarness)
}

func TestQueueCache(t *testing.T) {
	t.Parallel()
	porttest.TestQueueCache(t, func(*testing.T) ports.QueueCache {
		return memory.NewQueueCache(memory.QueueCacheOptions{})
	})
}
