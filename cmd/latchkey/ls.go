package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN call.
const scanCount = 500

// runLs lists the synchronizers whose names match a pattern, found by SCAN
// on every master, one line each.
func runLs(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per synchronizer, as inspect -json does")
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
		if st.Kind == kindNone || st.Kind == kindOther {
			continue // gone since the scan, or not a synchronizer
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
	row(t, "NAME", "KIND", "TTL", "HOLDERS", "WAITERS", "VALUE")
	for _, st := range states {
		row(t, st.Name, st.Kind, millis(st.TTLms), holdersCell(st.Holders), len(st.Queue), value(st))
	}
	return t.Flush()
}

// value shows a state's number: permits, count or token.
func value(st *State) string {
	switch {
	case st.Kind == kindCounter:
		return fmt.Sprintf("value=%d", *st.Permits)
	case st.Permits != nil:
		return fmt.Sprintf("permits=%d", *st.Permits)
	case st.Count != nil:
		return fmt.Sprintf("count=%d", *st.Count)
	case st.Token != nil:
		return fmt.Sprintf("token=%d", *st.Token)
	}
	return "-"
}

// scan returns the keys matching pattern on every master, sorted, less
// the auxiliary keys that belong to a synchronizer listed by its name.
func scan(ctx context.Context, c *conn, pattern string) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	one := func(ctx context.Context, node *redis.Client) error {
		it := node.Scan(ctx, 0, pattern, scanCount).Iterator()
		for it.Next(ctx) {
			if k := it.Val(); !auxiliary(k) {
				mu.Lock()
				seen[k] = true
				mu.Unlock()
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("%s: SCAN %q: %w", node.Options().Addr, pattern, err)
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
