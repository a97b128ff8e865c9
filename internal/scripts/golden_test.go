package scripts_test

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
)

var update = flag.Bool("update", false, "rewrite the composed scripts in "+composedDir)

// composedDir holds every script as Redis runs it: Source(), committed so
// that a reviewer reads exactly that.
const composedDir = "../../scripts/composed"

// Each composed script equals its golden file, and no golden file is left
// of a script that is gone. With -update, the files are rewritten instead.
func TestComposed_golden(t *testing.T) {
	want := map[string]string{}
	for _, s := range scripts.All() {
		want[s.Name()+".lua"] = s.Source()
	}
	if *update {
		if err := os.MkdirAll(composedDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	have, err := filepath.Glob(filepath.Join(composedDir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range have {
		if _, ok := want[filepath.Base(p)]; ok {
			continue
		}
		if *update {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is the golden file of no script (run go test ./internal/scripts -update)", p)
	}
	for file, src := range want {
		p := filepath.Join(composedDir, file)
		if *update {
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		switch {
		case err != nil:
			t.Errorf("%s: %v (run go test ./internal/scripts -update)", file, err)
		case string(got) != src:
			t.Errorf("%s differs from the composed script (run go test ./internal/scripts -update):\n%s", p, firstDiff(string(got), src))
		}
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
			return "line " + strconv.Itoa(i+1) + ": golden " + strconv.Quote(gl) + ", composed " + strconv.Quote(wl)
		}
	}
	return "(no line differs)"
}
