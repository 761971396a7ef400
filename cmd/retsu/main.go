// Command retsu serves Retsu's HTTP API and manages its schema.
//
//	retsu serve             serve the API and run the cleaners (migrates first unless --migrate=false)
//	retsu work              run the cleaners without the API
//	retsu migrate up|down|version
//	retsu version
//	retsu queues|send|receive|ack|extend|release|dead-letters   talk to the API at RETSU_URL
//
// Every command takes --help. Settings come from RETSU_* environment variables and flags.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/retsu/retsu/app/process"
)

const usage = `usage: retsu <command> [flags]

commands:
  serve     serve the HTTP API and run the cleaners (applies schema migrations first unless --migrate=false)
  work      run the expired-message and dead-letter cleaners without the API
  migrate   up | down | version: manage the PostgreSQL schema
  version   print the version
` + clientUsage + `
Run "retsu <command> --help" for the flags of a command.
`

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx := stopOnSignal(context.Background(), signals, os.Stderr, os.Exit)
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	os.Exit(exitStatus(err, os.Stderr))
}

// stopOnSignal returns a context that the first signal from signals cancels, which stops
// serve and work gracefully. A second signal, while that shutdown waits for the requests in
// flight, calls exit at once with 128 + the signal's number, as a shell reports a process
// that a signal ended: an operator who presses Ctrl-C twice means it.
func stopOnSignal(parent context.Context, signals <-chan os.Signal, stderr io.Writer, exit func(int)) context.Context {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		<-signals
		cancel()
		second := <-signals
		fmt.Fprintf(stderr, "retsu: second signal (%s): exiting without waiting for the requests in flight\n", second)
		exit(signalStatus(second))
	}()
	return ctx
}

// signalStatus is the exit status of a process ended by signal: 130 for SIGINT, 143 for
// SIGTERM.
func signalStatus(signal os.Signal) int {
	if number, ok := signal.(syscall.Signal); ok {
		return 128 + int(number)
	}
	return 1
}

// errUsage reports a command line that names no known command; usage was printed.
var errUsage = errors.New("unknown command")

// run carries out the command in args. It returns when the command is done or, for serve,
// when ctx is cancelled and the server has stopped.
func run(ctx context.Context, args []string, lookupEnv process.LookupEnv, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	command, args := args[0], args[1:]
	switch command {
	case "serve":
		return serve(ctx, args, lookupEnv, stdout, stderr)
	case "work":
		return work(ctx, args, lookupEnv, stdout, stderr)
	case "migrate":
		usage := &usageOutput{}
		cfg, sub, err := process.ParseMigrateConfig(args, lookupEnv, usage)
		usage.route(err, stdout, stderr)
		if err != nil {
			return err
		}
		return process.Migrate(cfg.DatabaseURL, sub, stdout)
	case "version":
		fmt.Fprintln(stdout, "retsu", version())
		return nil
	case "queues", "send", "receive", "ack", "extend", "release", "dead-letters":
		return runClient(ctx, command, args, lookupEnv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "retsu: unknown command %q\n\n%s", command, usage)
	return errUsage
}

func serve(ctx context.Context, args []string, lookupEnv process.LookupEnv, stdout, stderr io.Writer) error {
	usage := &usageOutput{}
	cfg, err := process.ParseServeConfig(args, lookupEnv, usage)
	usage.route(err, stdout, stderr)
	if err != nil {
		return err
	}
	server, err := process.NewServer(ctx, cfg, process.NewLogger(cfg, stderr))
	if err != nil {
		return err
	}
	defer server.Close()
	return server.Serve(ctx)
}

func work(ctx context.Context, args []string, lookupEnv process.LookupEnv, stdout, stderr io.Writer) error {
	usage := &usageOutput{}
	cfg, err := process.ParseWorkConfig(args, lookupEnv, usage)
	usage.route(err, stdout, stderr)
	if err != nil {
		return err
	}
	worker, err := process.NewWorker(ctx, cfg, process.NewLogger(cfg, stderr))
	if err != nil {
		return err
	}
	defer worker.Close()
	worker.Run(ctx)
	return nil
}

// usageOutput holds what a command line parser printed (its usage, for --help or with a bad
// flag) until route sends it on.
type usageOutput struct{ bytes.Buffer }

// route prints what the parser printed to stdout when err asks for help, to stderr
// otherwise.
func (u *usageOutput) route(err error, stdout, stderr io.Writer) {
	if errors.Is(err, process.ErrHelp) {
		_, _ = u.WriteTo(stdout)
		return
	}
	_, _ = u.WriteTo(stderr)
}

// exitStatus prints err and returns the exit status: 0 on success or help, 2 for a bad
// command line or configuration, 1 for any other failure.
func exitStatus(err error, stderr io.Writer) int {
	var configErr *process.ConfigError
	switch {
	case err == nil, errors.Is(err, process.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &configErr):
		fmt.Fprintf(stderr, "retsu: invalid configuration: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "retsu: %v\n", err)
	return 1
}

// version returns the module version and VCS revision the binary was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += " (modified)"
		}
	}
	return v
}
