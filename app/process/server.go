package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/adapters/dashboard"
	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/memory"
	"github.com/retsu/retsu/adapters/prometheus"
	"github.com/retsu/retsu/adapters/redis"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/ports"
)

// Server is the process of `retsu serve`: the HTTP API over the stores and the
// queue-details cache that its Config chooses, with the cleaners unless they are turned off.
type Server struct {
	cfg     Config
	log     *slog.Logger
	stores  *stores
	service *app.Service
	handler http.Handler
	// sqsHandler serves the SQS-compatible endpoint; nil without one.
	sqsHandler http.Handler
	// capacity is what the API and the SQS endpoint share: requests, long polls, body
	// bytes and connections.
	capacity *capacity.Shared
	// cleaners is nil when cfg.Workers is off.
	cleaners *app.Cleaners
	closers  closers
}

// NewServer connects the stores and the queue-details cache that cfg chooses and assembles
// the service, its API and the cleaners. With the postgres store it applies the migrations
// first when cfg.Migrate is set.
func NewServer(ctx context.Context, cfg Config, log *slog.Logger) (_ *Server, err error) {
	log.Info("configuration", "config", cfg)
	stores, err := openStores(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, stores: stores, capacity: capacity.New(capacity.Options{
		MaxRequests: cfg.MaxConcurrentRequests, MaxWaiting: cfg.MaxWaitingRequests,
		MaxBodyBytes: int64(cfg.MaxBodyBytesInFlight), MaxConnections: cfg.MaxConnections,
	})}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	metrics := prometheus.New()
	if stores.poolStat != nil {
		metrics.CollectPool(stores.poolStat)
		metrics.CollectRounds(stores.roundStat)
	}
	cache, cacheReady, err := s.openCache(ctx)
	if err != nil {
		return nil, err
	}
	s.service = app.NewService(app.Ports{
		Queues: stores.queues, Messages: stores.messages, Cache: cache, Logger: log, Metrics: metrics,
	}, app.Options{IdempotencyRetention: cfg.Cleaners.IdempotencyRetention})
	var pages http.Handler
	if cfg.Dashboard {
		pages = dashboard.New()
	}
	s.handler = httpapi.NewHandler(s.service, httpapi.Options{
		Logger:         log,
		Ready:          stores.ready,
		CacheReady:     cacheReady,
		Metrics:        metrics.Handler(),
		Observer:       metrics,
		APITokens:      cfg.APITokens,
		Capacity:       s.capacity,
		RequestTimeout: cfg.RequestTimeout,
		MaxHeaderBytes: cfg.MaxHeaderBytes,
		Dashboard:      pages,
	})
	s.sqsHandler = newSQSHandler(s.service, cfg, s.capacity, log)
	if cfg.Workers {
		s.cleaners = newCleaners(stores, cfg, log, metrics)
	}
	return s, nil
}

// openCache returns the Redis cache and its readiness check when a Redis URL is configured,
// and otherwise a cache in this process's memory whose entries live for CacheLifetime, so
// that this instance sees other instances' updates within that time (and no check).
func (s *Server) openCache(ctx context.Context) (ports.QueueCache, func(context.Context) error, error) {
	switch {
	case s.cfg.Store == StoreMemory:
		return memory.NewQueueCache(memory.QueueCacheOptions{}), nil, nil
	case s.cfg.RedisURL == "":
		s.log.Info("no Redis configured: queue details are cached in process memory", "lifetime", s.cfg.CacheLifetime)
		return memory.NewQueueCache(memory.QueueCacheOptions{Lifetime: s.cfg.CacheLifetime}), nil, nil
	}
	cache, err := redis.Open(ctx, s.cfg.RedisURL, redis.Options{Logger: s.log})
	if err != nil {
		return nil, nil, &ConfigError{"RETSU_REDIS_URL (--redis-url)", err.Error()}
	}
	s.closers.add(cache.Close)
	return cache, cache.Ping, nil
}

// Serve listens on cfg.Addr, and on cfg.SQSAddr when it is set, and serves the API and the
// SQS endpoint until ctx is done, then stops accepting connections and waits up to
// cfg.ShutdownTimeout for the requests in flight.
func (s *Server) Serve(ctx context.Context) error {
	listener, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	sqs, err := s.startSQS()
	if err != nil {
		listener.Close()
		return err
	}
	peersFailed, err := s.startPeers()
	if err != nil {
		listener.Close()
		_ = sqs.shutdown(context.Background())
		return err
	}
	server := httpapi.NewServer(s.handler, httpapi.ServerOptions{
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		Logger:            s.log,
	})
	served := make(chan error, 1)
	go func() {
		served <- server.Serve(httpapi.NewListener(capacity.Listener(listener, s.capacity.Connections)))
	}()
	s.log.Info("serving the API", "addr", listener.Addr().String(), "store", s.cfg.Store)
	stopCleaners := s.startCleaners()
	defer stopCleaners()

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case err := <-sqs.failed():
		return fmt.Errorf("serve the SQS endpoint: %w", err)
	case err := <-peersFailed:
		return fmt.Errorf("serve the peers: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: waiting for requests in flight", "timeout", s.cfg.ShutdownTimeout)
	s.service.Close() // waiting dequeues answer now, with nothing
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	sqsStopped := make(chan error, 1)
	go func() { sqsStopped <- sqs.shutdown(shutdownCtx) }()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	if err := <-sqsStopped; err != nil {
		return err
	}
	s.log.Info("stopped")
	return nil
}

// startCleaners runs the cleaners in the background, when there are, and returns the
// function that stops them and waits until they have.
func (s *Server) startCleaners() (stop func()) {
	if s.cleaners == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.cleaners.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Close releases the connections, in the reverse order of their opening.
func (s *Server) Close() {
	if s.service != nil {
		s.service.Close()
	}
	s.closers.close()
	s.stores.closers.close()
}
