package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// changing holds the flags that every command that changes a
// synchronizer takes: -yes and -kind.
type changing struct {
	fs   *flag.FlagSet
	yes  *bool
	kind *string
}

// newChanging makes the flag set of command cmd, whose NAME may be of
// the kinds listed; usage and text are its -h (see help).
func newChanging(cmd, kinds, usage, text string) *changing {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	help(fs, usage, text)
	return &changing{
		fs:   fs,
		yes:  fs.Bool("yes", false, "do not ask for confirmation (required when stdin is not a terminal)"),
		kind: fs.String("kind", "", "the kind NAME is, instead of detecting it: "+kinds),
	}
}

// parse parses args and returns the n arguments, which want describes,
// after checking -kind.
func (ch *changing) parse(e *env, args []string, n int, want string) ([]string, error) {
	rest, err := e.parseFlags(ch.fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) != n {
		return nil, usagef("want %s, got %d arguments", want, len(rest))
	}
	return rest, checkKind(*ch.kind)
}

// open refuses to go on without -yes when nobody could answer the
// question, then opens name (see env.open); what says what the command
// would do.
func (ch *changing) open(ctx context.Context, e *env, name, what string) (*target, error) {
	if err := mayAsk(e, *ch.yes, what); err != nil {
		return nil, err
	}
	return e.open(ctx, name, *ch.kind)
}

// mayAsk refuses, before any I/O, a command that would ask for
// confirmation (no -yes) on a stdin that is not a terminal: nobody could
// answer, and a script must say -yes to change anything.
func mayAsk(e *env, yes bool, what string) error {
	if yes || terminal(e.stdin) {
		return nil
	}
	return &statusError{exitNotConfirmed, fmt.Sprintf("stdin is not a terminal: pass -yes to %s without confirmation", what)}
}

// approve asks question unless yes; an answer other than yes is the
// not-confirmed status.
func approve(e *env, yes bool, question string) error {
	if yes {
		return nil
	}
	ok, err := confirm(e, question)
	if err != nil {
		return err
	}
	if !ok {
		return &statusError{exitNotConfirmed, "not confirmed: nothing done"}
	}
	return nil
}

// terminal reports whether r is a terminal: a character device other
// than the null device (which is where a program started without a
// stdin reads from).
func terminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// confirm asks question on stderr and reads a yes or no from stdin.
func confirm(e *env, question string) (bool, error) {
	fmt.Fprint(e.stderr, question)
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
