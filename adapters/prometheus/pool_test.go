package prometheus_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
)

// poolStat is a pool whose every figure differs, so that a figure read from the wrong one
// shows.
type poolStat struct{ acquired int32 }

func (s *poolStat) AcquiredConns() int32                { return s.acquired }
func (s *poolStat) IdleConns() int32                    { return 2 }
func (s *poolStat) ConstructingConns() int32            { return 3 }
func (s *poolStat) TotalConns() int32                   { return 6 }
func (s *poolStat) MaxConns() int32                     { return 16 }
func (s *poolStat) AcquireCount() int64                 { return 1000 }
func (s *poolStat) AcquireDuration() time.Duration      { return 1500 * time.Millisecond }
func (s *poolStat) EmptyAcquireCount() int64            { return 40 }
func (s *poolStat) EmptyAcquireWaitTime() time.Duration { return 250 * time.Millisecond }
func (s *poolStat) CanceledAcquireCount() int64         { return 5 }
func (s *poolStat) NewConnsCount() int64                { return 7 }
func (s *poolStat) MaxLifetimeDestroyCount() int64      { return 8 }
func (s *poolStat) MaxIdleDestroyCount() int64          { return 9 }

func TestCollectPool_ReportsThePoolAtEachScrape(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()
	pool := &poolStat{acquired: 1}
	m.CollectPool(func() prometheus.PoolStat { return pool })

	f := prometheustest.Scrape(t, m.Handler())
	for name, want := range map[string]float64{
		"retsu_postgres_pool_acquired_connections":                     1,
		"retsu_postgres_pool_idle_connections":                         2,
		"retsu_postgres_pool_constructing_connections":                 3,
		"retsu_postgres_pool_total_connections":                        6,
		"retsu_postgres_pool_max_connections":                          16,
		"retsu_postgres_pool_acquires_total":                           1000,
		"retsu_postgres_pool_acquire_duration_seconds_total":           1.5,
		"retsu_postgres_pool_empty_acquires_total":                     40,
		"retsu_postgres_pool_empty_acquire_wait_seconds_total":         0.25,
		"retsu_postgres_pool_canceled_acquires_total":                  5,
		"retsu_postgres_pool_new_connections_total":                    7,
		"retsu_postgres_pool_max_lifetime_destroyed_connections_total": 8,
		"retsu_postgres_pool_max_idle_destroyed_connections_total":     9,
	} {
		is.True(f.Has(name))          // every figure is exported
		is.Equal(f.Value(name), want) // with the pool's value, in base units
	}
	is.Equal(f["retsu_postgres_pool_acquires_total"].GetType().String(), "COUNTER")     // running totals are counters
	is.Equal(f["retsu_postgres_pool_acquired_connections"].GetType().String(), "GAUGE") // current figures are gauges

	pool.acquired = 4
	is.Equal(prometheustest.Scrape(t, m.Handler()).Value("retsu_postgres_pool_acquired_connections"), 4.0) // read again at the next scrape
}
