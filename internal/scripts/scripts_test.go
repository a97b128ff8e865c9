package scripts_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// luaDir is the folder of the Lua files, seen from the package directory,
// where tests run.
const luaDir = "../../scripts"

// source reads the file a script was embedded from.
func source(t *testing.T, s *scripts.Script) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(luaDir, s.Name()+".lua"))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// Every *.lua file of the package is embedded, so a script added later is
// covered by the table-driven tests below without touching them.
func TestAll_coversEveryFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(luaDir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	all := scripts.All()
	for _, f := range fragments(t) {
		if strings.Contains(f, "\n--[[") {
			t.Errorf("a fragment has a block comment, which compact does not strip")
		}
	}
	if len(all) != len(files) || len(all) == 0 {
		t.Fatalf("All() has %d scripts, the package has %d .lua files", len(all), len(files))
	}
	for i, s := range all {
		if i > 0 && all[i-1].Name() >= s.Name() {
			t.Errorf("All() not sorted by name: %q before %q", all[i-1].Name(), s.Name())
		}
		if got := scripts.Get(s.Name()); got != s {
			t.Errorf("Get(%q) is not the script All() returns", s.Name())
		}
		// What is sent has no comments, and has the script's own code,
		// in order (compact drops only functions nothing calls).
		sent := s.Source()
		if strings.Contains(sent, "--") {
			t.Errorf("%s: Source() has a comment", s.Name())
		}
		at := 0
		for line := range strings.Lines(source(t, s)) {
			code, _, _ := strings.Cut(line, "--")
			code = strings.TrimRight(code, " \t\n")
			if strings.TrimSpace(code) == "" || strings.HasPrefix(code, "local function ") {
				continue
			}
			i := strings.Index(sent[at:], code+"\n")
			if i < 0 {
				t.Errorf("%s: Source() lacks its file's line %q, or has it out of order", s.Name(), code)
				break
			}
			at += i + len(code)
		}
		sum := sha1.Sum([]byte(s.Source()))
		if want := hex.EncodeToString(sum[:]); s.Hash() != want {
			t.Errorf("%s: Hash() = %s, want the SHA-1 of its source, %s", s.Name(), s.Hash(), want)
		}
	}
}

func TestGet_unknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Get of a missing script did not panic")
		}
	}()
	scripts.Get("no_such_script")
}

// Each script starts with the header the project requires: its name, and
// the KEYS and ARGV it uses and what it returns.
func TestAll_header(t *testing.T) {
	for _, s := range scripts.All() {
		t.Run(s.Name(), func(t *testing.T) {
			src := source(t, s)
			var header []string
			for line := range strings.Lines(src) {
				if !strings.HasPrefix(line, "--") {
					break
				}
				header = append(header, line)
			}
			h := strings.Join(header, "")
			if len(header) == 0 || !strings.HasPrefix(header[0], "-- "+s.Name()+".lua") {
				t.Errorf("first line must be \"-- %s.lua: ...\", got %q", s.Name(), strings.TrimSpace(src[:min(len(src), 60)]))
			}
			body := src[len(h):]
			for _, name := range []string{"KEYS", "ARGV"} {
				if strings.Contains(body, name+"[") && !strings.Contains(h, name) {
					t.Errorf("the script uses %s but its header does not describe them", name)
				}
			}
			if !strings.Contains(strings.ToLower(h), "return") {
				t.Error("the header does not say what the script returns")
			}
		})
	}
}

// SCRIPT LOAD compiles a script: a syntax error in any embedded script fails
// here at once, naming the script.
func TestAll_loadIntoRedis(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	ctx := context.Background()
	for _, s := range scripts.All() {
		t.Run(s.Name(), func(t *testing.T) {
			sha, err := c.ScriptLoad(ctx, s.Source()).Result()
			if err != nil {
				t.Fatalf("SCRIPT LOAD: %v", err)
			}
			if sha != s.Hash() {
				t.Errorf("SCRIPT LOAD returned %s, Hash() = %s", sha, s.Hash())
			}
		})
	}
}

func hashes() []string {
	var hs []string
	for _, s := range scripts.All() {
		hs = append(hs, s.Hash())
	}
	return hs
}

