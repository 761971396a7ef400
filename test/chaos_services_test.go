package test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The chaos scenarios stop, crash and restart PostgreSQL, Redis and Retsu. None of that may
// touch the services that scripts/services.sh runs for everyone, so the scenarios run on a
// PostgreSQL cluster, Redis servers and Retsu processes of their own, which this file starts
// and stops, always by process ID.

// freePort returns a loopback port that nothing listened on a moment ago. It is below
// Linux's ephemeral range (32768 and up): a dial to a closed port in that range can be given
// that very port as its local port and connect to itself, and the scenarios stop services
// while Retsu dials them again and again.
func freePort(t *testing.T) int {
	t.Helper()
	return unusedPort()
}

// freeAddress returns a loopback address on a port of freePort's kind.
func freeAddress() string { return fmt.Sprintf("127.0.0.1:%d", unusedPort()) }

func unusedPort() int {
	for port := 20000 + rand.IntN(10000); ; port++ {
		listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		listener.Close()
		return port
	}
}

// pgCluster is a PostgreSQL cluster in a temporary directory, owned by the OS user that
// PostgreSQL must run as (RETSU_TEST_PG_USER; PostgreSQL refuses to run as root).
type pgCluster struct {
	bin     string // the directory of pg_ctl, initdb and postgres
	osUser  string
	dir     string
	port    int
	options string // the server options of every start
}

// startPGCluster initialises and starts a cluster that the test removes when it ends.
func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	pgCtl, osUser := os.Getenv("RETSU_TEST_PG_CTL"), os.Getenv("RETSU_TEST_PG_USER")
	if pgCtl == "" || osUser == "" {
		t.Fatal("RETSU_TEST_PG_CTL and RETSU_TEST_PG_USER must be set: run `make test` or eval \"$(scripts/services.sh env)\"")
	}
	c := &pgCluster{bin: filepath.Dir(pgCtl), osUser: osUser, dir: ownedTempDir(t, osUser), port: freePort(t)}
	c.options = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", c.port, c.dir)
	initdb := c.command("initdb", "--no-sync", "-D", c.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.stop("immediate"); err != nil {
			t.Error(err)
		}
	})
	return c
}

// ownedTempDir returns a new temporary directory that osUser owns, removed when the test ends.
func ownedTempDir(t *testing.T, osUser string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "retsu-chaos-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() != 0 {
		return dir
	}
	owner, err := user.Lookup(osUser)
	if err != nil {
		t.Fatalf("RETSU_TEST_PG_USER: %v", err)
	}
	uid, _ := strconv.Atoi(owner.Uid)
	gid, _ := strconv.Atoi(owner.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (c *pgCluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *pgCluster) logFile() string { return filepath.Join(c.dir, "postgresql.log") }

// command returns a command that runs the PostgreSQL program name as the cluster's owner.
// Its output goes nowhere unless the caller collects it: a pg_ctl start must never write to
// a pipe, which the server it launches would keep open.
func (c *pgCluster) command(name string, args ...string) *exec.Cmd {
	program := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", c.osUser, "--", program}, args...)...)
	} else {
		cmd = exec.Command(program, args...)
	}
	cmd.Dir = "/"
	return cmd
}

// start starts the cluster and waits until it accepts connections.
func (c *pgCluster) start() error {
	start := c.command("pg_ctl", "-D", c.dataDir(), "-l", c.logFile(), "-o", c.options, "-w", "-t", "60", "start")
	if err := start.Run(); err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s", err, tail(c.logFile(), 20))
	}
	return nil
}

// stop stops the cluster in mode: "immediate" is a crash, which the next start recovers from.
func (c *pgCluster) stop(mode string) error {
	stop := c.command("pg_ctl", "-D", c.dataDir(), "-m", mode, "-w", "-t", "60", "stop")
	if out, err := stop.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
	return nil
}

// url returns the URL of database name.
func (c *pgCluster) url(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

// testApplicationName marks the test's own connections, which no scenario terminates.
const testApplicationName = "retsu-chaos-test"

// createDatabase creates a database for one scenario and returns its URL, and a pool of it
// for the test's own queries, closed when the test ends.
func (c *pgCluster) createDatabase(t *testing.T, name string) (string, *pgxpool.Pool) {
	t.Helper()
	admin, err := pgxpool.New(t.Context(), c.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), c.url(name)+"&application_name="+testApplicationName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return c.url(name), pool
}

// tail returns the last lines of a file, for error messages.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastLines(string(data), lines)
}

// lastLines returns the last lines of text.
func lastLines(text string, lines int) string {
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(all[max(len(all)-lines, 0):], "\n")
}

// redisServer is a redis-server of one test, without persistence: a restart empties it.
type redisServer struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts a Redis server that the test stops when it ends.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	r := &redisServer{dir: t.TempDir(), port: freePort(t)}
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

// URL returns the URL of database 0.
func (r *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *redisServer) address() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

// start starts the server and waits until it answers PING.
func (r *redisServer) start() error {
	r.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port),
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	r.exited = exited
	go func() {
		_ = r.cmd.Wait()
		close(exited)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if reply, err := r.do("PING"); err == nil && reply == "PONG" {
			return nil
		}
	}
	return fmt.Errorf("redis-server did not answer within 10 s:\n%s", tail(filepath.Join(r.dir, "redis.log"), 20))
}

// stop ends the server, if it runs, with SIGTERM.
func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	<-r.exited
	r.cmd = nil
}

// do sends one inline command (arguments without spaces) and returns the reply's text: a
// status, an integer, or a bulk string ("(nil)" for none); an error reply is an error.
func (r *redisServer) do(command string) (string, error) {
	conn, err := net.DialTimeout("tcp", r.address(), time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "%s\r\n", command); err != nil {
		return "", err
	}
	reader := bufio.NewReader(conn)
	line, err := reader.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("redis: %s", line[1:])
	case !strings.HasPrefix(line, "$"):
		return line[1:], nil
	}
	size, _ := strconv.Atoi(line[1:])
	if size < 0 {
		return "(nil)", nil
	}
	bulk := make([]byte, size+2)
	if _, err := io.ReadFull(reader, bulk); err != nil {
		return "", err
	}
	return string(bulk[:size]), nil
}
