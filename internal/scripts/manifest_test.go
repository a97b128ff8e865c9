package scripts_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
)

var update = flag.Bool("update", false, "rewrite "+manifestFile)

// manifestFile lists every script as Redis runs it: what it is made of,
// and the SHA-1 that EVALSHA names it by (SCRIPT EXISTS tells whether a
// server has it). The text itself is printed by the CLI: latchkey lua NAME.
const manifestFile = "../../scripts/MANIFEST"

// manifest returns the manifest of the scripts as they are now.
func manifest() string {
	var b strings.Builder
	b.WriteString("# Every script as latchkey sends it (without comments, and without the\n")
	b.WriteString("# functions of its fragments that it never calls), one a line:\n")
	b.WriteString("# name, SHA-1 of what is sent, code lines, functions defined per call,\n")
	b.WriteString("# and the fragments it is made of, in order. Rewritten by\n")
	b.WriteString("# go test ./internal/scripts -run Manifest -update\n")
	for _, s := range scripts.All() {
		b.WriteString(scripts.ManifestLine(s) + "\n")
	}
	return b.String()
}

// The manifest matches the scripts; -update rewrites it.
func TestManifest(t *testing.T) {
	want := manifest()
	if *update {
		if err := os.WriteFile(manifestFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatalf("%v (go test ./internal/scripts -run Manifest -update)", err)
	}
	if string(got) != want {
		t.Errorf("%s differs from the scripts (go test ./internal/scripts -run Manifest -update): %s", manifestFile, firstDiff(string(got), want))
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: manifest %q, scripts %q", i+1, gl, wl)
		}
	}
	return "(no line differs)"
}
