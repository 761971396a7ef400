package main

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestRun_ExitStatusAndMessages(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name   string
		args   []string
		status int
		stdout string // a piece of what stdout must hold
		stderr string // a piece of what stderr must hold
	}{
		{"no command", nil, 2, "", "usage: retsu"},
		{"unknown command", []string{"bogus"}, 2, "", `unknown command "bogus"`},
		{"help", []string{"help"}, 0, "usage: retsu", ""},
		{"version", []string{"version"}, 0, "retsu ", ""},
		{"serve help", []string{"serve", "--help"}, 0, "RETSU_ADDR", ""},
		{"work help", []string{"work", "--help"}, 0, "RETSU_CLEANUP_INTERVAL", ""},
		{"migrate help", []string{"migrate", "--help"}, 0, "RETSU_DATABASE_URL", ""},
		{"serve without a database", []string{"serve"}, 2, "", "RETSU_DATABASE_URL"},
		{"serve with a bad interval", []string{"serve", "--database-url", "postgres://x/y", "--cleanup-interval", "-5s"}, 2, "", "cleanup-interval"},
		{"migrate without a command", []string{"migrate", "--database-url", "postgres://x/y"}, 2, "", "up, down or version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			var stdout, stderr strings.Builder
			err := run(context.Background(), tc.args, noEnv, &stdout, &stderr)
			status := exitStatus(err, &stderr)
			is.Equal(status, tc.status)                           // the exit status tells success, usage errors and failures apart
			is.True(strings.Contains(stdout.String(), tc.stdout)) // stdout says what it should
			is.True(strings.Contains(stderr.String(), tc.stderr)) // and so does stderr
		})
	}
}

func TestRun_BadSecretSettings_AreNamedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-short"
	database := map[string]string{"RETSU_DATABASE_URL": "postgres://retsu@127.0.0.1:1/retsu"}
	tests := []struct {
		name    string
		args    []string
		vars    map[string]string
		setting string
	}{
		{"token flag", []string{"serve", "--api-tokens=" + secret}, database, "--api-tokens"},
		{"token variable", []string{"serve"}, with(database, "RETSU_API_TOKENS", secret), "RETSU_API_TOKENS"},
		{"SQS credentials flag", []string{"serve", "--sqs-credentials", "AKID:" + secret}, database, "--sqs-credentials"},
		{"SQS credentials variable", []string{"serve"}, with(database, "RETSU_SQS_CREDENTIALS", "AKID:"+secret), "RETSU_SQS_CREDENTIALS"},
		{"database URL with a bad port", []string{"serve", "--migrate=false"},
			map[string]string{"RETSU_DATABASE_URL": "postgres://retsu:" + secret + "@127.0.0.1:port/retsu"}, "RETSU_DATABASE_URL"},
		{"database URL with a bad port, migrating", []string{"migrate", "up"},
			map[string]string{"RETSU_DATABASE_URL": "postgres://retsu:" + secret + "@127.0.0.1:port/retsu"}, "RETSU_DATABASE_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			var stdout, stderr strings.Builder
			lookupEnv := func(name string) (string, bool) { v, ok := tc.vars[name]; return v, ok }

			status := exitStatus(run(context.Background(), tc.args, lookupEnv, &stdout, &stderr), &stderr)

			is.True(status != 0)                                   // the command fails
			is.True(strings.Contains(stderr.String(), tc.setting)) // naming the setting
			is.True(!strings.Contains(stderr.String(), secret))    // never showing the secret
			is.True(!strings.Contains(stdout.String(), secret))    // anywhere
		})
	}
}

func with(vars map[string]string, name, value string) map[string]string {
	merged := map[string]string{name: value}
	for k, v := range vars {
		merged[k] = v
	}
	return merged
}
