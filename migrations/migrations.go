// Package migrations holds Retsu's PostgreSQL schema as golang-migrate migrations, embedded
// in the binary so that `retsu migrate` and `retsu serve` need no files beside it.
//
// Files are named NNNNNN_title.up.sql and NNNNNN_title.down.sql; a released migration is
// never edited, only followed by a new one.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS
