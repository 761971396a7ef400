package process

import (
	"errors"
	"fmt"
	"io"

	"github.com/retsu/retsu/adapters/postgres"
)

// Migrate runs a migration command (up, down or version) on the database at databaseURL,
// printing the version to out for "version".
func Migrate(databaseURL, command string, out io.Writer) error {
	migrator, err := postgres.NewMigrator(databaseURL)
	if err != nil {
		return databaseURLError(err)
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

// databaseURLError names the setting when err reports a malformed database URL, whose value
// it does not repeat: it may hold a password.
func databaseURLError(err error) error {
	if errors.Is(err, postgres.ErrMalformedURL) {
		return &ConfigError{"RETSU_DATABASE_URL (--database-url)", "is not a valid PostgreSQL URL or connection string (its value is not shown: it may hold a password)"}
	}
	return err
}
