package process

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// Config is the configuration of a Retsu process. Every setting comes from its default, then
// its environment variable, then its command-line flag, the later winning.
type Config struct {
	// Addr is the address the API listens on.
	Addr string
	// Store selects the stores: "postgres", or "memory" (nothing is durable).
	Store string
	// DatabaseURL locates PostgreSQL; required with the postgres store.
	DatabaseURL string
	// RedisURL locates the shared queue-details cache; without it each instance caches
	// queue details in its own memory for CacheLifetime.
	RedisURL string
	// Migrate applies the schema migrations before serving.
	Migrate bool
	// DBMaxConns caps the PostgreSQL connections of the process.
	DBMaxConns int
	// DBConnectTimeout bounds each attempt to open a PostgreSQL connection, so that an
	// unreachable database fails requests quickly instead of holding them.
	DBConnectTimeout time.Duration
	// DBRoundsInFlight caps the transactions of coalesced enqueues, dequeues and
	// acknowledgements that may be in PostgreSQL at once (see postgres.MessageStoreOptions).
	DBRoundsInFlight int

	// CacheLifetime bounds how long an instance without Redis keeps queue details, and so
	// how long it may take to see another instance's update.
	CacheLifetime time.Duration

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// ShutdownTimeout bounds how long a stopping server waits for requests in flight.
	ShutdownTimeout time.Duration
	// RequestTimeout bounds the work of one request, database calls included; a request
	// that runs out of time gets 503.
	RequestTimeout time.Duration
	// MaxConcurrentRequests caps the requests served at once; the others get 503.
	MaxConcurrentRequests int
	// MaxWaitingRequests caps the dequeues that wait for a message (long polls), which
	// MaxConcurrentRequests leaves out; the others get 503.
	MaxWaitingRequests int
	// MaxBodyBytesInFlight caps the bytes of request bodies held at once; past it, requests
	// get 503 before their body is read.
	MaxBodyBytesInFlight int
	// MaxConnections caps the open connections; past it, new ones wait to be accepted.
	// These three caps and MaxConcurrentRequests are shared by the API and the SQS
	// endpoint.
	MaxConnections int
	// APITokens, when set, are the bearer tokens that API requests must present. They
	// are secrets: never log them.
	APITokens []string
	// SQSAddr, when set, is the address of the SQS-compatible endpoint (docs/sqs.md).
	SQSAddr string
	// SQSCredentials, when set, are the ACCESS_KEY_ID:SECRET_KEY pairs that SQS requests
	// must be signed with. They are secrets: never log them.
	SQSCredentials []string
	// SQSRegion, when set, is the region of every queue ARN of the SQS endpoint; empty,
	// each request's ARNs have the region it is signed for.
	SQSRegion string

	// PeerAddr, when set, is the address at which this instance takes the rounds that other
	// instances on its database forward to it while it leads (docs/operations.md).
	PeerAddr string
	// PeerAdvertise is the host:port at which the other instances reach PeerAddr; empty,
	// PeerAddr.
	PeerAdvertise string
	// PeerToken authenticates the instances to each other. It is a secret: never log it.
	PeerToken string

	// Dashboard serves the dashboard's pages at /ui/ beside the API.
	Dashboard bool

	// Workers runs the cleaners inside `retsu serve`.
	Workers bool
	// Cleaners configure the expired-message and dead-letter cleaners.
	Cleaners app.CleanerSettings

	LogLevel  slog.Level
	LogFormat string
}

// Store names.
const (
	StorePostgres = "postgres"
	StoreMemory   = "memory"
)

// ConfigError reports a missing or malformed setting, naming its variable or flag.
type ConfigError struct {
	Setting string
	Problem string
}

func (e *ConfigError) Error() string { return e.Setting + ": " + e.Problem }

// ErrHelp is returned by the parsers when the arguments ask for help, which they printed.
var ErrHelp = flag.ErrHelp

