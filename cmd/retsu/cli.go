package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retsu/retsu/adapters/httpclient"
	"github.com/retsu/retsu/app/process"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// This file holds what the client commands (queues, send, receive, ack, extend, release,
// dead-letters) share: their table, the connection to RETSU_URL, command lines, and output.

// defaultURL is the API's address when RETSU_URL is not set.
const defaultURL = "http://127.0.0.1:2424"

// clientUsage is the part of retsu's usage about the client commands.
const clientUsage = `
commands over the HTTP API at RETSU_URL (default ` + defaultURL + `), with the bearer token RETSU_TOKEN:
  queues        create | list | get | update | delete | purge | stats
  send          enqueue a message, or one per line of stdin with --lines
  receive       dequeue messages (--max, --wait), and acknowledge them with --ack
  ack           acknowledge deliveries
  extend        extend the lease of a delivery
  release       end the lease of a delivery, to be delivered again
  dead-letters  list | get | delete | redrive
`

// clientCommand is one command over the client. It runs with its flags parsed, or returns
// the synopsis and description of its help.
type clientCommand struct {
	synopsis, description string
	// flags declares the command's own flags on fs; they are read by run.
	flags func(fs *flag.FlagSet)
	// args is how many positional arguments the command takes: at least min, at most max
	// (-1: no limit).
	min, max int
	run      func(c *cli, args []string) error
}

// clientCommands returns the commands by name; a group (queues, dead-letters) has its
// subcommands under "group sub".
func clientCommands() map[string]*clientCommand {
	commands := map[string]*clientCommand{}
	for _, table := range []map[string]*clientCommand{queueCommands(), messageCommands(), deadLetterCommands()} {
		for name, c := range table {
			commands[name] = c
		}
	}
	return commands
}

// runClient carries out a client command: command is its name (a group's name, whose
// subcommand is the first of args), for the API that lookupEnv's RETSU_URL names.
func runClient(ctx context.Context, command string, args []string, lookupEnv process.LookupEnv, stdout, stderr io.Writer) error {
	return runClientWith(ctx, command, args, lookupEnv, os.Stdin, stdout, stderr)
}

// runClientWith is runClient reading stdin.
func runClientWith(ctx context.Context, command string, args []string, lookupEnv process.LookupEnv, stdin io.Reader, stdout, stderr io.Writer) error {
	commands := clientCommands()
	name := command
	if _, ok := commands[name]; !ok {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return groupUsage(command, commands, args, stdout, stderr)
		}
		name, args = command+" "+args[0], args[1:]
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "retsu: unknown command %q\n", name)
		return groupUsage(command, commands, nil, stdout, stderr)
	}
	c := &cli{ctx: ctx, name: name, stdin: stdin, stdout: stdout, stderr: stderr, progress: isTerminal(stderr)}
	args, err := c.parse(cmd, args, lookupEnv)
	if err != nil {
		return err
	}
	return cmd.run(c, args)
}

// groupUsage prints the subcommands of a group: to stdout when asked for with --help (exit
// status 0), to stderr otherwise (a bad command line).
func groupUsage(group string, commands map[string]*clientCommand, args []string, stdout, stderr io.Writer) error {
	help := len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
	out := stderr
	if help {
		out = stdout
	}
	fmt.Fprintf(out, "usage: retsu %s <command> [flags]\n\ncommands:\n", group)
	var names []string
	for name := range commands {
		if sub, ok := strings.CutPrefix(name, group+" "); ok {
			names = append(names, sub)
		}
	}
	sort.Strings(names)
	for _, sub := range names {
		fmt.Fprintf(out, "  %-8s  %s\n", sub, commands[group+" "+sub].description)
	}
	fmt.Fprintf(out, "\nRun \"retsu %s <command> --help\" for its flags.\n", group)
	if help {
		return process.ErrHelp
	}
	return errUsage
}

// cli is the context of one client command.
type cli struct {
	ctx            context.Context
	name           string
	stdin          io.Reader
	stdout, stderr io.Writer
	client         *httpclient.Client
	json           bool
	// progress is true when stderr is a terminal, which then shows the progress of long
	// operations.
	progress bool
}

