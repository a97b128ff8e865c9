package latchkey_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The layers of the library, as docs/architecture.md draws them: a package
// imports only packages of layers below its own. Tools (the CLI, the test
// servers and helpers) may import any layer. A package missing here fails
// the test: a new one takes its place in the table, and in the doc.
var layers = map[string]int{
	"internal/flight": 0, "internal/keys": 0, "internal/lockerr": 0, "internal/owner": 0, "scripts": 0,
	"internal/scripts": 1, "internal/notify": 1, "internal/lease": 1, "internal/handoff": 1,
	"internal/rt":   2,
	"internal/wait": 3, "internal/hold": 3, "internal/acquire": 3, "internal/lockopt": 3,
	"internal/lockcore": 4, "internal/semcore": 4, "pubsub": 4,
	"mutex": 5, "fairlock": 5, "rwlock": 5, "semaphore": 5, "permitsemaphore": 5, "countdownlatch": 5,
	"multilock": 5, "redlock": 5, ".": 5,
	"election": 6,
}

// tools may import any package of the library.
var tools = map[string]bool{"cmd/latchkey": true, "internal/redistest": true, "internal/locktest": true}

const module = "github.com/latchkey/latchkey"

func TestLayers(t *testing.T) {
	imports := map[string]map[string]bool{} // package dir -> library packages its non-test files import
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir // another module (bench, chaos, otel), or not code
			}
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == module {
				imports[dir]["."] = true
			} else if rest, ok := strings.CutPrefix(path, module+"/"); ok {
				imports[dir][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range imports {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		layer, known := layers[d]
		if !known && !tools[d] {
			t.Errorf("%s has no layer: give it one in layers_test.go and docs/architecture.md", d)
			continue
		}
		for imp := range imports[d] {
			il, ok := layers[imp]
			switch {
			case !ok && tools[d] && tools[imp]:
			case !ok:
				t.Errorf("%s imports %s, which no layer holds", d, imp)
			case !tools[d] && il >= layer:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run down the layers", d, layer, imp, il)
			}
		}
	}
}