// LookupEnv finds an environment variable, as os.LookupEnv does: set is false when the
// variable is not set at all, which the parsers tell apart from a variable set to "".
type LookupEnv func(name string) (value string, set bool)

// ParseServeConfig reads the configuration of `retsu serve` from args and the environment.
// Returns a *ConfigError for a missing or malformed setting, or ErrHelp.
func ParseServeConfig(args []string, lookupEnv LookupEnv, output io.Writer) (Config, error) {
	c, err := parseConfig("serve", args, lookupEnv, output, func(b *binder, c *Config) {
		b.fs.Usage = usage(b.fs, "retsu serve [flags]",
			"Serves the HTTP API; applies the schema migrations first unless --migrate=false.")
		b.string(&c.Addr, "addr", "RETSU_ADDR", "127.0.0.1:2424", "address to listen on")
		b.choice(&c.Store, "store", "RETSU_STORE", StorePostgres, []string{StorePostgres, StoreMemory}, "stores: postgres, or memory (not durable)")
		b.databaseURL(c)
		b.string(&c.RedisURL, "redis-url", "RETSU_REDIS_URL", "", "Redis URL of the shared queue-details cache (optional)")
		b.bool(&c.Migrate, "migrate", "RETSU_MIGRATE", true, "apply schema migrations before serving")
		b.dbMaxConns(c, 16)
		b.dbConnectTimeout(c)
		b.int(&c.DBRoundsInFlight, "db-rounds-in-flight", "RETSU_DB_ROUNDS_IN_FLIGHT", 1, 1, "transactions of coalesced requests in PostgreSQL at once")
		b.duration(&c.CacheLifetime, "cache-lifetime", "RETSU_CACHE_LIFETIME", time.Second, 10*time.Millisecond, "how long an instance without Redis keeps queue details")
		b.duration(&c.ReadHeaderTimeout, "read-header-timeout", "RETSU_READ_HEADER_TIMEOUT", 5*time.Second, 100*time.Millisecond, "time allowed to read request headers")
		b.duration(&c.ReadTimeout, "read-timeout", "RETSU_READ_TIMEOUT", 15*time.Second, 100*time.Millisecond, "time allowed to read a whole request")
		b.duration(&c.WriteTimeout, "write-timeout", "RETSU_WRITE_TIMEOUT", 50*time.Second, time.Second,
			"time allowed to read a request's body and answer it; must exceed the read timeout plus the longest long poll (20s) plus the request timeout")
		b.duration(&c.IdleTimeout, "idle-timeout", "RETSU_IDLE_TIMEOUT", 120*time.Second, time.Second, "time a kept-alive connection may stay idle")
		b.int(&c.MaxHeaderBytes, "max-header-bytes", "RETSU_MAX_HEADER_BYTES", 64<<10, 1024, "largest accepted request line and headers in bytes; 431 past it")
		b.duration(&c.ShutdownTimeout, "shutdown-timeout", "RETSU_SHUTDOWN_TIMEOUT", 30*time.Second, time.Second, "time a stopping server waits for requests in flight")
		b.duration(&c.RequestTimeout, "request-timeout", "RETSU_REQUEST_TIMEOUT", 10*time.Second, 100*time.Millisecond, "time allowed for the work of one request (a long poll has its wait on top)")
		b.int(&c.MaxConcurrentRequests, "max-concurrent-requests", "RETSU_MAX_CONCURRENT_REQUESTS", 256, 1, "requests served at once, long polls and probes apart; the others get 503")
		b.int(&c.MaxWaitingRequests, "max-waiting-requests", "RETSU_MAX_WAITING_REQUESTS", 10000, 1, "dequeues waiting for a message at once (long polls); the others get 503")
		b.int(&c.MaxBodyBytesInFlight, "max-body-bytes-in-flight", "RETSU_MAX_BODY_BYTES_IN_FLIGHT", 64<<20, minBodyBytesInFlight,
			"bytes of request bodies held at once, by the API and the SQS endpoint together; past it, 503")
		b.int(&c.MaxConnections, "max-connections", "RETSU_MAX_CONNECTIONS", 16384, 16,
			"open connections of the API and the SQS endpoint together; past it, new ones wait to be accepted")
		b.tokens(&c.APITokens, "api-tokens", "RETSU_API_TOKENS", "comma-separated bearer tokens that API requests must present (none: no authentication)")
		b.sqs(c)
		b.peers(c)
		b.bool(&c.Dashboard, "dashboard", "RETSU_DASHBOARD", true, "serve the dashboard at /ui/")
		b.bool(&c.Workers, "workers", "RETSU_WORKERS", true, "run the cleaners in this process")
		b.cleaners(c)
	})
	switch {
	case err != nil:
		return Config{}, err
	case len(c.args) > 0:
		return Config{}, strayArguments(c.args)
	case c.Store == StorePostgres && c.DatabaseURL == "":
		return Config{}, &ConfigError{"RETSU_DATABASE_URL (--database-url)", "is required with the postgres store"}
	case c.WriteTimeout <= c.ReadTimeout+domain.MaxWait+c.RequestTimeout:
		// net/http starts the write timeout once a request's headers are read. A long poll
		// answers after its body (which may arrive slowly, within the read timeout), its
		// wait and its work: a write timeout within that would cut the answer off.
		return Config{}, &ConfigError{"RETSU_WRITE_TIMEOUT (--write-timeout)", fmt.Sprintf(
			"must be longer than RETSU_READ_TIMEOUT (%s), for a body sent slowly, plus the longest long poll (%s) plus RETSU_REQUEST_TIMEOUT (%s), that is more than %s",
			c.ReadTimeout, domain.MaxWait, c.RequestTimeout, c.ReadTimeout+domain.MaxWait+c.RequestTimeout)}
	}
	if err := checkSQS(c.Config); err != nil {
		return Config{}, err
	}
	if err := checkPeers(c.Config); err != nil {
		return Config{}, err
	}
	return c.Config, nil
}

