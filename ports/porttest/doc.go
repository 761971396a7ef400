// Package porttest holds one conformance suite per port. Every adapter runs the suite of the
// ports it implements, so that the memory adapters (which apply package domain directly)
// and the PostgreSQL and Redis adapters (which restate the rules in SQL and in a cache)
// cannot drift apart.
//
// The suites isolate their tests by creating fresh queue IDs and names, so they can share
// one database and run in parallel.
package porttest
