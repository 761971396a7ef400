// Package process assembles Retsu's processes from their configuration: the API server of
// `retsu serve` (Server) and the cleaners-only worker of `retsu work` (Worker). It reads the
// Config from the environment and the command line, chooses and connects the adapters
// (PostgreSQL or memory stores, Redis or an in-process cache, Prometheus metrics, the HTTP
// API), and applies the schema migrations.
//
// It is the composition root, kept apart from the use cases in package app so that an
// embedder who imports app for its Service builds none of pgx, rueidis, gorilla/mux,
// golang-migrate or client_golang. It lives under app/ rather than in cmd/retsu so that its
// configuration and assembly are tested on their own, and so that a program that builds its
// own binary around Retsu can reuse them; cmd/retsu only parses the command and calls it.
// Nothing else in the project imports it.
package process
