package process_test

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app/process"
)

// env returns a lookup of the given variables, as os.LookupEnv: a variable in vars is set,
// even to "".
func env(vars map[string]string) process.LookupEnv {
	return func(name string) (string, bool) {
		value, set := vars[name]
		return value, set
	}
}

var withDatabase = map[string]string{"RETSU_DATABASE_URL": "postgres://retsu@127.0.0.1:55432/retsu"}

func TestParseServeConfig_Defaults(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, err := process.ParseServeConfig(nil, env(withDatabase), io.Discard)
	is.NoErr(err)
	is.Equal(c.Addr, "127.0.0.1:2424")                      // loopback by default
	is.Equal(c.Store, process.StorePostgres)                // PostgreSQL by default
	is.True(c.Migrate)                                      // migrating first
	is.True(c.Workers)                                      // with the cleaners
	is.True(c.Dashboard)                                    // with the dashboard at /ui/
	is.Equal(c.Cleaners.Interval, 30*time.Second)           // every 30 s
	is.Equal(c.Cleaners.BatchSize, 1000)                    // 1,000 rows a statement
	is.Equal(c.Cleaners.Rest, 1.0)                          // resting as long as each batch took
	is.Equal(c.Cleaners.DeadLetterRetention, 336*time.Hour) // keeping dead letters 14 days
	is.Equal(c.LogLevel, slog.LevelInfo)                    // logging at info
	is.Equal(c.ReadHeaderTimeout, 5*time.Second)            // with server timeouts
	is.Equal(c.WriteTimeout, 50*time.Second)                // the write timeout above a slow body, a long poll and the request timeout
	is.Equal(c.Cleaners.IdempotencyRetention, 24*time.Hour) // idempotency keys kept a day
	is.Equal(c.MaxConcurrentRequests, 256)                  // 256 requests served at once
	is.Equal(c.MaxWaitingRequests, 10000)                   // and 10,000 long polls
	is.Equal(c.MaxBodyBytesInFlight, 64<<20)                // 64 MiB of request bodies in memory
	is.Equal(c.MaxConnections, 16384)                       // 16,384 open connections
	is.Equal(len(c.APITokens), 0)                           // no tokens when the variable is not set
}

func TestParseServeConfig_Part2Settings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := merge(withDatabase, "RETSU_IDEMPOTENCY_RETENTION", "1h")
	vars["RETSU_MAX_WAITING_REQUESTS"] = "50"

	c, err := process.ParseServeConfig(nil, env(vars), io.Discard)
	is.NoErr(err)
	is.Equal(c.Cleaners.IdempotencyRetention, time.Hour) // the retention of idempotency keys from the environment
	is.Equal(c.MaxWaitingRequests, 50)                   // and the cap on long polls
	c, err = process.ParseServeConfig([]string{"--idempotency-retention=2h", "--max-waiting-requests=7"}, env(vars), io.Discard)
	is.NoErr(err)
	is.Equal(c.Cleaners.IdempotencyRetention, 2*time.Hour) // flags win
	is.Equal(c.MaxWaitingRequests, 7)
	w, err := process.ParseWorkConfig(nil, env(vars), io.Discard)
	is.NoErr(err)
	is.Equal(w.Cleaners.IdempotencyRetention, time.Hour) // retsu work's cleaners take it too
}

func TestParseServeConfig_EmptyVariableKeepsTheDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := merge(withDatabase, "RETSU_ADDR", "")
	vars["RETSU_CLEANUP_INTERVAL"] = ""

	c, err := process.ParseServeConfig(nil, env(vars), io.Discard)

	is.NoErr(err)
	is.Equal(c.Addr, "127.0.0.1:2424")            // an empty address is no address: the default stays
	is.Equal(c.Cleaners.Interval, 30*time.Second) // and so does an empty duration's
}

func TestParseServeConfig_WriteTimeoutMustExceedASlowBodyALongPollAndTheRequestTimeout(t *testing.T) {
	t.Parallel()
	// net/http starts the write timeout once the headers are read: a dequeue's body that
	// arrives slowly, within the read timeout, then its wait, then its work must fit.
	tests := []struct {
		write, read, request string
		ok                   bool
	}{
		{"", "", "", true},
		{"46s", "15s", "10s", true},
		{"45s", "15s", "10s", false},
		{"40s", "15s", "10s", false},
		{"31s", "100ms", "10s", true},
		{"30s", "100ms", "10s", false},
		{"29s", "", "", false},
		{"", "", "25s", false},
		{"1m", "", "24s", true},
		{"1m", "30s", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.write+"/"+tc.read+"/"+tc.request, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			vars := merge(withDatabase, "RETSU_WRITE_TIMEOUT", tc.write)
			vars["RETSU_READ_TIMEOUT"] = tc.read
			vars["RETSU_REQUEST_TIMEOUT"] = tc.request

			err := serve(nil, env(vars))

			if tc.ok {
				is.NoErr(err) // a write timeout longer than a slow body, a long poll and the request timeout
				return
			}
			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                           // a configuration error
			is.True(strings.Contains(err.Error(), "RETSU_WRITE_TIMEOUT")) // that names the setting
			is.True(strings.Contains(err.Error(), "RETSU_READ_TIMEOUT"))  // and what it must exceed
			is.True(strings.Contains(err.Error(), "RETSU_REQUEST_TIMEOUT"))
		})
	}
}

