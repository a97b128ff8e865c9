package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN call.
const scanCount = 1000

// readBatch is how many names ls reads in one batch (see readMany), and
// printAfter how long a name found waits at most for its batch to fill
// before it is read and printed.
const (
	readBatch  = 256
	printAfter = 200 * time.Millisecond
)

// runLs lists the synchronizers whose names match a pattern: one SCAN
// pass over each master, each page's keys sifted in a pipelined round
// trip or two, and the names that may be synchronizers read in batches,
// their rows printed as they are read.
func runLs(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per synchronizer, as inspect -json does")
	all := fs.Bool("all", false, "list plain integers too that nothing ties to a semaphore or a latch")
	lease := leaseFlag(fs)
	help(fs, "ls [flags] [PATTERN]", lsHelp)
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
	c.lease = *lease
	out := newLsPrinter(e.stdout, *asJSON, *lease)
	l := &lister{e: e, c: c, pattern: pattern, all: *all, found: func(sts []*State) error { return out.print(sts) }}
	gaps := l.run(ctx)
	switch {
	case len(gaps) > 0:
		return &statusError{exitPartial, "partial listing: " + strings.Join(gaps, "; ")}
	case out.rows == 0:
		return nothingHere("no synchronizer matches %q", pattern)
	}
	return nil
}

// A lister lists the synchronizers of a pattern on every master.
type lister struct {
	e       *env
	c       *conn
	pattern string
	all     bool // bare integers too
	found   func([]*State) error

	mu   sync.Mutex
	gaps []string // what the listing lacks, and why
}

// run lists every master's synchronizers, the masters of a cluster side
// by side, and returns what the listing lacks: a master whose SCAN failed
// or ran past -timeout, a batch whose read did, the names it could not
// read. The rows printed are all correct, whatever it lacks.
func (l *lister) run(ctx context.Context) []string {
	switch cl := l.c.client.(type) {
	case *redis.ClusterClient:
		// The cluster's map, and how it publishes (see conn.publish),
		// each node asked within -timeout (the client's read timeout):
		// done once, before the batches, whose time it would take.
		if _, err := l.c.publish(ctx); err != nil {
			l.gap("%v", err)
			return l.gaps
		}
		err := cl.ForEachMaster(ctx, func(_ context.Context, node *redis.Client) error {
			l.master(ctx, node)
			return nil
		})
		if err != nil {
			l.gap("the cluster's masters: %v", err)
		}
	case *redis.Client:
		l.master(ctx, cl)
	}
	return l.gaps
}

func (l *lister) gap(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gaps = append(l.gaps, fmt.Sprintf(format, args...))
}

// master scans one master's keyspace once, each SCAN call within
// -timeout, and reads and prints the synchronizers it finds. The next
// page is on its way while a page is sifted.
func (l *lister) master(ctx context.Context, node *redis.Client) {
	addr := node.Options().Addr
	seen := map[string]bool{} // names sent to be read
	var pending []string
	var since time.Time
	flush := func() bool {
		defer func() { pending = nil }()
		return len(pending) == 0 || l.read(ctx, addr, pending)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cursor, next := uint64(0), l.scan(ctx, node, 0)
	for {
		pg := <-next
		if pg.err != nil {
			flush()
			l.gap("%s: SCAN stopped (%v): its keys after the cursor %d are not listed", addr, pg.err, cursor)
			return
		}
		if pg.next != 0 {
			next = l.scan(ctx, node, pg.next)
		}
		names, ok := l.sift(ctx, addr, pg.keys, seen)
		if !ok {
			flush()
			return
		}
		if len(pending) == 0 && len(names) > 0 {
			since = time.Now()
		}
		pending = append(pending, names...)
		if pg.next == 0 {
			flush()
			return
		}
		if len(pending) >= readBatch || len(pending) > 0 && time.Since(since) >= printAfter {
			if !flush() {
				return
			}
		}
		cursor = pg.next
	}
}

// A page is what one SCAN call returned.
type page struct {
	keys []string
	next uint64
	err  error
}

// scan sends the SCAN call at cursor, within -timeout, and returns where
// its page will arrive.
func (l *lister) scan(ctx context.Context, node *redis.Client, cursor uint64) <-chan page {
	ch := make(chan page, 1)
	go func() {
		sctx, cancel := l.e.withTimeout(ctx)
		defer cancel()
		keys, next, err := node.Scan(sctx, cursor, "", scanCount).Result()
		ch <- page{keys, next, err}
	}()
	return ch
}

// sift returns the names among a page of keys that may be synchronizers:
// the keys that match the pattern and are no synchronizer's auxiliary key,
// whose value looks like a lock's or a semaphore's or a latch's (see
// sieveStep), and the names whose waiters' queues are left, which match
// it. seen holds the names found before, which it leaves out and adds to.
func (l *lister) sift(ctx context.Context, addr string, page []string, seen map[string]bool) ([]string, bool) {
	var names, keep []string
	var steps []step
	for _, k := range page {
		if name, ok := leftover(k); ok {
			if globMatch(l.pattern, name) && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
			continue
		}
		if auxiliary(k) || !globMatch(l.pattern, k) || seen[k] {
			continue
		}
		i := len(steps)
		keep = append(keep, "")
		steps = append(steps, sieveStep(l.c, k, l.all, func() { keep[i] = k }))
	}
	if len(steps) > 0 {
		sctx, cancel := l.e.withTimeout(ctx)
		errs := runSteps(sctx, l.c, nil, steps)
		cancel()
		if err := errors.Join(errs...); err != nil {
			l.gap("%s: a page of keys could not be sifted (%v): the rest of its keys are not listed", addr, first(errs))
			return nil, false
		}
	}
	for _, k := range keep {
		if k != "" && !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	return names, true
}

// read reads the states of names within -timeout and prints those that
// are synchronizers; false if the batch could not be read at all.
func (l *lister) read(ctx context.Context, addr string, names []string) bool {
	reqs := make([]request, len(names))
	for i, n := range names {
		reqs[i] = request{name: n}
	}
	rctx, cancel := l.e.withTimeout(ctx)
	sts, errs := readMany(rctx, l.c, reqs, nil)
	cancel()
	var show []*State
	for i, st := range sts {
		switch {
		case errs[i] != nil:
			l.gap("%v", errs[i])
		case st.Kind == kindNone || st.Kind == kindOther:
			// gone since the scan, or not a synchronizer
		case st.bare && !l.all:
			// an integer that nothing ties to a synchronizer
		default:
			sortState(st)
			show = append(show, st)
		}
	}
	slices.SortFunc(show, func(a, b *State) int { return strings.Compare(a.Name, b.Name) })
	if err := l.found(show); err != nil {
		l.gap("%s: printing: %v", addr, err)
		return false
	}
	return ctx.Err() == nil
}

// first returns the first non-nil error of errs.
func first(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// queuePrefixes are the prefixes of the waiter queues that outlive a
// synchronizer's own key (they have no TTL): a lock whose holder's lease
// ran out is found by its waiters' leftovers.
var queuePrefixes = keys.QueuePrefixes()

// leftover returns the name of the synchronizer whose waiter queue key
// is, if it is one.
func leftover(key string) (string, bool) {
	if !strings.HasPrefix(key, keys.LatchkeyPrefix) && !strings.HasPrefix(key, keys.RedissonPrefix) {
		return "", false
	}
	for _, p := range queuePrefixes {
		for _, tagged := range []bool{false, true} {
			if name, ok := queueName(p, tagged)(key); ok {
				return name, true
			}
		}
	}
	return "", false
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