// ParseWorkConfig reads the configuration of `retsu work`, which runs the cleaners alone.
// Returns a *ConfigError for a missing or malformed setting, or ErrHelp.
func ParseWorkConfig(args []string, lookupEnv LookupEnv, output io.Writer) (Config, error) {
	c, err := parseConfig("work", args, lookupEnv, output, func(b *binder, c *Config) {
		b.fs.Usage = usage(b.fs, "retsu work [flags]",
			"Runs the expired-message and dead-letter cleaners without the API; applies the schema migrations first unless --migrate=false.")
		c.Store = StorePostgres
		b.databaseURL(c)
		b.bool(&c.Migrate, "migrate", "RETSU_MIGRATE", true, "apply schema migrations before working")
		b.dbMaxConns(c, 4)
		b.dbConnectTimeout(c)
		b.cleaners(c)
	})
	switch {
	case err != nil:
		return Config{}, err
	case len(c.args) > 0:
		return Config{}, strayArguments(c.args)
	case c.DatabaseURL == "":
		return Config{}, &ConfigError{"RETSU_DATABASE_URL (--database-url)", "is required"}
	}
	return c.Config, nil
}

// MigrateCommands are the subcommands of `retsu migrate`.
var MigrateCommands = []string{"up", "down", "version"}

// ParseMigrateConfig reads the configuration of `retsu migrate` and returns the
// subcommand. Returns a *ConfigError for a missing or malformed setting or subcommand, or
// ErrHelp.
func ParseMigrateConfig(args []string, lookupEnv LookupEnv, output io.Writer) (Config, string, error) {
	// The subcommand may come before the flags (retsu migrate up --database-url …) or after.
	var command string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		command, args = args[0], args[1:]
	}
	c, err := parseConfig("migrate", args, lookupEnv, output, func(b *binder, c *Config) {
		b.fs.Usage = usage(b.fs, "retsu migrate up|down|version [flags]",
			"Applies every pending schema migration (up), reverts the latest one (down), or prints the schema version.")
		b.databaseURL(c)
	})
	if err != nil {
		return Config{}, "", err
	}
	if command == "" && len(c.args) == 1 {
		command, c.args = c.args[0], nil
	}
	switch {
	case len(c.args) > 0 || !slices.Contains(MigrateCommands, command):
		return Config{}, "", &ConfigError{"arguments", "expected one of up, down or version"}
	case c.DatabaseURL == "":
		return Config{}, "", &ConfigError{"RETSU_DATABASE_URL (--database-url)", "is required"}
	}
	return c.Config, command, nil
}

