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

	"github.com/redis/go-redis/v9"
)

// A command runs one subcommand with its arguments.
type command struct {
	run     func(ctx context.Context, e *env, args []string) error
	summary string
}

var commands = map[string]command{
	"inspect":   {runInspect, "inspect [-json] [-kind K] NAME...        show holders, TTL, token, leader, waiters, permits, count"},
	"ls":        {runLs, "ls [-json] [-all] [PATTERN]              list the synchronizers present (SCAN, default *)"},
	"watch":     {runWatch, "watch [-json] [-kind K] [-every D] NAME  print each change of NAME as it happens"},
	"unlock":    {runUnlock, "unlock [-yes] [-kind K] NAME             force-unlock NAME, waking latchkey and Redisson waiters"},
	"evict":     {runEvict, "evict [-yes] [-kind K] NAME WAITER       remove WAITER (an id as inspect shows it) from NAME's queue"},
	"release":   {runRelease, "release [-yes] [-n N | -id ID] NAME      give N permits back to semaphore NAME (alias give), or release permit ID"},
	"give":      {runRelease, "give [-yes] [-n N | -id ID] NAME         the same as release"},
	"countdown": {runCountdown, "countdown [-yes] [-n N] NAME             count latch NAME down N times (default 1)"},
	"clear":     {runClear, "clear [-yes] [-kind K] NAME              delete every key of free lock NAME: dead waiters' queues"},
	"deadlocks": {runDeadlocks, "deadlocks [-json] [PATTERN]              the processes that wait for each other, and how to break it"},
	"lua":       {runLua, "lua [NAME]                               list latchkey's Lua scripts as sent, or print script NAME"},
	"version":   {runVersion, "version                                  print the version of latchkey"},
}

// order is the order in which usage lists the commands.
var order = []string{"inspect", "ls", "watch", "deadlocks", "unlock", "evict", "release", "countdown", "clear", "lua", "version"}

// env is what every command shares: the connection settings and the
// process's standard streams.
type env struct {
	conn   connFlags
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// The exit statuses (see the package doc).
const (
	exitError        = 1
	exitUsage        = 2
	exitNothing      = 3
	exitNotLocked    = 4
	exitNotConfirmed = 5
	exitRefused      = 6
	exitPartial      = 7
	exitDeadlock     = 8
)

// A statusError ends a command with an exit status of its own; msg, if
// not "", goes to stderr (what stdout says may be enough).
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// nothingHere is the status of a command that found nothing to show or act on.
func nothingHere(format string, args ...any) error {
	return &statusError{exitNothing, fmt.Sprintf(format, args...)}
}

// refused is the status of a command that what Redis holds does not allow
// (a kind it does not act on, a held lock to clear, a -kind of another
// family than the key's): nothing was changed.
func refused(format string, args ...any) error {
	return &statusError{exitRefused, fmt.Sprintf(format, args...)}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

func main() {
	redis.SetLogger(quiet{}) // errors reach the user once, with the server and key
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// run parses the global flags, runs the command and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	fs := flag.NewFlagSet("latchkey", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { usage(e.stderr, fs) }
	e.conn.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		usage(e.stderr, fs)
		return exitUsage
	}
	name := fs.Arg(0)
	if name == "help" {
		usage(e.stdout, fs)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "latchkey: unknown command %q\n", name)
		usage(e.stderr, fs)
		return exitUsage
	}
	err := c.run(ctx, e, fs.Args()[1:])
	var ue *usageError
	var se *statusError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &se):
		if se.msg != "" {
			fmt.Fprintf(e.stderr, "latchkey %s: %s\n", name, se.msg)
		}
		return se.code
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "latchkey %s: %v\n", name, err)
		return exitUsage
	case errors.Is(err, errFlags):
		return exitUsage // the flag package has said what was wrong
	}
	fmt.Fprintf(e.stderr, "latchkey %s: %v\n", name, err)
	return exitError
}

// errFlags is a command's flag parse error, already reported by package flag.
var errFlags = errors.New("bad flags")

// parseFlags parses a command's flags, connection flags included, and
// returns its arguments.
func (e *env) parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(e.stderr)
	e.conn.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errFlags
	}
	return fs.Args(), nil
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: latchkey [connection flags] COMMAND [flags] ARGS\n\nCommands:\n")
	for _, name := range order {
		fmt.Fprintf(w, "  %s\n", commands[name].summary)
	}
	fmt.Fprintf(w, "\nlatchkey COMMAND -h says what COMMAND takes and changes, with an example.\n")
	fmt.Fprintf(w, "\nKinds (-kind): %s.\n", kindList)
	fmt.Fprintf(w, "\nExit status: 0 success, 1 Redis unreachable or a command failed, 2 usage (or a cluster\n"+
		"node without -cluster), 3 nothing here (no such synchronizer, waiter or permit), 4 not locked,\n"+
		"5 not confirmed, 6 refused (nothing changed), 7 partial listing, 8 deadlock found.\n")
	fmt.Fprintf(w, "\nConnection flags (also accepted after the command):\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// quiet is a go-redis logger that says nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
