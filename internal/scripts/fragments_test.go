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
		for _, name := range s.Fragments() {
			used[name] = true
		}
	}
	for name := range frags {
		if !used[name] {
			t.Errorf("fragment %s is used by no script", name)
		}
	}
}

// A script gets the fragments its header uses, each after those it uses
// itself and each once, then its own text; those pasted inline (once.lua
// and record.lua paste once_read.lua, which pastes once_match.lua) come
// last.
func TestCompose_fragmentsInOrder(t *testing.T) {
	s := scripts.Compose("t", "-- t.lua: a test.\n-- uses fragment/replay.lua\n-- uses fragment/once.lua\n-- uses fragment/clock.lua\nreturn millis()\n")
	if got := strings.Join(s.Fragments(), ","); got != "once,record,replay,clock,once_read,once_match" {
		t.Errorf("fragments %s, want once,record,replay,clock,once_read,once_match", got)
	}
	if !strings.HasSuffix(s.Source(), "return millis()\n") || !strings.Contains(s.Source(), "local function micros") {
		t.Errorf("composed source:\n%s", s.Source())
	}
}

// A fragment that a line of the body uses comes in at that line: code
// above it runs without it. What nothing calls is not sent.
func TestCompose_fragmentInBody(t *testing.T) {
	src := "-- t.lua: a test.\n-- uses fragment/once.lua\nif x then return 0 end\n-- uses fragment/clock.lua\nreturn micros()\n"
	s := scripts.Compose("t", src)
	sent := s.Source()
	early, clock := strings.Index(sent, "if x then return 0 end"), strings.Index(sent, "local function micros")
	if early < 0 || clock < early {
		t.Errorf("composed source, the clock's function not after the early return:\n%s", sent)
	}
	if strings.Contains(sent, "local function millis") || strings.Contains(sent, "local function once_record") {
		t.Errorf("functions nothing calls were sent:\n%s", sent)
	}
	if s.Functions() != 1 {
		t.Errorf("%d functions sent, want 1 (micros: once.lua defines none)", s.Functions())
	}
}

// An inline line pastes the fragment's code where it stands, indented as
// the line, each time: two branches read the record, with no function.
func TestCompose_inline(t *testing.T) {
	src := "-- t.lua: a test.\n-- uses fragment/once.lua\nif x then\n  -- inline fragment/once_read.lua\nend\n-- inline fragment/once_read.lua\nreturn once_rec\n"
	sent := scripts.Compose("t", src).Source()
	read := "once_held = redis.call('get', once_key)"
	if n := strings.Count(sent, read); n != 3 { // once.lua's, and the two here
		t.Errorf("the record read %d times in the composed source, want 3:\n%s", n, sent)
	}
	if !strings.Contains(sent, "if x then\n  "+read) {
		t.Errorf("the pasted code not indented as its line:\n%s", sent)
	}
	if strings.Contains(sent, "function") {
		t.Errorf("a function was sent:\n%s", sent)
	}
	defer func() {
		if recover() == nil {
			t.Error("a script pasting a missing fragment did not panic")
		}
	}()
	scripts.Compose("t", "-- t.lua\n-- inline fragment/no_such.lua\nreturn 1\n")
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
