// Package postgres implements Retsu's QueueStore and MessageStore on PostgreSQL with pgx/v5,
// and applies the schema in package migrations with golang-migrate.
//
// PostgreSQL's clock (now()) takes every time decision, so that API instances with skewed
// clocks agree. Every statement is in queries.go with the index it relies on; driver errors
// are translated here, at the adapter's edge, into domain errors (not found, already exists,
// unavailable) or wrapped as internal errors.
package postgres
