package scripts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
)

// header returns the leading comment lines of a Lua file, and the rest.
func header(src string) (string, string) {
	var h strings.Builder
	for line := range strings.Lines(src) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		h.WriteString(line)
	}
	return h.String(), src[h.Len():]
}

func fragments(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(luaDir, "fragment", "*.lua"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fragments: %v", err)
	}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".lua")] = string(src)
	}
	return out
}

// Each fragment starts with a header that names it, says what it defines,
// and names the KEYS and ARGV it reads.
func TestFragments_header(t *testing.T) {
	for name, src := range fragments(t) {
		t.Run(name, func(t *testing.T) {
			h, body := header(src)
			if !strings.HasPrefix(h, "-- "+name+".lua: ") {
				t.Errorf("first line must be \"-- %s.lua: ...\", got %q", name, strings.SplitN(src, "\n", 2)[0])
			}
			if !strings.Contains(h, "Defines") {
				t.Error("the header does not say what the fragment defines (\"Defines ...\")")
			}
			for _, v := range []string{"KEYS", "ARGV"} {
				if strings.Contains(body, v+"[") && !strings.Contains(h, v+"[") {
					t.Errorf("the fragment reads %s but its header names none", v)
				}
			}
		})
	}
}

// Every fragment serves some script.
func TestFragments_used(t *testing.T) {
	frags := fragments(t)
	used := map[string]bool{}
	for _, s := range scripts.All() {
		for name, src := range frags {
			if strings.Contains(s.Source(), src) {
				used[name] = true
			}
		}
	}
	for name := range frags {
		if !used[name] {
			t.Errorf("fragment %s is used by no script", name)
		}
	}
}

// A script gets the fragments its header uses, each after those it uses
// itself and each once, then its own text.
func TestCompose_fragmentsInOrder(t *testing.T) {
	frags := fragments(t)
	s := scripts.Compose("t", "-- t.lua: a test.\n-- uses fragment/replay.lua\n-- uses fragment/once.lua\n-- uses fragment/clock.lua\nreturn 1\n")
	want := frags["once"] + frags["replay"] + frags["clock"] + "-- t.lua: a test.\n"
	if !strings.HasPrefix(s.Source(), want) || !strings.HasSuffix(s.Source(), "return 1\n") {
		t.Errorf("composed source:\n%s", s.Source())
	}
}

// A fragment that a line of the body uses comes in at that line, after
// the fragments it uses that are not in yet: code above it runs without it.
func TestCompose_fragmentInBody(t *testing.T) {
	frags := fragments(t)
	src := "-- t.lua: a test.\n-- uses fragment/once.lua\nif x then return 0 end\n-- uses fragment/replay.lua\n-- uses fragment/clock.lua\nreturn 1\n"
	s := scripts.Compose("t", src)
	want := frags["once"] + "-- t.lua: a test.\n-- uses fragment/once.lua\nif x then return 0 end\n" +
		frags["replay"] + "-- uses fragment/replay.lua\n" + frags["clock"] + "-- uses fragment/clock.lua\nreturn 1\n"
	if s.Source() != want {
		t.Errorf("composed source:\n%s\nwant:\n%s", s.Source(), want)
	}
}

func TestCompose_missingFragmentPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a script using a missing fragment did not panic")
		}
	}()
	scripts.Compose("t", "-- t.lua\n-- uses fragment/no_such.lua\nreturn 1\n")
}

// maxLines bounds every Lua file, script or fragment; a composed script
// may be longer.
const maxLines = 150

func TestFiles_short(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(luaDir, "*.lua"))
	more, _ := filepath.Glob(filepath.Join(luaDir, "fragment", "*.lua"))
	for _, p := range append(paths, more...) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), "\n"); n > maxLines {
			t.Errorf("%s has %d lines, more than %d", p, n, maxLines)
		}
	}
}
