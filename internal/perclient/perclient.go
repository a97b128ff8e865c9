// Package perclient is latchkey's runtime for each go-redis client of the
// process: one record per client, made on first use, holding everything
// latchkey keeps for that client, and one Close that lets go of all of it.
//
// What a record holds is declared, as a Part, by the package that uses
// it: the ride-out (internal/settings), the hooks' sink (internal/observe),
// what the script runner learnt of the client's servers (internal/scripts:
// replica counts, request-record lifetime), the shared Hub, which also
// settles the publish mode once, the watchdog (internal/shared), and the
// writer of the process record (internal/process). So
// this package depends on none of them, and each keeps its own types.
package perclient

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A Part is one kind of thing kept per client, of type T: made for a
// client on first use, and let go of when the client's record closes.
type Part[T any] struct {
	id    int
	new   func(redis.UniversalClient) T
	close func(T) error
}

var (
	registry sync.Map // redis.UniversalClient -> *record
	declared struct {
		sync.Mutex
		n int
	}
)

// Declare declares a part, which newPart makes for a client, and close,
// if not nil, lets go of when the client's record closes. Parts close in
// the reverse order of their declaration. Declare parts in package
// variables.
func Declare[T any](newPart func(redis.UniversalClient) T, close func(T) error) *Part[T] {
	declared.Lock()
	defer declared.Unlock()
	p := &Part[T]{id: declared.n, new: newPart, close: close}
	declared.n++
	return p
}

// A record is one client's parts, by id.
type record struct {
	mu     sync.Mutex
	closed bool
	cells  map[int]*cell
}

// A cell holds one part; its own lock lets a part's make use other parts.
// Once made, the part is read without the lock (Peek runs on every call).
type cell struct {
	mu    sync.Mutex
	made  atomic.Bool
	v     any
	close func() error
}

// Get returns c's part, making it on first use.
func (p *Part[T]) Get(c redis.UniversalClient) T {
	for {
		r := recordOf(c)
		cl := r.cell(p.id, true)
		if cl == nil {
			continue // closed meanwhile: a fresh record
		}
		if cl.made.Load() {
			return cl.v.(T)
		}
		cl.mu.Lock()
		if !cl.made.Load() {
			v := p.new(c)
			cl.v = v
			if p.close != nil {
				cl.close = func() error { return p.close(v) }
			}
			cl.made.Store(true)
		}
		v := cl.v.(T)
		cl.mu.Unlock()
		return v
	}
}

// Peek returns c's part if it was made, making nothing.
func (p *Part[T]) Peek(c redis.UniversalClient) (v T, ok bool) {
	if c == nil {
		return v, false
	}
	r, _ := registry.Load(c)
	if r == nil {
		return v, false
	}
	cl := r.(*record).cell(p.id, false)
	if cl == nil {
		return v, false
	}
	if !cl.made.Load() {
		return v, false
	}
	return cl.v.(T), true
}

func recordOf(c redis.UniversalClient) *record {
	if r, ok := registry.Load(c); ok {
		return r.(*record)
	}
	r, _ := registry.LoadOrStore(c, &record{cells: make(map[int]*cell)})
	return r.(*record)
}

// cell returns the cell of part id, made if add is set; nil if the record
// is closed, or the cell absent and add not set.
func (r *record) cell(id int, add bool) *cell {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	cl := r.cells[id]
	if cl == nil && add {
		cl = &cell{}
		r.cells[id] = cl
	}
	return cl
}

// Close lets go of everything kept for c, in the reverse order of the
// parts' declaration, and returns their errors joined. A later Get starts
// afresh.
func Close(c redis.UniversalClient) error {
	v, ok := registry.LoadAndDelete(c)
	if !ok {
		return nil
	}
	r := v.(*record)
	r.mu.Lock()
	r.closed = true
	cells := r.cells
	r.mu.Unlock()
	declared.Lock()
	n := declared.n
	declared.Unlock()
	var errs []error
	for id := n - 1; id >= 0; id-- {
		cl := cells[id]
		if cl == nil {
			continue
		}
		cl.mu.Lock() // a part being made is finished first
		closeFn := cl.close
		cl.mu.Unlock()
		if closeFn != nil {
			errs = append(errs, closeFn())
		}
	}
	return errors.Join(errs...)
}
