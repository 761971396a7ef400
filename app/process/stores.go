package process

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/ports"
)

// stores are the QueueStore and MessageStore that a process works on.
type stores struct {
	queues   ports.QueueStore
	messages ports.MessageStore
	// ready reports whether PostgreSQL can be reached, for /readyz; nil with the memory
	// stores.
	ready func(context.Context) error
	// poolStat reads the connection pool's statistics, and roundStat the rounds', for the
	// metrics; nil with the memory stores.
	poolStat  func() prometheus.PoolStat
	roundStat func() prometheus.RoundStat
	// servePeers serves the rounds that other instances forward, on a listener; nil
	// without peers.
	servePeers func(net.Listener) error
	// closers release what the stores hold, in the reverse order of their opening.
	closers closers
}

// openStores connects the stores that cfg chooses. With the postgres store it applies the
// migrations first when cfg.Migrate is set.
func openStores(ctx context.Context, cfg Config, log *slog.Logger) (*stores, error) {
	switch cfg.Store {
	case StoreMemory:
		log.Warn("serving from process memory (--store=memory): nothing is durable and a restart loses every queue and message")
		queues := memory.NewQueueStore(memory.QueueStoreOptions{})
		return &stores{queues: queues, messages: memory.NewMessageStore(memory.MessageStoreOptions{Queues: queues})}, nil
	case StorePostgres:
		return openPostgres(ctx, cfg, log)
	}
	return nil, &ConfigError{"RETSU_STORE (--store)", fmt.Sprintf("unknown store %q", cfg.Store)}
}

// openPostgres migrates and connects PostgreSQL.
func openPostgres(ctx context.Context, cfg Config, log *slog.Logger) (*stores, error) {
	if cfg.Migrate {
		if err := Migrate(cfg.DatabaseURL, "up", io.Discard); err != nil {
			return nil, err
		}
	}
	pool, err := postgres.OpenPool(ctx, cfg.DatabaseURL, postgres.PoolOptions{
		MaxConns:       int32(cfg.DBMaxConns),
		ConnectTimeout: cfg.DBConnectTimeout,
	})
	if err != nil {
		return nil, databaseURLError(err)
	}
	options := postgres.MessageStoreOptions{RoundsInFlight: cfg.DBRoundsInFlight}
	if cfg.PeerAddr != "" {
		options.Peers = &postgres.PeerOptions{Advertise: cfg.peerAdvertise(), Token: cfg.PeerToken, Logger: log}
	}
	messages := postgres.NewMessageStore(pool, options)
	s := &stores{
		queues: postgres.NewQueueStore(pool), messages: messages, ready: pool.Ping,
		poolStat: func() prometheus.PoolStat { return pool.Stat() },
		roundStat: func() prometheus.RoundStat {
			r := messages.RoundStats()
			return prometheus.RoundStat{Rounds: r.Rounds, Gated: r.Gated, Forwarded: r.Forwarded, Leading: r.Leading}
		},
	}
	if cfg.PeerAddr != "" {
		s.servePeers = messages.ServePeers
	}
	// The message store closes before the pool: it answers the requests it holds first.
	s.closers.add(pool.Close)
	s.closers.add(messages.Close)
	return s, nil
}

// closers release resources in the reverse order of their opening.
type closers []func()

func (c *closers) add(close func()) { *c = append(*c, close) }

// close runs every closer, the last added first, and forgets them.
func (c *closers) close() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}

// newCleaners returns the cleaners over s, logging to log and counting in metrics.
func newCleaners(s *stores, cfg Config, log *slog.Logger, metrics ports.Metrics) *app.Cleaners {
	return app.NewCleaners(app.Ports{Queues: s.queues, Messages: s.messages, Logger: log, Metrics: metrics}, cfg.Cleaners)
}