func TestParseServeConfig_FlagsWinOverEnvironment(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := map[string]string{"RETSU_DATABASE_URL": "postgres://a/b", "RETSU_ADDR": "127.0.0.1:1", "RETSU_CLEANUP_INTERVAL": "5s"}
	c, err := process.ParseServeConfig([]string{"--addr", "127.0.0.1:2", "--workers=false"}, env(vars), io.Discard)
	is.NoErr(err)
	is.Equal(c.Addr, "127.0.0.1:2")              // the flag wins over the variable
	is.Equal(c.Cleaners.Interval, 5*time.Second) // a variable without a flag applies
	is.True(!c.Workers)                          // --workers=false turns the cleaners off
}

func TestParseServeConfig_DashboardTurnsOff(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, err := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_DASHBOARD", "false")), io.Discard)
	is.NoErr(err)
	is.True(!c.Dashboard) // RETSU_DASHBOARD=false turns the dashboard off
	c, err = process.ParseServeConfig([]string{"--dashboard=false"}, env(merge(withDatabase, "RETSU_DASHBOARD", "true")), io.Discard)
	is.NoErr(err)
	is.True(!c.Dashboard) // and so does --dashboard=false, over the variable
}

func TestParseConfig_BadSettings_NameTheirVariable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		parse   func(args []string, lookupEnv process.LookupEnv) error
		vars    map[string]string
		args    []string
		setting string
	}{
		{"serve without a database", serve, map[string]string{}, nil, "RETSU_DATABASE_URL"},
		{"negative interval", serve, merge(withDatabase, "RETSU_CLEANUP_INTERVAL", "-1s"), nil, "RETSU_CLEANUP_INTERVAL"},
		{"zero interval", serve, merge(withDatabase, "RETSU_CLEANUP_INTERVAL", "0s"), nil, "RETSU_CLEANUP_INTERVAL"},
		{"unparsable interval", serve, merge(withDatabase, "RETSU_CLEANUP_INTERVAL", "soon"), nil, "RETSU_CLEANUP_INTERVAL"},
		{"batch size of 0", serve, merge(withDatabase, "RETSU_CLEANUP_BATCH_SIZE", "0"), nil, "RETSU_CLEANUP_BATCH_SIZE"},
		{"unparsable retention", serve, merge(withDatabase, "RETSU_DEAD_LETTER_RETENTION", "14d"), nil, "RETSU_DEAD_LETTER_RETENTION"},
		{"negative retention", work, merge(withDatabase, "RETSU_DEAD_LETTER_RETENTION", "-336h"), nil, "RETSU_DEAD_LETTER_RETENTION"},
		{"cleanup rest of 0", serve, merge(withDatabase, "RETSU_CLEANUP_REST", "0"), nil, "RETSU_CLEANUP_REST"},
		{"cleanup rest not a number", serve, merge(withDatabase, "RETSU_CLEANUP_REST", "NaN"), nil, "RETSU_CLEANUP_REST"},
		{"cleanup rest flag past 100", work, withDatabase, []string{"--cleanup-rest=1e3"}, "cleanup-rest"},
		{"batch size flag of 0", work, withDatabase, []string{"--cleanup-batch-size=0"}, "cleanup-batch-size"},
		{"unknown store", serve, merge(withDatabase, "RETSU_STORE", "sqlite"), nil, "RETSU_STORE"},
		{"bad log level", serve, merge(withDatabase, "RETSU_LOG_LEVEL", "loud"), nil, "RETSU_LOG_LEVEL"},
		{"work without a database", work, map[string]string{}, nil, "RETSU_DATABASE_URL"},
		{"interval below a second", serve, merge(withDatabase, "RETSU_CLEANUP_INTERVAL", "500ms"), nil, "RETSU_CLEANUP_INTERVAL"},
		{"interval flag below a second", work, withDatabase, []string{"--cleanup-interval=999ms"}, "cleanup-interval"},
		{"request timeout below 100ms", serve, merge(withDatabase, "RETSU_REQUEST_TIMEOUT", "10ms"), nil, "RETSU_REQUEST_TIMEOUT"},
		{"read header timeout of 1ns", serve, merge(withDatabase, "RETSU_READ_HEADER_TIMEOUT", "1ns"), nil, "RETSU_READ_HEADER_TIMEOUT"},
		{"shutdown timeout below a second", serve, merge(withDatabase, "RETSU_SHUTDOWN_TIMEOUT", "100ms"), nil, "RETSU_SHUTDOWN_TIMEOUT"},
		{"dead-letter retention below a minute", work, merge(withDatabase, "RETSU_DEAD_LETTER_RETENTION", "59s"), nil, "RETSU_DEAD_LETTER_RETENTION"},
		{"idempotency retention below a minute", serve, merge(withDatabase, "RETSU_IDEMPOTENCY_RETENTION", "30s"), nil, "RETSU_IDEMPOTENCY_RETENTION"},
		{"unparsable idempotency retention", serve, merge(withDatabase, "RETSU_IDEMPOTENCY_RETENTION", "1d"), nil, "RETSU_IDEMPOTENCY_RETENTION"},
		{"no waiting requests", serve, merge(withDatabase, "RETSU_MAX_WAITING_REQUESTS", "0"), nil, "RETSU_MAX_WAITING_REQUESTS"},
		{"waiting requests flag not a number", serve, withDatabase, []string{"--max-waiting-requests=many"}, "max-waiting-requests"},
		{"headers of 100 bytes", serve, merge(withDatabase, "RETSU_MAX_HEADER_BYTES", "100"), nil, "RETSU_MAX_HEADER_BYTES"},
		{"body budget below the largest body", serve, merge(withDatabase, "RETSU_MAX_BODY_BYTES_IN_FLIGHT", "1048576"), nil, "RETSU_MAX_BODY_BYTES_IN_FLIGHT"},
		{"no connections", serve, withDatabase, []string{"--max-connections=0"}, "max-connections"},
		{"empty tokens", serve, merge(withDatabase, "RETSU_API_TOKENS", ""), nil, "RETSU_API_TOKENS"},
		{"tokens of spaces", serve, merge(withDatabase, "RETSU_API_TOKENS", "  "), nil, "RETSU_API_TOKENS"},
		{"tokens of commas", serve, merge(withDatabase, "RETSU_API_TOKENS", ","), nil, "RETSU_API_TOKENS"},
		{"empty tokens flag", serve, withDatabase, []string{"--api-tokens="}, "api-tokens"},
		{"unknown flag", serve, withDatabase, []string{"--colour"}, "colour"},
		{"migrate without a command", migrate, withDatabase, nil, "up, down or version"},
		{"migrate sideways", migrate, withDatabase, []string{"sideways"}, "up, down or version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			err := tc.parse(tc.args, env(tc.vars))
			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                // a bad setting is a configuration error
			is.True(strings.Contains(err.Error(), tc.setting)) // that names the setting
		})
	}
}

