package main

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// An edge of the wait-for graph: process from waits, queued, for
// a synchronizer that process to holds.
type edge struct {
	from, to string // process ids: the first half of the owner ids
	st       *State
	waiter   Waiter // from's queue entry
	pos      int    // its place in the queue, 1 first
	holder   Holder // to's hold; none through a semaphore
	possible bool   // through a semaphore, whose holders nothing records
}

// A graph is the wait-for graph across processes: a node is a process,
// the UUID that is the first half of every owner id it makes (latchkey's
// process UUID, under which it records itself; a Redisson client's UUID).
type graph struct {
	out   map[string][]edge   // by waiting process
	procs map[string]*Process // the records found, by process
	java  map[string]bool     // Redisson clients' processes
	blind map[string]int      // what the graph cannot see, and how often
}

// processOf returns the process of owner id <uuid>:<n>.
func processOf(id string) (string, bool) {
	u, _, ok := strings.Cut(id, ":")
	return u, ok && uuid.Validate(u) == nil
}

// buildGraph makes the wait-for graph of states: an edge from each live
// queued waiter's process to each holder's process of a lock; and from
// each process queued for a semaphore that cannot serve it now to every
// process blocked elsewhere (a possible holder of its permits: a
// semaphore records none). A process waiting for itself (one call holds,
// another waits) is no edge.
func buildGraph(states []*State) *graph {
	g := &graph{out: map[string][]edge{}, procs: map[string]*Process{}, java: map[string]bool{}, blind: map[string]int{}}
	note := func(id string, p *Process, client string) (string, bool) {
		u, ok := processOf(id)
		if ok && p != nil {
			g.procs[u] = p
		}
		if ok && client == "redisson" {
			g.java[u] = true
		}
		return u, ok
	}
	var pending []edge // semaphore waits, their holders to be found
	for _, st := range states {
		for _, h := range st.Holders {
			note(h.Owner, h.Process, h.Client)
		}
		for i, w := range st.Queue {
			from, ok := note(w.Owner, w.Process, w.Client)
			switch {
			case !w.Alive:
				g.blind["dead waiters, which wait for nothing"]++
				continue
			case !ok:
				g.blind["queued waiters whose entry names no process (Redisson's place in a latchkey queue, a permit semaphore's waiters)"]++
				continue
			}
			e := edge{from: from, st: st, waiter: w, pos: i + 1}
			if isLock(st.Kind) {
				for _, h := range st.Holders {
					if to, ok := processOf(h.Owner); ok && to != from {
						e.to, e.holder = to, h
						g.out[from] = append(g.out[from], e)
					}
				}
			} else if st.Permits != nil && *st.Permits < w.Permits {
				pending = append(pending, e)
			}
		}
		if n := st.Subscribers; n != nil && *n > 0 && st.Kind != kindLatch {
			g.blind["synchronizers with clients listening on their shared channel, where waiters without a queue entry wait (Java clients' lock and semaphore waiters, readers behind a writer)"]++
		}
	}
	blocked := slices.Sorted(maps.Keys(g.out))
	for _, e := range pending {
		for _, to := range blocked {
			if to != e.from && !queuedFor(e.st, to) {
				e.to, e.possible = to, true
				g.out[e.from] = append(g.out[e.from], e)
			}
		}
	}
	return g
}

// queuedFor reports whether process p waits for st itself.
func queuedFor(st *State, p string) bool {
	return slices.ContainsFunc(st.Queue, func(w Waiter) bool { u, _ := processOf(w.Owner); return u == p })
}

// cycles returns one cycle of each strongly connected set of processes:
// first those of the definite edges (through locks), then those that
// need a possible one (through a semaphore).
func (g *graph) cycles() [][]edge {
	var found [][]edge
	covered := map[string]bool{}
	for _, possible := range []bool{false, true} {
		for _, scc := range g.components(possible) {
			if len(scc) < 2 || covered[scc[0]] {
				continue
			}
			for _, p := range scc {
				covered[p] = true
			}
			found = append(found, g.cycleIn(scc, possible))
		}
	}
	return found
}

// edges returns p's edges, the possible ones only if possible.
func (g *graph) edges(p string, possible bool) []edge {
	return slices.DeleteFunc(slices.Clone(g.out[p]), func(e edge) bool { return e.possible && !possible })
}

// components returns the strongly connected components of the graph
// (Tarjan's), each sorted, in a stable order.
func (g *graph) components(possible bool) [][]string {
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(p string)
	visit = func(p string) {
		index[p], low[p] = len(index), len(index)
		stack, on[p] = append(stack, p), true
		for _, e := range g.edges(p, possible) {
			if _, seen := index[e.to]; !seen {
				visit(e.to)
				low[p] = min(low[p], low[e.to])
			} else if on[e.to] {
				low[p] = min(low[p], index[e.to])
			}
		}
		if low[p] == index[p] {
			var scc []string
			for {
				q := stack[len(stack)-1]
				stack, on[q] = stack[:len(stack)-1], false
				scc = append(scc, q)
				if q == p {
					break
				}
			}
			slices.Sort(scc)
			out = append(out, scc)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(g.out)) {
		if _, seen := index[p]; !seen {
			visit(p)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// cycleIn returns a shortest cycle through the first process of scc
// that keeps within it, as its edges: a breadth-first search back to it,
// definite edges first.
func (g *graph) cycleIn(scc []string, possible bool) []edge {
	in := map[string]bool{}
	for _, p := range scc {
		in[p] = true
	}
	start := scc[0]
	via := map[string]edge{}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		es := g.edges(p, possible)
		slices.SortStableFunc(es, func(a, b edge) int { return cmpBool(a.possible, b.possible) })
		for _, e := range es {
			if !in[e.to] {
				continue
			}
			if e.to == start {
				cycle := []edge{e}
				for q := p; q != start; q = via[q].from {
					cycle = append(cycle, via[q])
				}
				slices.Reverse(cycle)
				return cycle
			}
			if _, seen := via[e.to]; !seen {
				via[e.to] = e
				queue = append(queue, e.to)
			}
		}
	}
	return nil
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// breaker returns the wait whose lock to force-unlock to break cycle: a
// lock's (a semaphore's permits have no holder to force), with the
// cycle's waiter first in its queue if one is (it gets the lock at once),
// a latchkey holder's before a Java one's (it is told), by name.
func breaker(cycle []edge) (edge, bool) {
	locks := slices.DeleteFunc(slices.Clone(cycle), func(e edge) bool { return e.possible })
	if len(locks) == 0 {
		return edge{}, false
	}
	slices.SortStableFunc(locks, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmpBool(a.holder.Client != "latchkey", b.holder.Client != "latchkey"),
			strings.Compare(a.st.Name, b.st.Name))
	})
	return locks[0], true
}
