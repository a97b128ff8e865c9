package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// ErrNodeTimeout is a node's error when it did not answer within the node
// timeout (see WithNodeTimeout). It is distinct from
// context.DeadlineExceeded, which only ever means that the caller's context
// ended.
var ErrNodeTimeout = errors.New("redlock: no reply within the node timeout")

// A NodeError is one node's failure: Node is the index of its client in
// the slice given to New.
type NodeError struct {
	Node int
	Err  error
}

// Error returns "node <i>: <error>".
func (e *NodeError) Error() string { return fmt.Sprintf("node %d: %v", e.Node, e.Err) }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// A QuorumError reports that an operation could not reach a quorum of
// nodes because too many of them failed. Unwrap returns one *NodeError per
// failed node, so errors.Is and errors.As see each node's error.
type QuorumError struct {
	Op     string // "lock", "unlock" or "renew"
	Name   string // the lock's name
	Nodes  int    // how many nodes the lock spans
	Quorum int    // how many must agree: Nodes/2 + 1
	OK     int    // how many did
	Errs   []*NodeError
}

// Error describes the shortfall and each failed node.
func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redlock: %s %s: %d of %d nodes, %d needed", e.Op, e.Name, e.OK, e.Nodes, e.Quorum)
	for _, ne := range e.Errs {
		b.WriteString("; ")
		b.WriteString(ne.Error())
	}
	return b.String()
}

// Unwrap returns the failed nodes' errors, each a *NodeError.
func (e *QuorumError) Unwrap() []error {
	errs := make([]error, len(e.Errs))
	for i, ne := range e.Errs {
		errs[i] = ne
	}
	return errs
}

// reply is one node's answer to a fanned-out call.
type reply struct {
	v   int64
	err error
}

// nodeCall is one node's part of a fanned-out operation.
type nodeCall func(ctx context.Context, c redis.UniversalClient) (int64, error)

// fanout runs call on every node at once and returns each node's reply. It
// waits at most the node timeout (and not past ctx): a node that has not
// answered by then gets ErrNodeTimeout, or ctx's error. When late is not
// nil, it receives, from the node's goroutine, the replies that arrived
// after fanout returned.
func (m *Mutex) fanout(ctx context.Context, call nodeCall, late func(node int, r reply)) []reply {
	return m.fanoutTo(ctx, nil, call, late)
}

// errNotAsked is the reply of a node that fanoutTo did not ask.
var errNotAsked = errors.New("redlock: node not asked")

// fanoutTo is fanout on the given nodes only (nil: all); the others'
// replies are errNotAsked.
func (m *Mutex) fanoutTo(ctx context.Context, nodes []int, call nodeCall, late func(node int, r reply)) []reply {
	asked := make([]bool, len(m.clients))
	for i := range m.clients {
		asked[i] = nodes == nil
	}
	for _, i := range nodes {
		asked[i] = true
	}
	var (
		mu      sync.Mutex
		out     = make([]reply, len(m.clients))
		got     = make([]bool, len(m.clients))
		pending = 0
		over    bool
		all     = make(chan struct{})
	)
	for i := range m.clients {
		if asked[i] {
			pending++
		} else {
			out[i], got[i] = reply{err: errNotAsked}, true
		}
	}
	if pending == 0 {
		close(all)
	}
	timeout := m.nodeTimeout()
	for i, c := range m.clients {
		if !asked[i] {
			continue
		}
		go func() {
			// Patient: this goroutine waits for the reply even when
			// fanout has returned, so that a late grant is undone.
			cctx, cancel := context.WithTimeout(flight.Patient(ctx), timeout)
			v, err := call(cctx, c)
			if err != nil && cctx.Err() != nil && ctx.Err() == nil {
				err = ErrNodeTimeout // go-redis may report the node's deadline as the caller's
			}
			cancel()
			mu.Lock()
			if over {
				mu.Unlock()
				if late != nil {
					late(i, reply{v, err})
				}
				return
			}
			out[i], got[i] = reply{v, err}, true
			if pending--; pending == 0 {
				close(all)
			}
			mu.Unlock()
		}()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-all:
	case <-timer.C:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	over = true
	for i := range out {
		if got[i] {
			continue
		}
		out[i].err = ErrNodeTimeout
		if ctx.Err() != nil {
			out[i].err = ctx.Err()
		}
	}
	return append([]reply(nil), out...)
}

// count returns how many replies equal v, and how many failed.
func count(rs []reply, v int64) (n, failed int) {
	for _, r := range rs {
		switch {
		case r.err != nil:
			failed++
		case r.v == v:
			n++
		}
	}
	return n, failed
}

// quorumError builds the error of an operation on which ok nodes agreed.
func (m *Mutex) quorumError(op string, ok int, rs []reply) *QuorumError {
	e := &QuorumError{Op: op, Name: m.name, Nodes: len(m.clients), Quorum: m.quorum, OK: ok}
	for i, r := range rs {
		if r.err != nil {
			e.Errs = append(e.Errs, &NodeError{Node: i, Err: r.err})
		}
	}
	return e
}
