// Package httpapitest holds the fuzz targets of the HTTP API as functions of a handler
// constructor, so that the API is fuzzed over any stores: adapters/httpapi runs them over
// the memory stores, and a package with a database runs them over PostgreSQL. Each target
// sets up its own queue per input and checks only what the contract promises for any input:
// no 5xx, every error a problem+json document, every success of the contract's shape.
package httpapitest