// parse reads the common flags and the command's own, with flags and arguments in any
// order, checks the number of arguments and connects the client. Returns errUsage (the
// problem printed) or process.ErrHelp (the help printed).
func (c *cli) parse(cmd *clientCommand, args []string, lookupEnv process.LookupEnv) ([]string, error) {
	fs := flag.NewFlagSet("retsu "+c.name, flag.ContinueOnError)
	// The flag package prints the usage for --help and for a bad flag alike: it goes to
	// stdout when asked for, to stderr with the problem otherwise.
	var printed bytes.Buffer
	fs.SetOutput(&printed)
	url := envOr(lookupEnv, "RETSU_URL", defaultURL)
	fs.StringVar(&url, "url", url, "`URL` of the Retsu API (RETSU_URL)")
	fs.BoolVar(&c.json, "json", false, "print JSON, one object per line, instead of a table")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: retsu %s %s\n\n%s\n\nflags:\n", c.name, cmd.synopsis, cmd.description)
		fs.PrintDefaults()
	}
	positional, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = printed.WriteTo(c.stdout)
		return nil, process.ErrHelp
	case err != nil:
		_, _ = printed.WriteTo(c.stderr)
		return nil, errUsage
	case len(positional) < cmd.min || cmd.max >= 0 && len(positional) > cmd.max:
		return nil, c.usageError("wrong number of arguments: %s %s", c.name, cmd.synopsis)
	}
	token, _ := lookupEnv("RETSU_TOKEN")
	if c.client, err = httpclient.New(url, httpclient.Options{Token: token}); err != nil {
		return nil, c.usageError("%v", err)
	}
	return positional, nil
}

// parseInterspersed parses flags that may come before, between or after the positional
// arguments, which it returns; after "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}

// usageError prints a problem with the command line and returns errUsage, for exit status 2.
func (c *cli) usageError(format string, a ...any) error {
	fmt.Fprintf(c.stderr, "retsu %s: %s\nRun \"retsu %s --help\" for its usage.\n", c.name, fmt.Sprintf(format, a...), c.name)
	return errUsage
}

func envOr(lookupEnv process.LookupEnv, name, fallback string) string {
	if v, ok := lookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// queueID returns the ID of the queue that ref names: its ID, or its name.
func (c *cli) queueID(ref string) (domain.ID, error) {
	if id, err := domain.ParseID(ref); err == nil {
		return id, nil
	}
	queues, err := c.client.ListQueues(c.ctx, ports.ListQueuesParams{Name: &ref, Limit: 1})
	if err != nil {
		return domain.ID{}, fmt.Errorf("find the queue %q: %w", ref, err)
	}
	if len(queues) == 0 {
		return domain.ID{}, &domain.Error{Code: domain.CodeQueueNotFound, Message: fmt.Sprintf("%s: no queue is named %q", domain.CodeQueueNotFound, ref)}
	}
	return queues[0].ID, nil
}

// messageID reads a message ID argument.
func (c *cli) messageID(what, arg string) (domain.ID, error) {
	id, err := domain.ParseID(arg)
	if err != nil {
		return domain.ID{}, c.usageError("%s %q is not a UUID", what, arg)
	}
	return id, nil
}

// table prints rows under a header, in aligned columns, for a terminal; a table without
// rows prints nothing.
type table struct {
	w    *tabwriter.Writer
	rows int
}

func (c *cli) newTable(header ...string) *table {
	t := &table{w: tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)}
	fmt.Fprintln(t.w, strings.Join(header, "\t"))
	return t
}

func (t *table) row(cells ...string) {
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
	t.rows++
}

func (t *table) flush() {
	if t.rows > 0 {
		_ = t.w.Flush()
	}
}

// printJSON prints v as one line of JSON.
func (c *cli) printJSON(v any) {
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// showProgress rewrites the progress line on stderr, when it is a terminal.
func (c *cli) showProgress(format string, a ...any) {
	if c.progress {
		fmt.Fprintf(c.stderr, "\r\033[K"+format, a...)
	}
}

// endProgress ends the progress line with its last state.
func (c *cli) endProgress(format string, a ...any) {
	if c.progress {
		fmt.Fprintf(c.stderr, "\r\033[K"+format+"\n", a...)
	}
}

// durationFlag is a flag holding a duration: whole seconds (90), a Go duration (90s, 1h30m)
// or days (7d). set records whether it was given.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if !f.set {
		return ""
	}
	return formatDuration(f.d)
}

func (f *durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	f.d, f.set = d, true
	return nil
}

// ptr returns the duration, or nil when the flag was not given.
func (f *durationFlag) ptr() *time.Duration {
	if !f.set {
		return nil
	}
	return &f.d
}

func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseInt(days, 10, 64); err == nil {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want seconds (90), a duration (90s, 1h30m) or days (7d)")
	}
	return d, nil
}

// formatDuration spells d in its largest whole unit: 7d, 2h, 5m, 90s.
func formatDuration(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d != 0 && d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}

// optionalInt is an int flag that records whether it was given.
type optionalInt struct {
	n   int
	set bool
}

func (f *optionalInt) String() string {
	if !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	f.n, f.set = n, true
	return nil
}

func (f *optionalInt) ptr() *int {
	if !f.set {
		return nil
	}
	return &f.n
}