// strayArguments refuses arguments after the flags without repeating them: one is most
// often the rest of a flag's value that an unquoted space cut off, such as half a token or
// of a database URL.
func strayArguments(args []string) error {
	return &ConfigError{"arguments", fmt.Sprintf(
		"%d unexpected argument(s) after the flags, not shown as they may hold part of a secret; quote flag values that contain spaces", len(args))}
}

// parsed is a Config with the positional arguments that followed the flags.
type parsed struct {
	Config
	args []string
}

// parseConfig registers the settings every command shares and those of register, then
// reads the environment and args.
func parseConfig(command string, args []string, lookupEnv LookupEnv, output io.Writer,
	register func(*binder, *Config)) (parsed, error) {
	fs := flag.NewFlagSet("retsu "+command, flag.ContinueOnError)
	fs.SetOutput(output)
	b := &binder{fs: fs, lookupEnv: lookupEnv}
	var c Config
	b.level(&c.LogLevel, "log-level", "RETSU_LOG_LEVEL", slog.LevelInfo, "log level: debug, info, warn or error")
	b.choice(&c.LogFormat, "log-format", "RETSU_LOG_FORMAT", "text", []string{"text", "json"}, "log format: text or json")
	register(b, &c)
	if err := errors.Join(b.errs...); err != nil {
		return parsed{}, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return parsed{}, ErrHelp
		}
		return parsed{}, &ConfigError{"arguments", err.Error()}
	}
	if err := errors.Join(b.errs...); err != nil {
		return parsed{}, err
	}
	return parsed{Config: c, args: fs.Args()}, nil
}

func usage(fs *flag.FlagSet, synopsis, description string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: %s\n", synopsis)
		if description != "" {
			fmt.Fprintf(out, "\n%s\n", description)
		}
		fmt.Fprintln(out, "\nflags (each also read from the environment variable named in brackets):")
		fs.PrintDefaults()
	}
}

// binder registers settings that read their environment variable first and their flag
// second, collecting malformed values as *ConfigError.
type binder struct {
	fs        *flag.FlagSet
	lookupEnv LookupEnv
	errs      []error
}

// bind sets the default and registers the flag, so that --help shows the built-in default
// (never a secret from the environment), then applies the environment's value. A variable
// set to "" keeps the default, as if it were not set; tokens refuses it instead.
func bind[T any](b *binder, p *T, name, env string, def T, usage string, parse func(string) (T, error)) {
	bindValue(b, &flagValue[T]{p: p, parse: parse}, name, env, def, usage)
}

// bindSecret is bind for a setting that holds secrets. The flag package quotes the value
// of a flag it could not set, in its error and in what it prints, so a malformed value of
// this flag is recorded here instead, naming the flag and not the value.
func bindSecret[T any](b *binder, p *T, name, env string, usage string, parse func(string) (T, error)) {
	refuse := func(err error) { b.errs = append(b.errs, &ConfigError{"--" + name, err.Error()}) }
	bindValue(b, &flagValue[T]{p: p, parse: parse, refuse: refuse}, name, env, *new(T), usage)
}

func bindValue[T any](b *binder, v *flagValue[T], name, env string, def T, usage string) {
	p, parse := v.p, v.parse
	*p = def
	b.fs.Var(v, name, usage+" ["+env+"]")
	if text, _ := b.lookupEnv(env); text != "" {
		value, err := parse(text)
		if err != nil {
			b.errs = append(b.errs, &ConfigError{env, err.Error()})
		} else {
			*p = value
		}
	}
}

