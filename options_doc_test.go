package latchkey_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every option's doc comment ends with a sentence that gives its default:
// "The default is X."
func TestOptionDocsEndWithTheDefault(t *testing.T) {
	dirs, err := filepath.Glob("*/options.go")
	if err != nil || len(dirs) < 8 {
		t.Fatalf("found %d options.go files (%v), want one per primitive and pubsub", len(dirs), err)
	}
	fset := token.NewFileSet()
	for _, file := range dirs {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "With") {
				continue
			}
			doc := strings.Join(strings.Fields(fn.Doc.Text()), " ")
			i := strings.LastIndex(strings.TrimSuffix(doc, "."), ". ")
			last := doc[i+2:]
			if !strings.HasPrefix(last, "The default is ") || !strings.HasSuffix(last, ".") {
				t.Errorf("%s: %s: its doc ends %q, not with \"The default is ...\"", file, fn.Name.Name, last)
			}
		}
	}
}
