package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"sort"
	"strings"

	"github.com/latchkey/latchkey/internal/scripts"
)

// runLua prints latchkey's composed scripts as they are sent (issue 32:
// a script's file is not what Redis runs; its fragments are put in and
// its comments and uncalled functions taken out). With no argument it
// lists them as scripts/MANIFEST does, from the same formatter; with a
// name, it prints that script's text. It reads no Redis, so it takes no
// connection flags: a server's SCRIPT EXISTS is checked against the
// SHA-1s listed.
func runLua(_ context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("lua", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	help(fs, "lua [NAME]", luaHelp)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errFlags
	}
	switch fs.NArg() {
	case 0:
		return listScripts(e.stdout)
	case 1:
	default:
		return usagef("takes one script NAME at most")
	}
	name := fs.Arg(0)
	for _, s := range scripts.All() {
		if s.Name() == name {
			_, err := io.WriteString(e.stdout, s.Source())
			return err
		}
	}
	if near := closeScripts(name); len(near) > 0 {
		return usagef("no script %q; close: %s", name, strings.Join(near, " "))
	}
	return usagef("no script %q (latchkey lua lists them)", name)
}

// listScripts writes one line per script, scripts/MANIFEST's lines.
func listScripts(w io.Writer) error {
	var b strings.Builder
	for _, s := range scripts.All() {
		b.WriteString(scripts.ManifestLine(s) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// closeScripts returns the scripts whose name contains name or is
// contained in it (mutex lists the mutex's scripts, acquire every
// acquire), or is a few edits from it (a typo), the closest first.
func closeScripts(name string) []string {
	type near struct {
		name string
		d    int
	}
	var found []near
	for _, s := range scripts.All() {
		n := s.Name()
		switch d := editDistance(name, n); {
		case strings.Contains(n, name), strings.Contains(name, n):
			found = append(found, near{n, d})
		case d <= max(2, len(name)/4):
			found = append(found, near{n, d})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].d < found[j].d })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.name
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes:
// the names are ASCII.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