// flagValue is a flag.Value for any parse function.
type flagValue[T any] struct {
	p     *T
	parse func(string) (T, error)
	// refuse, when set, takes the errors of Set, which then succeeds.
	refuse func(error)
}

func (v *flagValue[T]) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	if list, ok := any(*v.p).([]string); ok {
		return strings.Join(list, ",")
	}
	return fmt.Sprint(*v.p)
}

func (v *flagValue[T]) Set(text string) error {
	parsed, err := v.parse(text)
	if err != nil && v.refuse != nil {
		v.refuse(err)
		return nil
	}
	if err != nil {
		return err
	}
	*v.p = parsed
	return nil
}

// IsBoolFlag lets boolean flags stand alone (--migrate) as well as take a value
// (--migrate=false).
func (v *flagValue[T]) IsBoolFlag() bool {
	_, ok := any(v.p).(*bool)
	return ok
}

func (b *binder) string(p *string, name, env, def, usage string) {
	bind(b, p, name, env, def, usage, func(s string) (string, error) { return s, nil })
}

func (b *binder) databaseURL(c *Config) {
	b.string(&c.DatabaseURL, "database-url", "RETSU_DATABASE_URL", "", "PostgreSQL URL, such as postgres://user@host:5432/db")
}

// maxDBConns bounds RETSU_DB_MAX_CONNS. PostgreSQL serves each connection with a process of
// its own and defaults to 100 in all; a pool larger than this is a typo (or a unit mistake),
// and a value past int32 would wrap around in pgx's setting.
const maxDBConns = 1000

func (b *binder) dbMaxConns(c *Config, def int) {
	b.intRange(&c.DBMaxConns, "db-max-conns", "RETSU_DB_MAX_CONNS", def, 1, maxDBConns, "maximum PostgreSQL connections of the process")
}

func (b *binder) dbConnectTimeout(c *Config) {
	b.duration(&c.DBConnectTimeout, "db-connect-timeout", "RETSU_DB_CONNECT_TIMEOUT", 5*time.Second, 100*time.Millisecond, "time allowed to open a PostgreSQL connection")
}

// cleaners registers the settings of the cleaners. A pass every second at most keeps
// several instances from hammering the database with passes that find nothing.
func (b *binder) cleaners(c *Config) {
	b.duration(&c.Cleaners.Interval, "cleanup-interval", "RETSU_CLEANUP_INTERVAL", app.DefaultCleanupInterval, time.Second, "time between two passes of the cleaners")
	b.int(&c.Cleaners.BatchSize, "cleanup-batch-size", "RETSU_CLEANUP_BATCH_SIZE", app.DefaultCleanupBatchSize, 1, "rows a cleaner deletes per statement")
	b.number(&c.Cleaners.Rest, "cleanup-rest", "RETSU_CLEANUP_REST", app.DefaultCleanupRest, 0.1, 100,
		"after each full batch a cleaner waits this many times as long as the batch took")
	b.duration(&c.Cleaners.DeadLetterRetention, "dead-letter-retention", "RETSU_DEAD_LETTER_RETENTION", app.DefaultDeadLetterRetention, time.Minute, "how long dead letters are kept")
	b.duration(&c.Cleaners.IdempotencyRetention, "idempotency-retention", "RETSU_IDEMPOTENCY_RETENTION", domain.DefaultIdempotencyRetention, time.Minute,
		"how long an Idempotency-Key replays its enqueue")
}

// minBodyBytesInFlight is room for the largest body of either listener (2 MiB and one byte
// for the SQS endpoint) and then some.
const minBodyBytesInFlight = 4 << 20

// minTokenLength keeps guessable tokens out.
const minTokenLength = 16

