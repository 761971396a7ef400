// Package domain holds Retsu's lifecycle rules as plain types and pure functions: queue
// names and setting ranges with their defaults, message priorities and their order, and the
// delivery rules that decide when a message is ready, leased, exhausted, expired or
// removable, and which receipt handle may acknowledge it.
//
// Every rule that depends on time takes "now" as an argument; nothing here reads a clock or
// performs I/O. The memory adapter applies these rules directly and the PostgreSQL adapter
// restates them in SQL; the conformance suites in ports/porttest keep the two in agreement.
package domain
