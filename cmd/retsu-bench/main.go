// Command retsu-bench puts load on a running Retsu server over HTTP and reports what it
// sustained.
//
//	retsu-bench run [flags]                  producers enqueue, consumers dequeue and acknowledge
//	retsu-bench report [flags] RESULT.json…  one table of several runs, with ratios
//	retsu-bench drain -queue ID [flags]      dequeue and acknowledge what a queue already holds
//	retsu-bench latency [flags]              how soon a message reaches a consumer that long-polls
//
// In run, each request carries one message (or, with -batch, a batch of them), so a message
// lifecycle is three requests (or a share of three): enqueue, dequeue, acknowledge. Only lifecycles that are complete by construction are counted: the
// message was enqueued by this run (its payload carries a token the run issued), delivered
// once, and acknowledged before its visibility timeout could have ended. Anything else, and
// every unexpected answer, is counted as an error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: retsu-bench <command> [flags]

commands:
  run      put load on a Retsu server and report lifecycles/s and latencies
  report   print the results of several runs as one table, with ratios
  drain    dequeue and acknowledge messages already in a queue, and report the latencies
  latency  long-poll with consumers and report how soon each message enqueued reaches one

Run "retsu-bench <command> --help" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "retsu-bench:", err)
		os.Exit(1)
	}
}

// errUsage reports a command line that could not be understood; its problem was printed.
var errUsage = errors.New("usage")

// run carries out the command in args: results go to stdout, progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "run":
		cfg, err := parseLoadConfig(args[1:], stderr)
		if err != nil {
			return err
		}
		return runLoad(ctx, cfg, stdout, stderr)
	case "report":
		cfg, err := parseReportConfig(args[1:], stderr)
		if err != nil {
			return err
		}
		return report(cfg, stdout)
	case "drain":
		cfg, err := parseDrainConfig(args[1:], stderr)
		if err != nil {
			return err
		}
		return drain(ctx, cfg, stdout)
	case "latency":
		cfg, err := parseLatencyConfig(args[1:], stderr)
		if err != nil {
			return err
		}
		return latency(ctx, cfg, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "retsu-bench: unknown command %q\n\n%s", args[0], usage)
	return errUsage
}

// parseFlags parses args with fs, turning a bad command line into errUsage. Arguments after
// the flags are refused unless argsAllowed.
func parseFlags(fs *flag.FlagSet, args []string, argsAllowed bool) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return errUsage
	case fs.NArg() > 0 && !argsAllowed:
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	return nil
}
