package prometheus

import prom "github.com/prometheus/client_golang/prometheus"

// RoundStat is what the rounds collector reads from the PostgreSQL message store: its
// running totals, and whether this instance leads (adapters/postgres/forward.go).
type RoundStat struct {
	// Rounds counts the rounds this instance ran, Gated those of them that took their round
	// lock before their batch (busy or contended), Forwarded the batches it forwarded to the
	// round leader, which carried them.
	Rounds, Gated, Forwarded int64
	// Leading is true while this instance holds the round leader's lease.
	Leading bool
}

// CollectRounds adds the message store's rounds, read from stat at every scrape.
func (m *Metrics) CollectRounds(stat func() RoundStat) {
	m.registry.MustRegister(
		prom.NewCounterFunc(prom.CounterOpts{Name: namespace + "_postgres_rounds_total",
			Help: "Rounds (transactions of coalesced requests) this instance ran."},
			func() float64 { return float64(stat().Rounds) }),
		prom.NewCounterFunc(prom.CounterOpts{Name: namespace + "_postgres_rounds_gated_total",
			Help: "Rounds that took their round lock before their batch, so that the requests arriving meanwhile went with them: after a round that ended with requests waiting, while other instances' rounds held the lock, or while this instance carried forwarded batches."},
			func() float64 { return float64(stat().Gated) }),
		prom.NewCounterFunc(prom.CounterOpts{Name: namespace + "_postgres_forwarded_batches_total",
			Help: "Batches of requests this instance forwarded to the round leader, which carried them in its rounds."},
			func() float64 { return float64(stat().Forwarded) }),
		prom.NewGaugeFunc(prom.GaugeOpts{Name: namespace + "_postgres_round_leader",
			Help: "1 while this instance holds the round leader's lease, else 0."},
			func() float64 {
				if stat().Leading {
					return 1
				}
				return 0
			}),
	)
}
