package prometheus_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/prometheus/prometheustest"
)

func TestCollectRounds_ReportsTheRoundsAtEachScrape(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := prometheus.New()
	stat := prometheus.RoundStat{Rounds: 12, Gated: 4, Forwarded: 5}
	m.CollectRounds(func() prometheus.RoundStat { return stat })

	f := prometheustest.Scrape(t, m.Handler())
	stat = prometheus.RoundStat{Rounds: 13, Gated: 6, Forwarded: 7, Leading: true}
	g := prometheustest.Scrape(t, m.Handler())

	is.Equal(f.Value("retsu_postgres_rounds_total"), 12.0)
	is.Equal(f.Value("retsu_postgres_rounds_gated_total"), 4.0)
	is.Equal(f.Value("retsu_postgres_forwarded_batches_total"), 5.0)
	is.Equal(f.Value("retsu_postgres_round_leader"), 0.0)  // a follower
	is.Equal(g.Value("retsu_postgres_rounds_total"), 13.0) // read again at the next scrape
	is.Equal(g.Value("retsu_postgres_rounds_gated_total"), 6.0)
	is.Equal(g.Value("retsu_postgres_forwarded_batches_total"), 7.0)
	is.Equal(g.Value("retsu_postgres_round_leader"), 1.0) // the leader
}
