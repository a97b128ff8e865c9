package redistest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// skipped counts the tests that [Require] skipped in this test binary.
var skipped atomic.Int64

// installHint is how a newcomer runs the skipped tests.
const installHint = "sudo apt-get install -y redis-server redis-tools && go test -race ./..."

// noteSkips tells the person running the tests how many of this package's
// tests were skipped for want of redis-server, and, once per go command,
// how to run them.
//
// In package-list mode (go test ./...) the go command shows nothing a
// passing test binary prints, so without -v the note goes to the
// terminal itself. Without a terminal (CI, a pipe) there is no one to tell:
// go test -v shows each skip, and with CI set a skip is a failure.
func noteSkips() {
	n := skipped.Load()
	if n == 0 {
		return
	}
	pkg := packageDir()
	var w io.Writer = os.Stdout
	if !testing.Verbose() {
		tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer tty.Close()
		w = tty
	}
	if firstNote() {
		fmt.Fprintf(w, "latchkey: redis-server is not on PATH, so the tests that need a real Redis are skipped. To run them:\n\t%s\n", installHint)
	}
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	fmt.Fprintf(w, "latchkey: %s: %d %s skipped (no redis-server)\n", pkg, n, tests)
}

// packageDir names the package under test as go test ./... would: its
// directory relative to the module root, where go test runs its binary.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for root := wd; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(root) == root {
			return filepath.Base(wd)
		}
	}
}

// firstNote reports whether no other test binary of the same go command
// has printed the hint yet. The go command is this binary's parent.
func firstNote() bool {
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("latchkey-skipnote-%d", os.Getppid()))
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
