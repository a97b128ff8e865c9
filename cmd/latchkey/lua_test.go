package main

import (
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
)

// latchkey lua lists every script as scripts/MANIFEST does, prints each
// one as it is sent, and says which names are close to one it does not
// know, with the usage exit status. It needs no Redis: no -redis is given.
func TestLua(t *testing.T) {
	c := cli{bin: build(t)}
	out, errOut, code := c.run(t, "lua")
	if code != 0 || errOut != "" {
		t.Fatalf("latchkey lua: exit %d: %s", code, errOut)
	}
	var want strings.Builder
	for _, s := range scripts.All() {
		want.WriteString(scripts.ManifestLine(s) + "\n")
	}
	if out != want.String() {
		t.Errorf("latchkey lua lists:\n%s\nwant the manifest's lines:\n%s", out, want.String())
	}
	if len(scripts.All()) == 0 {
		t.Fatal("no scripts")
	}

	for _, s := range scripts.All() {
		out, errOut, code := c.run(t, "lua", s.Name())
		if code != 0 || errOut != "" || out != s.Source() {
			t.Errorf("latchkey lua %s: exit %d, %s; printed %d bytes, want the %d sent", s.Name(), code, errOut, len(out), len(s.Source()))
		}
	}

	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"lua", "mutex_aquire"}, `no script "mutex_aquire"; close: mutex_acquire`},
		{[]string{"lua", "fair"}, "fair_acquire"},
		{[]string{"lua", "zzz"}, "latchkey lua lists them"},
		{[]string{"lua", "mutex_acquire", "fair_acquire"}, "one script NAME at most"},
	} {
		out, errOut, code := c.run(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("latchkey %v: exit %d, stdout %q, stderr %q; want exit %d, stderr with %q", tc.args, code, out, errOut, exitUsage, tc.want)
		}
	}
}

// closeScripts finds a typo's script and a family's, and nothing for a
// name unlike any.
func TestCloseScripts(t *testing.T) {
	if got := closeScripts("mutex_relaese"); len(got) == 0 || got[0] != "mutex_release" {
		t.Errorf("closeScripts(mutex_relaese) = %q, want mutex_release first", got)
	}
	for _, n := range closeScripts("sem") {
		if !strings.HasPrefix(n, "sem_") {
			t.Errorf("closeScripts(sem) has %q", n)
		}
	}
	if got := closeScripts("qqqqqqqq"); len(got) != 0 {
		t.Errorf("closeScripts(qqqqqqqq) = %q, want none", got)
	}
}
