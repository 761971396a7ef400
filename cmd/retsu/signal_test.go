package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestMain runs main instead of the tests when RETSU_TEST_RUN_MAIN is set, so that a test
// can start the binary as a process of its own and signal it.
func TestMain(m *testing.M) {
	if os.Getenv("RETSU_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestStopOnSignal_FirstCancelsSecondExitsAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	signals := make(chan os.Signal, 2)
	exited := make(chan int, 1)

	ctx := stopOnSignal(context.Background(), signals, io.Discard, func(status int) { exited <- status })
	signals <- syscall.SIGTERM

	<-ctx.Done() // the first signal starts the graceful shutdown
	select {
	case <-exited:
		t.Fatal("the first signal must not exit")
	case <-time.After(50 * time.Millisecond):
	}
	signals <- syscall.SIGINT
	select {
	case status := <-exited:
		is.Equal(status, 130) // the second exits at once, as a process ended by SIGINT
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not exit")
	}
}

func TestServe_SecondSignalDuringShutdown_ExitsAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cmd := exec.Command(os.Args[0], "serve", "--store=memory", "--addr=127.0.0.1:0", "--workers=false",
		"--shutdown-timeout=30s")
	cmd.Env = []string{"RETSU_TEST_RUN_MAIN=1"}
	stderr, err := cmd.StderrPipe()
	is.NoErr(err)
	is.NoErr(cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	addr := waitForLine(t, lines, "serving the API", "addr=")

	// A request whose body never comes holds the graceful shutdown for the read timeout.
	conn, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /v1/queues HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	is.NoErr(err)
	time.Sleep(200 * time.Millisecond) // let the server start reading the request
	is.NoErr(cmd.Process.Signal(syscall.SIGTERM))
	waitForLine(t, lines, "shutting down", "")
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	start := time.Now()
	is.NoErr(cmd.Process.Signal(syscall.SIGINT))

	err = cmd.Wait()
	var exitErr *exec.ExitError
	is.True(errors.As(err, &exitErr))          // the process did not end normally
	is.Equal(exitErr.ExitCode(), 130)          // but with SIGINT's status
	is.True(time.Since(start) < 5*time.Second) // at once, not after the request in flight
}

// waitForLine reads lines until one contains want and returns the value that follows key
// in it, up to the next space.
func waitForLine(t *testing.T, lines *bufio.Scanner, want, key string) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			line := lines.Text()
			if !strings.Contains(line, want) {
				continue
			}
			_, value, _ := strings.Cut(line, key)
			value, _, _ = strings.Cut(value, " ")
			found <- value
			return
		}
		close(found)
	}()
	select {
	case value, ok := <-found:
		if !ok {
			t.Fatalf("the process ended before logging %q", want)
		}
		return value
	case <-time.After(30 * time.Second):
		t.Fatalf("no %q in the log", want)
	}
	return ""
}
