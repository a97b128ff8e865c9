// Package scripts composes latchkey's Lua: each script of package
// github.com/latchkey/latchkey/scripts with its fragments, compacted for
// sending (see compact.go), and one typed request builder per script
// (req_*.go), which rt.Sender sends.
//
// A script's header names its KEYS, ARGV and return values; a header line
// "-- uses fragment/<name>.lua" (several may follow, in order) puts that
// fragment before the script, after the fragments it uses itself, each
// fragment once. The same line further down puts the fragment there: the
// code above it runs without paying for the fragment's definitions (a
// fast path that returns early), and inside a block, only the branch that
// needs them pays. A line "-- inline fragment/<name>.lua", in a script or
// a fragment, pastes that fragment's code there, every time: a statement
// that more than one branch runs, written once, without a function that
// every run would define. scripts/fragment/once.lua is the request
// record (see rt.Sender). scripts/MANIFEST lists every script as it is
// sent; a test fails when it differs, and
//
//	go test ./internal/scripts -run Manifest -update
//
// rewrites it.
//
// Scripts return explicit integers or arrays, never nil, so callers decode
// them with the typed helpers here and never match redis.Nil by hand.
package scripts

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	lua "github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

// files holds the scripts and their fragments.
var files = lua.FS

// usesFragment starts a header line naming a fragment the file needs:
// "-- uses fragment/<name>.lua".
const usesFragment = "-- uses fragment/"

// A Script is one Lua script, composed.
type Script struct {
	name      string
	src       string   // what is sent: the fragments it uses, then the file, compacted
	fragments []string // the fragments it is made of, in order
	functions int      // the functions src defines
	once      bool     // takes a request record (see rt.Sender)
	s         *redis.Script
	// The hash and the source, boxed once as the arguments of EVALSHA
	// and EVAL: go-redis's Script.Run boxes the hash on every call.
	hashArg, srcArg any
}

var all = load()

func load() map[string]*Script {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err)
	}
	m := make(map[string]*Script, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		src, err := files.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		m[name] = Compose(name, string(src))
	}
	return m
}

// Compose makes the script called name from its file's text src: the
// fragments its header uses, each after those it uses itself and each
// once, then src, with the fragments a line of its body uses put in at
// that line. It panics on a missing fragment or a cycle: the files are
// fixed at build time.
func Compose(name, src string) *Script {
	var b strings.Builder
	var order []string
	done := map[string]bool{} // false: being composed (a cycle if met again)
	var add func(from, text string)
	add = func(from, text string) {
		for _, f := range uses(text) {
			if finished, seen := done[f]; seen {
				if !finished {
					panic("scripts: fragment " + f + " uses itself, by way of " + from)
				}
				continue
			}
			done[f] = false
			frag, err := files.ReadFile("fragment/" + f + ".lua")
			if err != nil {
				panic("scripts: " + from + " uses fragment " + f + ", which does not exist")
			}
			add(f, string(frag))
			b.Write(frag)
			done[f] = true
			order = append(order, f)
		}
	}
	head, body := splitHeader(src)
	add(name, head)
	b.WriteString(head)
	for line := range strings.Lines(body) {
		if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, usesFragment) {
			add(name, t)
		}
		b.WriteString(line)
	}
	text := inline(name, b.String(), 0, func(f string) {
		if !slices.Contains(order, f) {
			order = append(order, f)
		}
	})
	s := &Script{name: name, fragments: order, once: done["once"]}
	s.src, s.functions = compact(text)
	s.s = redis.NewScript(s.src)
	s.hashArg, s.srcArg = s.s.Hash(), s.src
	return s
}

// inlineFragment starts a line that pastes a fragment's code where it
// stands: "-- inline fragment/<name>.lua".
const inlineFragment = "-- inline fragment/"

// inline returns text with each inline line replaced by the code of the
// fragment it names, indented as the line, and the fragment's own inline
// lines replaced in turn (depth counts those); pasted is told the name of
// each fragment pasted. It panics on a missing
// fragment or one that pastes itself: the files are fixed at build time.
func inline(from, text string, depth int, pasted func(string)) string {
	if !strings.Contains(text, inlineFragment) {
		return text
	}
	if depth > 8 {
		panic("scripts: " + from + " pastes fragments in a cycle")
	}
	var b strings.Builder
	for line := range strings.Lines(text) {
		t := strings.TrimLeft(line, " \t")
		f, ok := strings.CutPrefix(strings.TrimSpace(t), inlineFragment)
		if !ok {
			b.WriteString(line)
			continue
		}
		frag, err := files.ReadFile("fragment/" + f)
		if err != nil {
			panic("scripts: " + from + " pastes fragment " + f + ", which does not exist")
		}
		pasted(strings.TrimSuffix(f, ".lua"))
		indent := line[:len(line)-len(t)]
		_, code := splitHeader(inline(f, string(frag), depth+1, pasted))
		for l := range strings.Lines(code) {
			b.WriteString(indent + l)
		}
	}
	return b.String()
}

