package process

import (
	"context"
	"log/slog"

	"github.com/retsu/retsu/app"
)

// Worker is the process of `retsu work`: the cleaners alone, on the stores its Config
// chooses. It serves nothing, so it counts nothing either: its passes and their errors are
// in its logs.
type Worker struct {
	stores   *stores
	cleaners *app.Cleaners
}

// NewWorker connects the stores that cfg chooses, applying the migrations first when
// cfg.Migrate is set, and returns the worker over them.
func NewWorker(ctx context.Context, cfg Config, log *slog.Logger) (*Worker, error) {
	log.Info("configuration", "config", cfg)
	stores, err := openStores(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return &Worker{stores: stores, cleaners: newCleaners(stores, cfg, log, nil)}, nil
}

// Run runs the cleaners until ctx is done.
func (w *Worker) Run(ctx context.Context) {
	w.cleaners.Run(ctx)
}

// Close releases the connections.
func (w *Worker) Close() { w.stores.closers.close() }
