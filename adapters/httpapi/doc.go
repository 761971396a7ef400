// Package httpapi serves Retsu's HTTP API with gorilla/mux: the routes of docs/queue-api.md
// (described for tools by docs/openapi.yaml), strict request decoding, and errors as
// application/problem+json with a stable code.
//
// Everything HTTP-specific lives here: content types, body limits, JSON shape, status codes,
// the caps on concurrent and waiting requests. Handlers parse the request, call the use
// cases (app.Retsu: *app.Service in process), and encode their answer; one table maps error
// codes to statuses, and 5xx answers never carry the text of the error behind them.
package httpapi
