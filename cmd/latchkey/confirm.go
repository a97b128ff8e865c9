package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

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
