package postgres

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/golang-migrate/migrate/v4"
	// The pgx5:// database driver.
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/retsu/retsu/migrations"
)

// Migrator applies the migrations embedded in package migrations. golang-migrate holds an
// advisory lock while it works, so several instances may start at once.
type Migrator struct {
	m *migrate.Migrate
}

// NewMigrator returns a Migrator for the database at databaseURL (postgres:// or
// postgresql://).
func NewMigrator(databaseURL string) (*Migrator, error) {
	source, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("postgres: read embedded migrations: %w", err)
	}
	u, err := url.Parse(databaseURL)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("%w: migrations need a postgres:// URL", ErrMalformedURL)
	}
	u.Scheme = "pgx5"
	m, err := migrate.NewWithSourceInstance("iofs", source, u.String())
	if err != nil {
		return nil, fmt.Errorf("postgres: connect for migrations: %w", translate(redact(err, databaseURL)))
	}
	return &Migrator{m: m}, nil
}

// Up applies every migration not yet applied.
func (m *Migrator) Up() error {
	if err := m.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("postgres: migrate up: %w", err)
	}
	return nil
}

// Down reverts the latest applied migration.
func (m *Migrator) Down() error {
	if err := m.m.Steps(-1); err != nil {
		return fmt.Errorf("postgres: migrate down: %w", err)
	}
	return nil
}

// Version returns the version of the latest applied migration (0 when none is) and whether
// a failed migration left the schema dirty.
func (m *Migrator) Version() (version uint, dirty bool, err error) {
	version, dirty, err = m.m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres: migration version: %w", err)
	}
	return version, dirty, nil
}

// Close releases the Migrator's connection.
func (m *Migrator) Close() error {
	sourceErr, databaseErr := m.m.Close()
	return errors.Join(sourceErr, databaseErr)
}
