package main

import (
	"net"
	"sync"
	"sync/atomic"
)

// A cutProxy forwards TCP connections from a loopback port to a server
// until it is cut: from then on it drops every byte either way, and holds
// every connection open, old and new, as a network that blackholes a host
// would. Neither end sees a close or a reset, so each learns of the cut
// only by its own timeouts: the server that the leader's renewals stopped,
// the leader that its requests go unanswered. It is the bench's stand-in
// for chaos/'s fault proxy, kept to what a cut needs.
type cutProxy struct {
	ln     net.Listener
	target string
	cut    atomic.Bool

	mu     sync.Mutex
	conns  []net.Conn // both ends of every connection, closed by Close
	closed bool
	wg     sync.WaitGroup
}

// startCutProxy listens on a free port of 127.0.0.1 and forwards to target.
func startCutProxy(target string) (*cutProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address to dial instead of the target's.
func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

// Cut stops all traffic through the proxy, for good.
func (p *cutProxy) Cut() { p.cut.Store(true) }

// Close closes the listener and every connection, and waits for the
// proxy's goroutines.
func (p *cutProxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track registers c to be closed by Close, and reports false (closing c)
// if Close already ran.
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve forwards c to the target, or, once cut, swallows what c sends
// without ever dialing.
func (p *cutProxy) serve(c net.Conn) {
	if p.cut.Load() {
		p.pipe(c, nil)
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(up) {
		return
	}
	p.wg.Go(func() { p.pipe(up, c) })
	p.pipe(c, up)
}

// pipe copies from src to dst until src ends, dropping what it reads
// once the proxy is cut (always, with a nil dst). Before the cut, src's
// end (a close, a reset) closes dst, as a working network passes it on;
// after it, nothing does, and both stay open until Close.
func (p *cutProxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && dst != nil && !p.cut.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				dst = nil // the other end is gone: drain src until it ends
			}
		}
		if err != nil {
			if dst != nil && !p.cut.Load() {
				_ = dst.Close()
			}
			return
		}
	}
}
