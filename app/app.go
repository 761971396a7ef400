package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/redis"
	"github.com/retsu/retsu/ports"
)

// App is a Retsu process: the stores chosen by its Config, the service and HTTP API over
// them, and the cleaners.
type App struct {
	cfg      Config
	log      *slog.Logger
	queues   ports.QueueStore
	messages ports.MessageStore
	// ready reports whether PostgreSQL can be reached, for /readyz; nil with the memory
	// store.
	ready    func(context.Context) error
	service  *Service
	handler  http.Handler
	cleaners *Cleaners
	closers  []func()

	// cacheReady reports whether Redis can be reached, for /readyz; nil without Redis.
	cacheReady func(context.Context) error
	metrics    *prometheus.Metrics
}

// New connects the stores and the queue-details cache that cfg chooses and assembles the
// service, its API and the cleaners, for `retsu serve`. With the postgres store it applies
// the migrations first when cfg.Migrate is set.
func New(ctx context.Context, cfg Config, log *slog.Logger) (_ *App, err error) {
	a, err := connect(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	cache, err := a.connectCache(ctx)
	if err != nil {
		return nil, err
	}
	a.service = NewService(Ports{
		Queues: a.queues, Messages: a.messages, Cache: cache,
		Logger: log, Metrics: a.metrics, Clock: memory.SystemClock{},
	})
	a.handler = httpapi.NewHandler(a.service, httpapi.Options{
		Logger:                log,
		Ready:                 a.ready,
		CacheReady:            a.cacheReady,
		Metrics:               a.metrics.Handler(),
		Observer:              a.metrics,
		APITokens:             cfg.APITokens,
		MaxConcurrentRequests: cfg.MaxConcurrentRequests,
		RequestTimeout:        cfg.RequestTimeout,
	})
	return a, nil
}

// NewWorker connects the stores that cfg chooses, for `retsu work`, which runs the cleaners
// alone.
func NewWorker(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	return connect(ctx, cfg, log)
}

// connect returns an App with its stores and cleaners.
func connect(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	log.Info("configuration", "config", cfg)
	a := &App{cfg: cfg, log: log, metrics: prometheus.New()}
	switch cfg.Store {
	case StoreMemory:
		log.Warn("serving from process memory (--store=memory): nothing is durable and a restart loses every queue and message")
		a.queues, a.messages = memory.NewQueueStore(), memory.NewMessageStore(memory.SystemClock{})
	case StorePostgres:
		if err := a.connectPostgres(ctx); err != nil {
			a.Close()
			return nil, err
		}
	default:
		return nil, &ConfigError{"RETSU_STORE (--store)", fmt.Sprintf("unknown store %q", cfg.Store)}
	}
	a.cleaners = NewCleaners(a.queues, a.messages, memory.SystemClock{}, log, cfg.Cleaners).WithMetrics(a.metrics)
	return a, nil
}

// connectPostgres migrates and connects PostgreSQL.
func (a *App) connectPostgres(ctx context.Context) error {
	if a.cfg.Migrate {
		if err := Migrate(a.cfg.DatabaseURL, "up", io.Discard); err != nil {
			return err
		}
	}
	pool, err := postgres.OpenPool(ctx, a.cfg.DatabaseURL, postgres.PoolOptions{
		MaxConns:       int32(a.cfg.DBMaxConns),
		ConnectTimeout: a.cfg.DBConnectTimeout,
	})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, pool.Close)
	// Closed before the pool (closers run in reverse): it answers the requests it holds first.
	messages := postgres.NewMessageStore(pool, postgres.WithRoundsInFlight(a.cfg.DBRoundsInFlight))
	a.closers = append(a.closers, messages.Close)
	a.queues, a.messages, a.ready = postgres.NewQueueStore(pool), messages, pool.Ping
	a.metrics.CollectPool(func() prometheus.PoolStat { return pool.Stat() })
	return nil
}

// connectCache returns the Redis cache when a Redis URL is configured, and otherwise a
// cache in this process's memory whose entries live for CacheLifetime, so that this
// instance sees other instances' updates within that time.
func (a *App) connectCache(ctx context.Context) (ports.QueueCache, error) {
	if a.cfg.Store == StoreMemory {
		return memory.NewQueueCache(memory.SystemClock{}, 0), nil
	}
	if a.cfg.RedisURL == "" {
		a.log.Info("no Redis configured: queue details are cached in process memory", "lifetime", a.cfg.CacheLifetime)
		return memory.NewQueueCache(memory.SystemClock{}, a.cfg.CacheLifetime), nil
	}
	cache, err := redis.Open(ctx, a.cfg.RedisURL, redis.Options{}, a.log)
	if err != nil {
		return nil, &ConfigError{"RETSU_REDIS_URL (--redis-url)", err.Error()}
	}
	a.closers = append(a.closers, cache.Close)
	a.cacheReady = cache.Ping
	return cache, nil
}

// Service returns the service, for embedding.
func (a *App) Service() *Service { return a.service }

// Handler returns the HTTP API.
func (a *App) Handler() http.Handler { return a.handler }

// Serve listens on cfg.Addr and serves the API until ctx is done, then stops accepting
// connections and waits up to cfg.ShutdownTimeout for the requests in flight.
func (a *App) Serve(ctx context.Context) error {
	listener, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.cfg.Addr, err)
	}
	server := httpapi.NewServer(a.handler, httpapi.ServerOptions{
		ReadHeaderTimeout: a.cfg.ReadHeaderTimeout,
		ReadTimeout:       a.cfg.ReadTimeout,
		WriteTimeout:      a.cfg.WriteTimeout,
		IdleTimeout:       a.cfg.IdleTimeout,
		MaxHeaderBytes:    a.cfg.MaxHeaderBytes,
		Logger:            a.log,
	})
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	a.log.Info("serving the API", "addr", listener.Addr().String(), "store", a.cfg.Store)
	stopCleaners := a.startCleaners()
	defer stopCleaners()

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down: waiting for requests in flight", "timeout", a.cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	a.log.Info("stopped")
	return nil
}

// startCleaners runs the cleaners in the background when cfg.Workers is set, and returns
// the function that stops them and waits until they have.
func (a *App) startCleaners() (stop func()) {
	if !a.cfg.Workers {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.cleaners.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Work runs the cleaners until ctx is done, for `retsu work`.
func (a *App) Work(ctx context.Context) error {
	a.cleaners.Run(ctx)
	return nil
}

// Close releases the connections, in the reverse order of their opening.
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// Migrate runs a migration command (up, down or version) on the database at databaseURL,
// printing the version to out for "version".
func Migrate(databaseURL, command string, out io.Writer) error {
	migrator, err := postgres.NewMigrator(databaseURL)
	if err != nil {
		return err
	}
	defer migrator.Close()
	switch command {
	case "up":
		return migrator.Up()
	case "down":
		return migrator.Down()
	case "version":
		version, dirty, err := migrator.Version()
		if err != nil {
			return err
		}
		state := ""
		if dirty {
			state = " (dirty: a migration failed halfway; fix the schema, then force the version)"
		}
		_, err = fmt.Fprintf(out, "%d%s\n", version, state)
		return err
	}
	return &ConfigError{"arguments", fmt.Sprintf("unknown migrate command %q", command)}
}

// NewLogger returns the logger that cfg describes, writing to w.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	options := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, options))
	}
	return slog.New(slog.NewTextHandler(w, options))
}
