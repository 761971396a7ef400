package prometheus

import (
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
)

// PoolStat is what the pool collector reads from a PostgreSQL connection pool;
// *pgxpool.Stat implements it.
type PoolStat interface {
	AcquireCount() int64
	AcquireDuration() time.Duration
	AcquiredConns() int32
	CanceledAcquireCount() int64
	ConstructingConns() int32
	EmptyAcquireCount() int64
	EmptyAcquireWaitTime() time.Duration
	IdleConns() int32
	MaxConns() int32
	TotalConns() int32
	NewConnsCount() int64
	MaxLifetimeDestroyCount() int64
	MaxIdleDestroyCount() int64
}

// poolMetric is one figure of a PoolStat.
type poolMetric struct {
	desc      *prom.Desc
	valueType prom.ValueType
	value     func(PoolStat) float64
}

// poolCollector reports a pool's statistics as they are at each scrape. The pool keeps
// its own running totals, which are exported as counters.
type poolCollector struct {
	stat    func() PoolStat
	metrics []poolMetric
}

func newPoolCollector(stat func() PoolStat) *poolCollector {
	gauge := func(name, help string, value func(PoolStat) float64) poolMetric {
		return poolMetric{prom.NewDesc(namespace+"_postgres_pool_"+name, help, nil, nil), prom.GaugeValue, value}
	}
	counter := func(name, help string, value func(PoolStat) float64) poolMetric {
		return poolMetric{prom.NewDesc(namespace+"_postgres_pool_"+name, help, nil, nil), prom.CounterValue, value}
	}
	return &poolCollector{stat: stat, metrics: []poolMetric{
		gauge("acquired_connections", "Connections in use by a statement.", func(s PoolStat) float64 { return float64(s.AcquiredConns()) }),
		gauge("idle_connections", "Open connections waiting for a statement.", func(s PoolStat) float64 { return float64(s.IdleConns()) }),
		gauge("constructing_connections", "Connections being opened.", func(s PoolStat) float64 { return float64(s.ConstructingConns()) }),
		gauge("total_connections", "Open connections, acquired, idle and being opened.", func(s PoolStat) float64 { return float64(s.TotalConns()) }),
		gauge("max_connections", "The most connections the pool opens (RETSU_DB_MAX_CONNS).", func(s PoolStat) float64 { return float64(s.MaxConns()) }),
		counter("acquires_total", "Connections acquired from the pool.", func(s PoolStat) float64 { return float64(s.AcquireCount()) }),
		counter("acquire_duration_seconds_total", "Time spent acquiring connections.", func(s PoolStat) float64 { return s.AcquireDuration().Seconds() }),
		counter("empty_acquires_total", "Acquires that had to wait because no connection was idle.", func(s PoolStat) float64 { return float64(s.EmptyAcquireCount()) }),
		counter("empty_acquire_wait_seconds_total", "Time spent by acquires waiting for a connection to become idle or open.", func(s PoolStat) float64 { return s.EmptyAcquireWaitTime().Seconds() }),
		counter("canceled_acquires_total", "Acquires given up because their context ended.", func(s PoolStat) float64 { return float64(s.CanceledAcquireCount()) }),
		counter("new_connections_total", "Connections opened.", func(s PoolStat) float64 { return float64(s.NewConnsCount()) }),
		counter("max_lifetime_destroyed_connections_total", "Connections closed because they reached their maximum lifetime.", func(s PoolStat) float64 { return float64(s.MaxLifetimeDestroyCount()) }),
		counter("max_idle_destroyed_connections_total", "Connections closed because they were idle too long.", func(s PoolStat) float64 { return float64(s.MaxIdleDestroyCount()) }),
	}}
}

// Describe sends the description of every figure.
func (c *poolCollector) Describe(ch chan<- *prom.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

// Collect reads the pool's statistics once and sends every figure.
func (c *poolCollector) Collect(ch chan<- prom.Metric) {
	stat := c.stat()
	for _, m := range c.metrics {
		ch <- prom.MustNewConstMetric(m.desc, m.valueType, m.value(stat))
	}
}