// splitHeader splits a file into its header, the leading comment lines,
// and the rest.
func splitHeader(src string) (string, string) {
	n := 0
	for line := range strings.Lines(src) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		n += len(line)
	}
	return src[:n], src[n:]
}

// uses returns the fragments that the header of a file, its leading
// comment lines, names.
func uses(src string) []string {
	var out []string
	for line := range strings.Lines(src) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), usesFragment); ok {
			out = append(out, strings.TrimSuffix(f, ".lua"))
		}
	}
	return out
}

// Get returns the script in file name.lua of package scripts. It panics if
// there is none: the set of scripts is fixed at build time.
func Get(name string) *Script {
	s, ok := all[name]
	if !ok {
		panic("scripts: no script " + name)
	}
	return s
}

// All returns every script, sorted by name.
func All() []*Script {
	out := make([]*Script, 0, len(all))
	for _, s := range all {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Name returns the script's file name without .lua.
func (s *Script) Name() string { return s.name }

// Fragments returns the fragments the script is made of, in order.
func (s *Script) Fragments() []string { return s.fragments }

// Functions returns how many functions the script defines on every call.
func (s *Script) Functions() int { return s.functions }

// Hash returns the script's SHA-1, as EVALSHA takes it.
func (s *Script) Hash() string { return s.s.Hash() }

// Source returns the text sent to Redis: the fragments the script uses,
// then its file, without comments and without the functions it never
// calls (see compact).
func (s *Script) Source() string { return s.src }

// A Processor runs a command: a client of any kind, or a pipeline.
type Processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Eval runs the script on c with EVALSHA, and with EVAL when the server
// answers NOSCRIPT, waiting for the answer as long as go-redis does: the
// send path's own (see package rt).
func (s *Script) Eval(ctx context.Context, c Processor, keys []string, args ...any) *redis.Cmd {
	return Request{Script: s, Keys: keys, Args: args}.Eval(ctx, c)
}

// Eval runs r as Script.Eval does.
func (r Request) Eval(ctx context.Context, c Processor) *redis.Cmd {
	cmd := r.Command(ctx, false)
	_ = c.Process(ctx, cmd)
	if NoScript(cmd.Err()) {
		cmd = r.Command(ctx, true)
		_ = c.Process(ctx, cmd)
	}
	return cmd
}

// NoScript reports whether err is the server's NOSCRIPT: an EVALSHA of a
// script it does not have, which did not run. (HasErrorPrefix allocates,
// a nil err too.)
func NoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// The commands' names, boxed once.
var evalsha, eval any = "evalsha", "eval"

// Command returns r's EVALSHA, or its EVAL if source, for a pipeline to
// queue (Eval sends one): go-redis's own, less the allocations of boxing
// its name, its hash and the keys r has boxed already.
func (r Request) Command(ctx context.Context, source bool) *redis.Cmd {
	name, body := evalsha, r.Script.hashArg
	if source {
		name, body = eval, r.Script.srcArg
	}
	a := make([]any, 3+len(r.Keys), 3+len(r.Keys)+len(r.Args))
	a[0], a[1], a[2] = name, body, len(r.Keys)
	for i, k := range r.Keys {
		if i < len(r.KeyArgs) && r.KeyArgs[i] != nil {
			a[3+i] = r.KeyArgs[i]
		} else {
			a[3+i] = k
		}
	}
	cmd := redis.NewCmd(ctx, append(a, r.Args...)...)
	if len(r.Keys) > 0 {
		cmd.SetFirstKeyPos(3) // routes it on a cluster
	}
	return cmd
}

// Recorded reports whether the script takes a request record
// (fragment/once.lua), which the send path appends to its KEYS and ARGV.
func (s *Script) Recorded() bool { return s.once }

// Preload loads every script on every master of client, so that the first
// EVALSHA of each does not miss.
func Preload(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range All() {
			if err := s.s.Load(ctx, c).Err(); err != nil {
				return fmt.Errorf("latchkey: load script %s: %w", s.name, err)
			}
		}
		return nil
	}
	switch c := client.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, load)
	case *redis.Client:
		return load(ctx, c)
	default:
		for _, s := range All() {
			if err := s.s.Load(ctx, client).Err(); err != nil {
				return fmt.Errorf("latchkey: load script %s: %w", s.name, err)
			}
		}
		return nil
	}
}
