package test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// retsuProcess is a `retsu serve` that a test starts, and that it may kill, terminate and
// start again on the same address.
type retsuProcess struct {
	binary  string
	address string
	env     []string
	logs    *syncBuffer
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	starts  int
}

// startServer starts the race-detecting binary of this run for one test (see startRetsu).
func startServer(t *testing.T, env ...string) *retsuProcess {
	t.Helper()
	return startRetsu(t, binary, env...)
}

// startRetsu starts `retsu serve` of binary (see launchRetsu) for one test, and stops it with
// SIGTERM when the test ends, which it must survive cleanly, showing its logs if the test
// failed.
func startRetsu(t *testing.T, binary string, env ...string) *retsuProcess {
	t.Helper()
	p, err := launchRetsu(binary, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.running() {
			if _, err := p.terminate(); err != nil {
				t.Error(err)
			}
		}
		if t.Failed() {
			t.Logf("retsu logs:\n%s", lastLines(p.logs.String(), 60))
		}
	})
	return p
}

// launchRetsu starts `retsu serve` of binary on a free port and waits until /healthz
// answers. It serves the test database and Redis, without migrating them (TestMain did),
// without the cleaners (which would race the tests' own; the tests that need them turn them
// on) and with debug logs; env (KEY=value) changes any of that, the last value of a
// variable winning.
func launchRetsu(binary string, env ...string) (*retsuProcess, error) {
	p := &retsuProcess{binary: binary, address: freeAddress(), logs: &syncBuffer{}, env: append([]string{
		"RETSU_DATABASE_URL=" + databaseURL,
		"RETSU_REDIS_URL=" + redisURL,
		"RETSU_MIGRATE=false",
		"RETSU_WORKERS=false",
		"RETSU_LOG_LEVEL=debug",
	}, env...)}
	return p, p.start()
}

// URL returns the base URL of the API.
func (p *retsuProcess) URL() string { return "http://" + p.address }

// start starts the process and waits until /healthz answers.
func (p *retsuProcess) start() error {
	p.starts++
	fmt.Fprintf(p.logs, "--- start %d\n", p.starts)
	cmd := exec.Command(p.binary, "serve")
	cmd.Env = append(append(os.Environ(), p.env...), "RETSU_ADDR="+p.address)
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start retsu: %w", err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		p.exitErr = cmd.Wait()
		close(exited)
	}(p.exited)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(p.URL() + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if !p.running() {
			return fmt.Errorf("retsu exited before it was healthy (%v):\n%s", p.exitErr, p.logs.String())
		}
		if time.Now().After(deadline) {
			p.kill()
			return errors.New("retsu was not healthy within 30 s:\n" + p.logs.String())
		}
	}
}

func (p *retsuProcess) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill ends the process with SIGKILL: a crash.
func (p *retsuProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// terminate sends SIGTERM and waits for the process to end, up to 60 s; it returns how long
// that took, and an error unless the process exited with status 0.
func (p *retsuProcess) terminate() (time.Duration, error) {
	sent := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.exitErr != nil {
			return time.Since(sent), fmt.Errorf("retsu exited with %v after SIGTERM", p.exitErr)
		}
		return time.Since(sent), nil
	case <-time.After(60 * time.Second):
		p.kill()
		return time.Since(sent), errors.New("retsu did not stop within 60 s of SIGTERM")
	}
}
