package process_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app/process"
)

func TestConfigLog_ShowsTheSettingsWithoutSecrets(t *testing.T) {
	t.Parallel()
	const token = "tok-0123456789abcdef"
	for name, databaseURL := range map[string]string{
		"password in the URL":   "postgres://retsu:hunter2-secret@db.internal:5432/retsu?sslmode=require",
		"password in the query": "postgres://retsu@db.internal:5432/retsu?sslmode=require&password=hunter2-secret",
		"key/value string":      "host=db.internal user=retsu password=hunter2-secret dbname=retsu",
		"quoted key/value":      "host=db.internal user=retsu password='hunter2-secret and more' dbname=retsu",
		"URL with a bad port":   "postgres://retsu:hunter2-secret@db.internal:port/retsu",
		"URL with a bad escape": "postgres://retsu:hunter2%zz-secret@db.internal:5432/retsu",
		"password with an @":    "postgres://retsu:hunter2@secret@db.internal:port/retsu",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			cfg, err := process.ParseServeConfig(nil, env(map[string]string{
				"RETSU_DATABASE_URL": databaseURL,
				"RETSU_REDIS_URL":    "rediss://default:redis-secret@cache.internal:6380/0",
				"RETSU_API_TOKENS":   token + ",tok-fedcba9876543210",
			}), &bytes.Buffer{})
			is.NoErr(err)
			var logs bytes.Buffer

			slog.New(slog.NewTextHandler(&logs, nil)).Info("configuration", "config", cfg)

			line := logs.String()
			for _, secret := range []string{"hunter2", "redis-secret", token, "and more"} {
				is.True(!strings.Contains(line, secret)) // no password or token reaches the log
			}
			is.True(strings.Contains(line, "xxxxx"))                                 // a password shows as redacted
			is.True(strings.Contains(line, "db.internal"))                           // the rest of the URL stays, for operators
			is.True(strings.Contains(line, "cache.internal:6380"))                   // Redis' address too
			is.True(strings.Contains(line, "config.api_tokens=2"))                   // tokens are only counted
			is.True(strings.Contains(line, "config.addr=127.0.0.1:2424"))            // the other settings are shown
			is.True(strings.Contains(line, "config.dead_letter_retention=336h0m0s")) // the cleaners' too
		})
	}
}

func TestConfigLog_Work_ShowsOnlyItsSettings(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cfg, err := process.ParseWorkConfig(nil, env(map[string]string{"RETSU_DATABASE_URL": "postgres://retsu@db/retsu"}), &bytes.Buffer{})
	is.NoErr(err)
	var logs bytes.Buffer

	slog.New(slog.NewTextHandler(&logs, nil)).Info("configuration", "config", cfg)

	is.True(!strings.Contains(logs.String(), "config.addr"))            // retsu work serves no API
	is.True(strings.Contains(logs.String(), "config.cleanup_interval")) // it runs the cleaners
}
