// Package scripts holds every Lua script of latchkey, embedded from *.lua
// files, and the one runner they all go through.
//
// Each file starts with a header naming its KEYS, ARGV and return values.
// Scripts return explicit integers or arrays, never nil, so callers decode
// them with the typed helpers here and never match redis.Nil by hand.
package scripts

import (
	"context"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var files embed.FS

// prelude is prepended to every script whose header says it uses it.
//
//go:embed prelude/once.lua
var prelude string

// usesPrelude is the header line of a script that takes a request record.
const usesPrelude = "-- uses prelude/once.lua"

// A Script is one embedded Lua script.
type Script struct {
	name string
	src  string // what is sent: the file, after the prelude if it uses it
	once bool   // takes a request record (see Exec)
	s    *redis.Script
}

var all = load()

func load() map[string]*Script {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err)
	}
	m := make(map[string]*Script, len(entries))
	for _, e := range entries {
		src, err := files.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		m[name] = compose(name, string(src))
	}
	return m
}

// compose makes the script called name from its file's text src: after
// the prelude if its header says it uses it.
func compose(name, src string) *Script {
	s := &Script{name: name, src: src}
	if strings.Contains(s.src, "\n"+usesPrelude+"\n") {
		s.once = true
		s.src = prelude + s.src
	}
	s.s = redis.NewScript(s.src)
	return s
}

// Get returns the script in file name.lua. It panics if there is none: the
// set of scripts is fixed at build time.
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

// Hash returns the script's SHA-1, as EVALSHA takes it.
func (s *Script) Hash() string { return s.s.Hash() }

// Source returns the text sent to Redis: the file, after the prelude if the
// script uses it.
func (s *Script) Source() string { return s.src }

// Run runs the script with EVALSHA and, when the server answers NOSCRIPT
// (after a restart, a failover or SCRIPT FLUSH), once more with EVAL, which
// also loads it. It works on a *redis.Client and a *redis.ClusterClient
// alike; in a cluster all keys must share one hash slot. Run is for scripts
// that change nothing, or nothing that matters if done twice; writes go
// through Exec.
func (s *Script) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	if s.once {
		panic("scripts: " + s.name + " takes a request record: use Exec")
	}
	return s.s.Run(ctx, c, keys, args...)
}

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
