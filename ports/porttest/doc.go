// Package porttest holds one conformance suite per port. Every adapter runs the suite of the
// ports it implements, so that the memory adapters (which apply package domain directly)
// and the PostgreSQL and Redis adapters (which restate the rules in SQL and in a cache)
// cannot drift apart.
//
// The suites isolate their tests by creating fresh queue IDs and names, so they can share
// one database and run in parallel. The suites of a message store's roles (TestMessageStore,
// TestDeadLetterStore, TestCleaning, TestWakeups) take a MessageHarness, whose Wait lets
// time pass: they hold a store on a real clock and one on a manual clock to the same rules,
// with margins for the first and short waits, so that they stay fast on PostgreSQL.
package porttest
