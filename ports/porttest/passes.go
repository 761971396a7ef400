package porttest

import (
	"testing"
	"time"
)

// TestCleanerPasses runs the contract of ports.Cleaning.StartPass over the harness's
// Cleaning: one pass per cleaner and interval among all callers.
func TestCleanerPasses(t *testing.T, newHarness func(t *testing.T) MessageHarness) {
	runMessageTests(t, newHarness, passTests)
}

var passTests = []messageTestCase{
	{"StartPass_OnePerInterval", func(t *testing.T, m *messageTest) {
		cleaner := uniqueName("cleaner")
		claimed, err := m.Cleaning.StartPass(ctx, cleaner, time.Second)
		m.is.NoErr(err)
		m.is.True(claimed) // the first claim gets the pass
		claimed, err = m.Cleaning.StartPass(ctx, cleaner, time.Second)
		m.is.NoErr(err)
		m.is.True(!claimed) // another in the same interval does not
		m.Wait(time.Second + margin)
		claimed, err = m.Cleaning.StartPass(ctx, cleaner, time.Second)
		m.is.NoErr(err)
		m.is.True(claimed) // the next interval's does
	}},

	{"StartPass_ByCleaner", func(t *testing.T, m *messageTest) {
		first, other := uniqueName("cleaner"), uniqueName("cleaner")
		claimed, err := m.Cleaning.StartPass(ctx, first, time.Hour)
		m.is.NoErr(err)
		m.is.True(claimed)
		claimed, err = m.Cleaning.StartPass(ctx, other, time.Hour)
		m.is.NoErr(err)
		m.is.True(claimed) // each cleaner has passes of its own
	}},

	{"StartPass_ConcurrentClaims_OneGetsIt", func(t *testing.T, m *messageTest) {
		cleaner := uniqueName("cleaner")
		results := make(chan bool, 8)
		for range 8 {
			go func() {
				claimed, err := m.Cleaning.StartPass(ctx, cleaner, time.Hour)
				if err != nil {
					t.Error(err)
				}
				results <- claimed
			}()
		}
		got := 0
		for range 8 {
			if <-results {
				got++
			}
		}
		m.is.Equal(got, 1) // of claims at the same moment, exactly one gets the pass
	}},
}
