package process

import (
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// LogValue shows the configuration in logs without its secrets: the passwords of the
// database and Redis URLs are replaced by xxxxx, and the API tokens and the SQS credentials
// are only counted. The
// settings of the API appear only in the configuration of `retsu serve`, the only command
// that has an address, and those of the cleaners only where they run.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("store", c.Store),
		slog.String("database_url", redactURL(c.DatabaseURL)),
		slog.Bool("migrate", c.Migrate),
		slog.Int("db_max_conns", c.DBMaxConns),
		slog.Duration("db_connect_timeout", c.DBConnectTimeout),
	}
	if c.Addr != "" {
		attrs = append(attrs,
			slog.String("addr", c.Addr),
			slog.String("redis_url", redactURL(c.RedisURL)),
			slog.Int("db_rounds_in_flight", c.DBRoundsInFlight),
			slog.Duration("cache_lifetime", c.CacheLifetime),
			slog.Duration("read_header_timeout", c.ReadHeaderTimeout),
			slog.Duration("read_timeout", c.ReadTimeout),
			slog.Duration("write_timeout", c.WriteTimeout),
			slog.Duration("idle_timeout", c.IdleTimeout),
			slog.Int("max_header_bytes", c.MaxHeaderBytes),
			slog.Duration("shutdown_timeout", c.ShutdownTimeout),
			slog.Duration("request_timeout", c.RequestTimeout),
			slog.Int("max_concurrent_requests", c.MaxConcurrentRequests),
			slog.Int("max_waiting_requests", c.MaxWaitingRequests),
			slog.Int("max_body_bytes_in_flight", c.MaxBodyBytesInFlight),
			slog.Int("max_connections", c.MaxConnections),
			slog.Int("api_tokens", len(c.APITokens)),
			slog.Bool("dashboard", c.Dashboard),
			slog.String("sqs_addr", c.SQSAddr),
			slog.String("peer_addr", c.PeerAddr),
			slog.String("peer_advertise", c.PeerAdvertise),
			slog.Int("sqs_credentials", len(c.SQSCredentials)),
			slog.String("sqs_region", c.SQSRegion),
			slog.Bool("workers", c.Workers),
		)
	}
	if c.Cleaners.Interval > 0 {
		attrs = append(attrs,
			slog.Duration("cleanup_interval", c.Cleaners.Interval),
			slog.Int("cleanup_batch_size", c.Cleaners.BatchSize),
			slog.Float64("cleanup_rest", c.Cleaners.Rest),
			slog.Duration("dead_letter_retention", c.Cleaners.DeadLetterRetention),
			slog.Duration("idempotency_retention", c.Cleaners.IdempotencyRetention),
		)
	}
	attrs = append(attrs, slog.String("log_level", c.LogLevel.String()), slog.String("log_format", c.LogFormat))
	return slog.GroupValue(attrs...)
}

// passwordSetting finds a password in a URL's query ("?password=secret") or in a key/value
// connection string ("host=db password='s e c r e t'"), both of which pgx accepts.
var passwordSetting = regexp.MustCompile(`((?:^|[\s?&])(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// redactURL returns a database or Redis URL, or a key/value connection string, with its
// passwords replaced by xxxxx.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		s = u.Redacted()
	} else {
		s = redactMalformedUserInfo(s)
	}
	return passwordSetting.ReplaceAllString(s, "${1}xxxxx")
}

// redactMalformedUserInfo replaces the password of a URL that net/url cannot parse (a bad
// port, a stray %): whatever lies between the first colon after the scheme and the last @.
// A password may hold unescaped / or @, so it redacts too much rather than too little.
func redactMalformedUserInfo(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	at := strings.LastIndex(rest, "@")
	if !ok || at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return s
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// NewLogger returns the logger that cfg describes, writing to w.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	options := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, options))
	}
	return slog.New(slog.NewTextHandler(w, options))
}