func TestParseConfig_Help_IsNotAnError(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var out strings.Builder
	_, err := process.ParseServeConfig([]string{"--help"}, env(nil), &out)
	is.True(errors.Is(err, process.ErrHelp))                          // --help asks for help
	is.True(strings.Contains(out.String(), "RETSU_CLEANUP_INTERVAL")) // which names the variables
	for _, want := range []string{
		"time between two passes of the cleaners (at least 1s)",
		"RETSU_IDEMPOTENCY_RETENTION",
		"RETSU_MAX_WAITING_REQUESTS",
		"must exceed the read timeout plus the longest long poll (20s) plus the request timeout (at least 1s)",
	} {
		is.True(strings.Contains(out.String(), want)) // and says the minimums and the new settings
	}
}

func TestParseServeConfig_Help_ShowsNoSecretFromTheEnvironment(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var out strings.Builder
	vars := map[string]string{
		"RETSU_DATABASE_URL": "postgres://retsu:hunter2hunter2@db/retsu",
		"RETSU_API_TOKENS":   "s3cret-token-0123456789",
	}
	_, err := process.ParseServeConfig([]string{"--help"}, env(vars), &out)
	is.True(errors.Is(err, process.ErrHelp))
	is.True(!strings.Contains(out.String(), "hunter2"))      // the database password stays out of the help
	is.True(!strings.Contains(out.String(), "s3cret-token")) // and so do the tokens
}

