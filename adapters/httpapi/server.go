package httpapi

import (
	"log/slog"
	"net/http"
	"time"
)

// ServerOptions bound what one connection may cost the server.
type ServerOptions struct {
	// ReadHeaderTimeout bounds the time to read a request's headers: a client that sends
	// them slowly is disconnected.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to read a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request's headers to the end of
	// the answer; it must cover the longest long poll plus the request timeout.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection may wait for its next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes is the bound that the handler answers with 431 headers_too_large
	// (Options.MaxHeaderBytes): net/http gets twice as much, so that it refuses only headers
	// far beyond it, with its own plain-text 431 (see docs/queue-api.md).
	MaxHeaderBytes int
	// Logger receives the server's own errors (such as TLS handshakes or panics).
	Logger *slog.Logger
}

// NewServer returns an HTTP server for handler with the bounds of o. Serve it on a listener
// from NewListener, so that the handler can refuse requests framed two ways.
func NewServer(handler http.Handler, o ServerOptions) *http.Server {
	s := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    2 * o.MaxHeaderBytes,
		ConnContext:       withFramer,
		// OPTIONS * goes to the handler, which asks for a token and answers 404, instead
		// of net/http's own 200 to anyone.
		DisableGeneralOptionsHandler: true,
	}
	if o.Logger != nil {
		s.ErrorLog = slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)
	}
	return s
}
