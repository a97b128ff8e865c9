package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN call.
const scanCount = 500

// runLs lists the synchronizers whose names match a pattern, found by SCAN
// on every master, one line each.
func runLs(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per synchronizer, as inspect -json does")
	all := fs.Bool("all", false, "list plain integers too that nothing ties to a semaphore or a latch")
	rest, err := e.parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("want at most one PATTERN, got %d arguments", len(rest))
	}
	pattern := "*"
	if len(rest) == 1 {
		pattern = rest[0]
	}
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.client.Close()
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	found, err := scan(ctx, c, pattern)
	if err != nil {
		return err
	}
	var states []*State
	for _, name := range found {
		st, err := read(ctx, c, name, "")
		if err != nil {
			return err
		}
		switch {
		case st.Kind == kindNone || st.Kind == kindOther:
			continue // gone since the scan, or not a synchronizer
		case st.bare && !*all:
			continue // an integer that nothing ties to a synchronizer
		}
		sortState(st)
		states = append(states, st)
	}
	if len(states) == 0 {
		return nothingHere("no synchronizer matches %q", pattern)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		for _, st := range states {
			if err := enc.Encode(st); err != nil {
				return err
			}
		}
		return nil
	}
	t := newTable(e.stdout)
	row(t, "NAME", "KIND", "TTL", "HOLDERS", "WAITERS", "VALUE", "NOTE")
	for _, st := range states {
		note := st.Note
		if note == "" {
			note = "-"
		}
		row(t, st.Name, st.Kind, millis(st.TTLms), holdersCell(st.Holders), waitersCell(st), value(st), note)
	}
	return t.Flush()
}

// waitersCell shows how many wait: queued, and the clients listening on
// the shared channel (+N listening), where waiters without an entry wait.
func waitersCell(st *State) string {
	s := fmt.Sprint(len(st.Queue))
	if d := dead(st); d > 0 {
		s += fmt.Sprintf(" (%d dead)", d)
	}
	if n := st.Subscribers; n != nil && *n > 0 {
		s += fmt.Sprintf(" +%d listening", *n)
	}
	return s
}

// value shows a state's number: permits, count or token.
func value(st *State) string {
	switch {
	case st.Kind == kindCounter:
		return fmt.Sprintf("value=%d", *st.Permits)
	case st.PermitsTotal != nil:
		return fmt.Sprintf("permits=%d/%d", *st.Permits, *st.PermitsTotal)
	case st.Permits != nil:
		return fmt.Sprintf("permits=%d", *st.Permits)
	case st.Count != nil:
		return fmt.Sprintf("count=%d", *st.Count)
	case st.Token != nil:
		return fmt.Sprintf("token=%d", *st.Token)
	}
	return "-"
}

// queuePrefixes are the prefixes of the waiter queues that outlive a
// synchronizer's own key (they have no TTL): a lock whose holder's lease
// ran out is found by its waiters' leftovers.
var queuePrefixes = []string{"latchkey_lock_queue", "redisson_lock_queue", "latchkey_semaphore_queue", "latchkey_rwlock_writers"}

// A scanSpec is one SCAN's pattern, and how a key it finds names a
// synchronizer (false: it does not).
type scanSpec struct {
	pattern string
	name    func(key string) (string, bool)
}

// scan returns the names matching pattern on every master, sorted: the
// keys, less the auxiliary keys that belong to a synchronizer listed by
// its name, and the names whose waiter queues are left with nothing
// under the name itself.
func scan(ctx context.Context, c *conn, pattern string) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	add := func(name string) {
		mu.Lock()
		seen[name] = true
		mu.Unlock()
	}
	scans := []scanSpec{{pattern, func(k string) (string, bool) { return k, !auxiliary(k) }}}
	for _, p := range queuePrefixes {
		// keys.Prefix braces a name without a hash tag: {name}.
		scans = append(scans, scanSpec{p + ":{" + pattern + "}", queueName(p, false)}, scanSpec{p + ":" + pattern, queueName(p, true)})
	}
	if pattern == "*" {
		// Every key matches: one pass over the keyspace finds the queues
		// too, instead of one pass per prefix.
		names := make([]func(string) (string, bool), len(scans))
		for i, s := range scans {
			names[i] = s.name
		}
		scans = []scanSpec{{pattern, func(k string) (string, bool) {
			for _, name := range names {
				if n, ok := name(k); ok {
					return n, true
				}
			}
			return "", false
		}}}
	}
	one := func(ctx context.Context, node *redis.Client) error {
		for _, s := range scans {
			it := node.Scan(ctx, 0, s.pattern, scanCount).Iterator()
			for it.Next(ctx) {
				if name, ok := s.name(it.Val()); ok {
					add(name)
				}
			}
			if err := it.Err(); err != nil {
				return fmt.Errorf("%s: SCAN %q: %w", node.Options().Addr, s.pattern, err)
			}
		}
		return nil
	}
	var err error
	switch cl := c.client.(type) {
	case *redis.ClusterClient:
		err = cl.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, cl)
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

// queueName returns a function that reads the name from a queue key with
// prefix p: tagged for the names with a hash tag of their own (p:name),
// else for those braced by keys.Prefix (p:{name}).
func queueName(p string, tagged bool) func(key string) (string, bool) {
	return func(key string) (string, bool) {
		rest, ok := strings.CutPrefix(key, p+":")
		if !ok {
			return "", false
		}
		name := rest
		if !tagged {
			inner, ok := strings.CutPrefix(rest, "{")
			if !ok {
				return "", false
			}
			name, ok = strings.CutSuffix(inner, "}")
			if !ok {
				return "", false
			}
		}
		if name == "" || strings.Contains(name, "{") != tagged || keys.Prefix(p, name) != key {
			return "", false
		}
		return name, true
	}
}