func TestParseServeConfig_APITokens(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c, err := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_API_TOKENS", " first-token-0123456789 , second-token-0123456789,")), io.Discard)
	is.NoErr(err)
	is.Equal(c.APITokens, []string{"first-token-0123456789", "second-token-0123456789"}) // tokens are split and trimmed
	_, err = process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_API_TOKENS", "short,other-token-0123456789")), io.Discard)
	is.True(err != nil)                              // a short token is refused
	is.True(!strings.Contains(err.Error(), "short")) // without repeating it
	is.True(strings.Contains(err.Error(), "RETSU_API_TOKENS"))
}

func TestParseMigrateConfig_CommandBeforeOrAfterFlags(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, args := range [][]string{{"up", "--database-url", "postgres://x/y"}, {"--database-url", "postgres://x/y", "up"}} {
		c, command, err := process.ParseMigrateConfig(args, env(nil), io.Discard)
		is.NoErr(err)
		is.Equal(command, "up")                   // the subcommand is found
		is.Equal(c.DatabaseURL, "postgres://x/y") // and the flag
	}
}

func serve(args []string, lookupEnv process.LookupEnv) error {
	_, err := process.ParseServeConfig(args, lookupEnv, io.Discard)
	return err
}

func work(args []string, lookupEnv process.LookupEnv) error {
	_, err := process.ParseWorkConfig(args, lookupEnv, io.Discard)
	return err
}

func migrate(args []string, lookupEnv process.LookupEnv) error {
	_, _, err := process.ParseMigrateConfig(args, lookupEnv, io.Discard)
	return err
}

func merge(base map[string]string, key, value string) map[string]string {
	m := map[string]string{key: value}
	for k, v := range base {
		if k != key {
			m[k] = v
		}
	}
	return m
}

func TestParseServeConfig_BadSecretFlags_NameTheFlagWithoutTheSecret(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-short"
	tests := []struct {
		name    string
		args    []string
		setting string
	}{
		{"short token", []string{"--api-tokens=" + secret}, "--api-tokens"},
		{"token with a space", []string{"--api-tokens", secret + " 0123456789abcdef"}, "--api-tokens"},
		{"short SQS secret", []string{"--sqs-credentials=AKID:" + secret}, "--sqs-credentials"},
		{"SQS pair without a colon", []string{"--sqs-credentials", "AKID" + secret + "0123456789"}, "--sqs-credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			var out strings.Builder

			_, err := process.ParseServeConfig(tc.args, env(withDatabase), &out)

			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                // a configuration error
			is.True(strings.Contains(err.Error(), tc.setting)) // that names the flag
			is.True(!strings.Contains(err.Error(), secret))    // but not the secret
			is.True(!strings.Contains(out.String(), secret))   // which the output does not show either
		})
	}
}

func TestParseConfig_DBMaxConns_MustBeFromOneToTheBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		ok    bool
	}{
		{"1", true},
		{"1000", true},
		{"0", false},
		{"-1", false},
		{"1001", false},
		{"4294967297", false}, // 2^32 + 1 would become 1 as an int32
		{"2147483648", false}, // 2^31 would become negative, and so pgx's default
		{"many", false},
	}
	for _, tc := range tests {
		for name, parse := range map[string]func([]string, process.LookupEnv) error{"serve": serve, "work": work} {
			t.Run(name+"/"+tc.value, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)

				envErr := parse(nil, env(merge(withDatabase, "RETSU_DB_MAX_CONNS", tc.value)))
				flagErr := parse([]string{"--db-max-conns=" + tc.value}, env(withDatabase))

				if tc.ok {
					is.NoErr(envErr) // a pool size within the bound is taken
					is.NoErr(flagErr)
					return
				}
				var configErr *process.ConfigError
				is.True(errors.As(envErr, &configErr))                          // refused
				is.True(strings.Contains(envErr.Error(), "RETSU_DB_MAX_CONNS")) // naming the variable
				is.True(strings.Contains(envErr.Error(), "1 to 1000"))          // and the range
				is.True(errors.As(flagErr, &configErr))                         // the flag too
				is.True(strings.Contains(flagErr.Error(), "db-max-conns"))
				is.True(strings.Contains(flagErr.Error(), "1 to 1000"))
			})
		}
	}
}

func TestParseConfig_StrayArgument_IsRefusedWithoutRepeatingIt(t *testing.T) {
	t.Parallel()
	// An unquoted space splits a secret in two: the second half is a stray argument.
	for name, parse := range map[string]func([]string, process.LookupEnv) error{"serve": serve, "work": work} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			err := parse([]string{"--database-url", "postgres://retsu:first-half", "second-half@db/retsu"}, env(nil))

			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                    // refused
			is.True(strings.Contains(err.Error(), "argument"))     // naming what is wrong
			is.True(!strings.Contains(err.Error(), "second-half")) // without the argument, which may be half a secret
		})
	}
}
