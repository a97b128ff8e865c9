package latchkey_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"

	"github.com/latchkey/latchkey/internal/redistest"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's quick start from quickstart_test.go")

// The README's quick start is quickstart_test.go from its import block on,
// so that the snippet a newcomer copies compiles and runs.
func TestReadmeQuickStart(t *testing.T) {
	mr, _ := redistest.Miniredis(t)
	if err := run(context.Background(), mr.Addr()); err != nil {
		t.Fatalf("the quick start: %v", err)
	}

	src, err := os.ReadFile("quickstart_test.go")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte("import ("))
	if i < 0 {
		t.Fatal("quickstart_test.go has no import block")
	}
	snippet := src[i:]
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open, close = "## Quick start\n\n```go\n", "```\n"
	start := bytes.Index(readme, []byte(open))
	if start < 0 {
		t.Fatalf("README.md has no %q followed by a Go block", "## Quick start")
	}
	start += len(open)
	end := bytes.Index(readme[start:], []byte(close))
	if end < 0 {
		t.Fatal("README.md: the quick start's Go block does not end")
	}
	end += start
	if bytes.Equal(readme[start:end], snippet) {
		return
	}
	if !*updateReadme {
		t.Fatalf("README.md's quick start differs from quickstart_test.go; run: go test -run TestReadmeQuickStart -update-readme .\nREADME has:\n%s", readme[start:end])
	}
	out := append(append(append([]byte{}, readme[:start]...), snippet...), readme[end:]...)
	if err := os.WriteFile("README.md", out, 0o644); err != nil {
		t.Fatal(err)
	}
}