// requireLoaded fails t unless c has every script.
func requireLoaded(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	exists, err := c.ScriptExists(ctx, hashes()...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range exists {
		if !ok {
			t.Errorf("%s: script %s not loaded", c.Options().Addr, scripts.All()[i].Name())
		}
	}
}

func TestPreload_standalone(t *testing.T) {
	c := redistest.StartServer(t).Client(t)
	ctx := context.Background()
	if err := scripts.Preload(ctx, c); err != nil {
		t.Fatal(err)
	}
	requireLoaded(t, ctx, c)
}

func TestPreload_cluster(t *testing.T) {
	cc := redistest.SharedCluster(t).Client(t)
	ctx := context.Background()
	flush := func(ctx context.Context, c *redis.Client) error { return c.ScriptFlush(ctx).Err() }
	if err := cc.ForEachMaster(ctx, flush); err != nil {
		t.Fatal(err)
	}
	if err := scripts.Preload(ctx, cc); err != nil {
		t.Fatal(err)
	}
	var masters atomic.Int32
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		masters.Add(1)
		requireLoaded(t, ctx, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := masters.Load(); n != 3 {
		t.Errorf("checked %d masters, want 3", n)
	}
}

// evalCounter counts the EVALSHA and EVAL commands a client sends.
type evalCounter struct{ evalsha, eval atomic.Int32 }

func (e *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (e *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (e *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch strings.ToLower(cmd.Name()) {
		case "evalsha":
			e.evalsha.Add(1)
		case "eval":
			e.eval.Add(1)
		}
		return next(ctx, cmd)
	}
}

// Run falls back from EVALSHA to EVAL when the server lost its scripts
// (SCRIPT FLUSH, a restart, a failover), and EVALSHA works again after.
func TestRun_afterScriptFlush(t *testing.T) {
	s := scripts.Get("lock_renew")
	key := "scripts-test:" + t.Name()
	check := func(t *testing.T, c redis.UniversalClient, flush func() error) {
		var n evalCounter
		c.AddHook(&n)
		ctx := context.Background()
		run := func() {
			t.Helper()
			got, err := scripts.Ints(rt.Of(c).Sender(nil, 0).Read(ctx, scripts.Request{Script: s, Keys: []string{key}, Args: []any{1000, "nobody"}}))
			if err != nil || len(got) != 1 || got[0] != 0 {
				t.Fatalf("Run = %v, %v; want [0]", got, err)
			}
		}
		run()
		if err := flush(); err != nil {
			t.Fatal(err)
		}
		run() // EVALSHA answers NOSCRIPT, EVAL loads it
		run() // EVALSHA hits
		if sha, ev := n.evalsha.Load(), n.eval.Load(); sha != 3 || ev < 1 || ev > 2 {
			t.Errorf("EVALSHA %d times, EVAL %d times; want 3 and 1 (2 if the first run missed too)", sha, ev)
		}
	}
	t.Run("standalone", func(t *testing.T) {
		c := redistest.SharedServer(t).Client(t)
		check(t, c, func() error { return c.ScriptFlush(context.Background()).Err() })
	})
	t.Run("cluster", func(t *testing.T) {
		cc := redistest.SharedCluster(t).Client(t)
		check(t, cc, func() error {
			return cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
				return c.ScriptFlush(ctx).Err()
			})
		})
	})
}

// Command builds what go-redis's EVALSHA and EVAL would: the name, the
// hash or the source, the number of keys, the keys, the arguments. A key
// the request has boxed goes as that box, the others as themselves.
func TestCommand(t *testing.T) {
	s := scripts.Get("lock_renew")
	ctx := context.Background()
	boxed := any("k2")
	for _, r := range []scripts.Request{
		{Script: s, Keys: []string{"k1", "k2"}, Args: []any{"a", 7}},
		{Script: s, Keys: []string{"k1", "k2"}, KeyArgs: []any{nil, boxed}, Args: []any{"a", 7}},
		{Script: s, Keys: []string{"k1", "k2"}, KeyArgs: []any{"k1"}, Args: []any{"a", 7}},
	} {
		for _, source := range []bool{false, true} {
			want := []any{"evalsha", s.Hash(), 2, "k1", "k2", "a", 7}
			if source {
				want[0], want[1] = "eval", s.Source()
			}
			if got := r.Command(ctx, source).Args(); !slices.Equal(got, want) {
				t.Errorf("Command(source %v) of %v args = %v, want %v", source, r.KeyArgs, got, want)
			}
		}
	}
	r := scripts.Request{Script: s, Args: []any{"a", 7}}
	if got := r.Command(ctx, false).Args(); len(got) != 5 || got[2] != 0 {
		t.Errorf("Command without keys = %v, want 0 keys and the 2 arguments", got)
	}
	// A boxed key costs no allocation to send.
	withBox := scripts.Request{Script: s, Keys: []string{"k1"}, KeyArgs: []any{boxed}}
	without := scripts.Request{Script: s, Keys: []string{"k1"}}
	if a, b := testing.AllocsPerRun(20, func() { withBox.Command(ctx, false) }), testing.AllocsPerRun(20, func() { without.Command(ctx, false) }); a != b-1 {
		t.Errorf("Command allocates %v times with the key boxed, %v without: want one fewer", a, b)
	}
}