// tokens registers a comma-separated list of secrets. Malformed values are reported
// without the secrets themselves. A variable set to "" (or to spaces) is refused like one
// of commas only: it is most often a secret that failed to reach the environment, and
// serving without authentication then would be the wrong way to fail.
func (b *binder) tokens(p *[]string, name, env, usage string) {
	if text, set := b.lookupEnv(env); set && strings.TrimSpace(text) == "" {
		b.errs = append(b.errs, &ConfigError{env, "is set but holds no token; unset it to serve without authentication"})
	}
	bindSecret(b, p, name, env, usage, func(s string) ([]string, error) {
		var tokens []string
		for _, token := range strings.Split(s, ",") {
			token = strings.TrimSpace(token)
			if token == "" {
				continue
			}
			if len(token) < minTokenLength || strings.ContainsAny(token, " \t\r\n") {
				return nil, fmt.Errorf("every token must be at least %d characters without spaces", minTokenLength)
			}
			tokens = append(tokens, token)
		}
		if len(tokens) == 0 {
			return nil, errors.New("must hold at least one token when set")
		}
		return tokens, nil
	})
}

func (b *binder) bool(p *bool, name, env string, def bool, usage string) {
	bind(b, p, name, env, def, usage, func(s string) (bool, error) {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return false, fmt.Errorf("must be true or false, not %q", s)
		}
		return v, nil
	})
}

// int registers a whole number of at least min.
func (b *binder) int(p *int, name, env string, def, min int, usage string) {
	if min > 1 {
		usage += fmt.Sprintf(" (at least %d)", min)
	}
	bind(b, p, name, env, def, usage, func(s string) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil || v < min {
			return 0, fmt.Errorf("must be a whole number of at least %d, not %q", min, s)
		}
		return v, nil
	})
}

// intRange registers a whole number from min to max, which the usage text names.
func (b *binder) intRange(p *int, name, env string, def, min, max int, usage string) {
	usage += fmt.Sprintf(" (%d to %d)", min, max)
	bind(b, p, name, env, def, usage, func(s string) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil || v < min || v > max {
			return 0, fmt.Errorf("must be a whole number from %d to %d, not %q", min, max, s)
		}
		return v, nil
	})
}

// number registers a decimal number from min to max, which the usage text names.
func (b *binder) number(p *float64, name, env string, def, min, max float64, usage string) {
	usage += fmt.Sprintf(" (%g to %g)", min, max)
	bind(b, p, name, env, def, usage, func(s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= min && v <= max) {
			return 0, fmt.Errorf("must be a number from %g to %g, not %q", min, max, s)
		}
		return v, nil
	})
}

// duration registers a Go duration such as 30s or 336h of at least min, which the usage
// text names.
func (b *binder) duration(p *time.Duration, name, env string, def, min time.Duration, usage string) {
	usage += fmt.Sprintf(" (at least %s)", shortDuration(min))
	bind(b, p, name, env, def, usage, func(s string) (time.Duration, error) {
		v, err := time.ParseDuration(s)
		if err != nil || v < min {
			return 0, fmt.Errorf("must be a duration of at least %s, such as 30s or 336h, not %q", shortDuration(min), s)
		}
		return v, nil
	})
}

// shortDuration spells d without trailing zero units: 1m rather than 1m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (b *binder) choice(p *string, name, env, def string, choices []string, usage string) {
	bind(b, p, name, env, def, usage, func(s string) (string, error) {
		if slices.Contains(choices, s) {
			return s, nil
		}
		return "", fmt.Errorf("must be one of %s, not %q", strings.Join(choices, ", "), s)
	})
}

func (b *binder) level(p *slog.Level, name, env string, def slog.Level, usage string) {
	bind(b, p, name, env, def, usage, func(s string) (slog.Level, error) {
		var l slog.Level
		if err := l.UnmarshalText([]byte(s)); err != nil {
			return 0, fmt.Errorf("must be debug, info, warn or error, not %q", s)
		}
		return l, nil
	})
}
