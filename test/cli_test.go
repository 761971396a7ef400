package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The retsu command's client commands, the built binary against the shared server.

// cliResult is what one run of the command printed, and its exit status.
type cliResult struct {
	status         int
	stdout, stderr string
}

// retsuCLI runs the binary with args against the shared server, stdin read from the file
// stdin when it is not empty.
func retsuCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "RETSU_URL="+shared.URL())
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	status := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		status = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("run retsu %s: %v", strings.Join(args, " "), err)
	}
	return cliResult{status, stdout.String(), stderr.String()}
}

// cliOK runs retsuCLI and fails the test unless the command succeeds.
func cliOK(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	r := retsuCLI(t, stdin, args...)
	if r.status != 0 {
		t.Fatalf("retsu %s: status %d\n%s", strings.Join(args, " "), r.status, r.stderr)
	}
	return r
}

// objects decodes the JSON lines of stdout.
func (r cliResult) objects(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

// writeLines writes n lines to a file of the test and returns its path.
func writeLines(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "message %d\n", i)
	}
	path := filepath.Join(t.TempDir(), "lines.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCLI_SendAFileOfLines_ReceiveAndAcknowledgeThem(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	name := uniqueName("cli-send")
	cliOK(t, "", "queues", "create", name)
	sent := cliOK(t, writeLines(t, 2500), "send", name, "--lines", "--json").objects(t)
	is.Equal(len(sent), 2500) // an ID for every line
	received := cliOK(t, "", "receive", name, "--max", "2500", "--ack", "--json").objects(t)
	is.Equal(len(received), 2500)                       // every message, in dequeues of 100
	is.Equal(received[0]["payload"], "message 0")       // in order
	is.Equal(received[2499]["payload"], "message 2499") // to the last line
	for _, m := range received {
		if m["acknowledged"] != true {
			t.Fatalf("not acknowledged: %v", m)
		}
	}
	stats := cliOK(t, "", "queues", "stats", name, "--json").objects(t)[0]
	for _, p := range stats["priorities"].([]any) {
		counts := p.(map[string]any)
		is.Equal([]any{counts["ready"], counts["in_flight"]}, []any{0.0, 0.0}) // nothing left
	}
}

func TestCLI_DeadLetters_RedrivenBackToTheQueue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	name := uniqueName("cli-dead")
	cliOK(t, "", "queues", "create", name, "--max-delivery-attempts", "1")
	cliOK(t, writeLines(t, 3), "send", name, "--lines")
	for _, m := range cliOK(t, "", "receive", name, "--max", "3", "--json").objects(t) {
		cliOK(t, "", "release", name, m["id"].(string), m["receipt_handle"].(string))
	}
	is.Equal(cliOK(t, "", "receive", name).stdout, "") // the exhausted messages became dead letters
	letters := cliOK(t, "", "dead-letters", "list", name, "--json").objects(t)
	is.Equal(len(letters), 3)                      // all three
	is.Equal(letters[0]["delivery_attempts"], 1.0) // with their attempts
	redriven := cliOK(t, "", "dead-letters", "redrive", name, "--all", "--json").objects(t)
	is.Equal(len(redriven), 3) // the IDs moved
	is.Equal(cliOK(t, "", "dead-letters", "list", name).stdout, "")
	back := cliOK(t, "", "receive", name, "--max", "10", "--ack", "--json").objects(t)
	is.Equal(len(back), 3)                      // back in the queue
	is.Equal(back[0]["delivery_attempts"], 1.0) // with fresh attempts
}

func TestCLI_FailedCall_NamesTheCode_Status1(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := retsuCLI(t, "", "queues", "get", "019c9a65-7d3a-7c6b-8a9d-123456789abc")
	is.Equal(r.status, 1)                                  // a failed call
	is.True(strings.Contains(r.stderr, "queue_not_found")) // on stderr, with the API's code
	r = retsuCLI(t, "", "queues", "create")
	is.Equal(r.status, 2) // a bad command line
}
