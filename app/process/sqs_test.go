package process_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app/process"
)

const sqsSecret = "sqs-secret-0123456789abcdef"

func TestParseServeConfig_SQS_OffByDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig(nil, env(withDatabase), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSAddr, "")                   // no SQS endpoint unless asked for
	is.Equal(c.SQSCredentials, []string(nil)) // and no credentials
	is.Equal(c.SQSRegion, "")                 // and ARNs in the region of each request's signature
}

func TestParseServeConfig_SQS_Region(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig([]string{"--sqs-region", "eu-north-1"}, env(withDatabase), io.Discard)
	_, badErr := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_SQS_REGION", "EU West 1")), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSRegion, "eu-north-1")
	var configErr *process.ConfigError
	is.True(errors.As(badErr, &configErr))          // not a region's name
	is.Equal(configErr.Setting, "RETSU_SQS_REGION") // naming the setting
}

func TestParseServeConfig_SQS_AddressAndCredentials(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig([]string{"--sqs-addr", "127.0.0.1:9324"},
		env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", "AKID1:"+sqsSecret+", AKID2:"+sqsSecret+"2")), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSAddr, "127.0.0.1:9324")
	is.Equal(c.SQSCredentials, []string{"AKID1:" + sqsSecret, "AKID2:" + sqsSecret + "2"}) // every pair, trimmed
}

func TestParseServeConfig_SQS_BadCredentials_AreRefusedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	for name, value := range map[string]string{
		"no colon":     "AKID" + sqsSecret,
		"short secret": "AKID:short-secret",
		"no key ID":    ":" + sqsSecret,
		"repeated key": "AKID:" + sqsSecret + ",AKID:" + sqsSecret,
		"only a comma": ",",
		"space in key": "AK ID:" + sqsSecret,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", value)), io.Discard)

			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                     // refused
			is.Equal(configErr.Setting, "RETSU_SQS_CREDENTIALS")    // naming the setting
			is.True(!strings.Contains(err.Error(), "short-secret")) // never the secret
			is.True(!strings.Contains(err.Error(), sqsSecret))
		})
	}
}

func TestParseServeConfig_SQS_WithAPITokensButNoCredentials_IsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := merge(merge(withDatabase, "RETSU_API_TOKENS", "tok-0123456789abcdef"), "RETSU_SQS_ADDR", "127.0.0.1:9324")

	_, err := process.ParseServeConfig(nil, env(vars), io.Discard)
	_, withCredentials := process.ParseServeConfig(nil, env(merge(vars, "RETSU_SQS_CREDENTIALS", "AKID:"+sqsSecret)), io.Discard)

	var configErr *process.ConfigError
	is.True(errors.As(err, &configErr))                                   // an open SQS endpoint beside a protected API
	is.True(strings.Contains(configErr.Setting, "RETSU_SQS_CREDENTIALS")) // names what is missing
	is.NoErr(withCredentials)                                             // credentials settle it
}

func TestConfigLog_CountsTheSQSCredentials(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cfg, err := process.ParseServeConfig([]string{"--sqs-addr", "127.0.0.1:9324"},
		env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", "AKID:"+sqsSecret)), io.Discard)
	is.NoErr(err)
	var logs bytes.Buffer

	slog.New(slog.NewTextHandler(&logs, nil)).Info("configuration", "config", cfg)

	is.True(!strings.Contains(logs.String(), sqsSecret))                 // the secret never reaches the log
	is.True(strings.Contains(logs.String(), "config.sqs_credentials=1")) // they are counted
	is.True(strings.Contains(logs.String(), "config.sqs_addr=127.0.0.1:9324"))
}
