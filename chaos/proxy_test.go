package chaos

import (
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// The suite's own fault proxy. It replaced toxiproxy, whose RemoveToxic
// waits on every link while holding the lock that a closing link (and a
// new connection) needs, and so deadlocked now and then: the test then hung
// until go test's timeout. Here nothing waits while holding a lock: a fault
// is a value that each connection's pumps read as data passes, and healing
// one only closes connections.

// Net holds the proxies of one test: one per client, so that a fault cuts
// off one client and not the others.
type Net struct{}

// newNet returns an empty Net.
func newNet(testing.TB) *Net { return &Net{} }

// Proxy starts a proxy on a free port of 127.0.0.1 that forwards to
// upstream. It is stopped by t.Cleanup.
func (n *Net) Proxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("chaos: start proxy to %s: %v", upstream, err)
	}
	p := &Proxy{ln: ln, upstream: upstream, conns: make(map[*pipe]struct{})}
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

// A Proxy is one client's link to its server, into which faults are put.
// Its methods are safe for concurrent use.
type Proxy struct {
	ln net.Listener

	mu       sync.Mutex
	upstream string
	conns    map[*pipe]struct{}
	faults   []*fault
	stopped  bool
}

// Directions of data through a proxy, as toxiproxy named them.
const (
	upstream   = "upstream"   // requests, to the server
	downstream = "downstream" // replies, to the client
)

// A fault is one fault in a proxy, on one stream, until healed.
type fault struct {
	kind   faultKind
	stream string
	delay  time.Duration // latency: each chunk's, plus up to ±jitter
	jitter time.Duration
	lose   int64 // loseReplies: chunks left to drop, across connections
}

type faultKind int

const (
	latency   faultKind = iota // chunks are delayed
	blackhole                  // chunks are dropped; healing closes the connections
	reset                      // the next chunk resets its connection instead
	loseReply                  // the next lose chunks each close their connection
)

// Addr returns the address that clients dial instead of the server's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// add puts f in and returns the function that heals it.
func (p *Proxy) add(f *fault) (heal func()) {
	p.mu.Lock()
	p.faults = append(p.faults, f)
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.remove(f) }) }
}

// remove heals f; healing a blackhole closes every connection, as
// toxiproxy's did: what it swallowed is gone.
func (p *Proxy) remove(f *fault) {
	p.mu.Lock()
	i := slices.Index(p.faults, f)
	if i >= 0 {
		p.faults = append(p.faults[:i:i], p.faults[i+1:]...)
	}
	p.mu.Unlock()
	if i >= 0 && f.kind == blackhole {
		p.closeAll(func() {})
	}
}

// Latency delays every reply by d, plus or minus up to jitter.
func (p *Proxy) Latency(d, jitter time.Duration) (heal func()) {
	return p.add(&fault{kind: latency, stream: downstream, delay: d, jitter: jitter})
}

// Blackhole drops everything sent on stream ("upstream": requests never
// reach the server; "downstream": the server applies them but its replies
// are lost) until healed. Healing closes the connections it held.
func (p *Proxy) Blackhole(stream string) (heal func()) {
	return p.add(&fault{kind: blackhole, stream: stream})
}

// Reset makes the next data on stream reset its connection (TCP RST)
// instead of being forwarded: on "downstream" a request is applied and its
// reply lost. It lasts until healed.
func (p *Proxy) Reset(stream string) (heal func()) {
	return p.add(&fault{kind: reset, stream: stream})
}

// LoseReplies drops the next n replies of the server to the proxy's
// clients, closing the connection of each, until healed: the ambiguous
// reply that every write must survive, since go-redis then sends the
// command again on a new connection.
func (p *Proxy) LoseReplies(n int64) (heal func()) {
	return p.add(&fault{kind: loseReply, stream: downstream, lose: n})
}

// Clear heals every fault.
func (p *Proxy) Clear() {
	p.mu.Lock()
	faults := append([]*fault(nil), p.faults...)
	p.mu.Unlock()
	for _, f := range faults {
		p.remove(f)
	}
}

// Retarget points the proxy at a new upstream, closing its connections, as
// a virtual IP moved to a promoted replica would.
func (p *Proxy) Retarget(upstream string) error {
	p.closeAll(func() { p.upstream = upstream })
	return nil
}

func (p *Proxy) stop() {
	p.ln.Close()
	p.closeAll(func() { p.stopped = true })
}

// closeAll makes change under the proxy's lock, and closes every
// connection it had then.
func (p *Proxy) closeAll(change func()) {
	p.mu.Lock()
	change()
	cs := make([]*pipe, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	clear(p.conns)
	p.mu.Unlock()
	for _, c := range cs {
		c.close(false)
	}
}

// serve accepts clients, and connects each to the upstream of the moment.
func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go p.connect(client)
	}
}

func (p *Proxy) connect(client net.Conn) {
	p.mu.Lock()
	to := p.upstream
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", to, time.Second)
	if err != nil {
		client.Close()
		return
	}
	c := &pipe{client: client.(*net.TCPConn), server: server.(*net.TCPConn)}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		c.close(false)
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	go p.pump(c, upstream, c.client, c.server)
	go p.pump(c, downstream, c.server, c.client)
}

// A pipe is one client connection and its connection to the server.
type pipe struct {
	client, server *net.TCPConn
	once           sync.Once
}

// close closes both connections, with a TCP RST if rst.
func (c *pipe) close(rst bool) {
	c.once.Do(func() {
		if rst {
			c.client.SetLinger(0)
			c.server.SetLinger(0)
		}
		c.client.Close()
		c.server.Close()
	})
}

// A chunk is what one read got, and when.
type chunk struct {
	data []byte
	at   time.Time
	wait time.Duration // latency to apply from at
}

// pump forwards stream from src to dst, chunk by chunk, through the
// proxy's faults of the moment; a writer goroutine applies latency, so that
// a chunk's delay counts from its arrival, as toxiproxy's did.
func (p *Proxy) pump(c *pipe, stream string, src, dst *net.TCPConn) {
	out := make(chan chunk, 64)
	defer close(out)
	go func() {
		for ch := range out {
			if d := time.Until(ch.at.Add(ch.wait)); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(ch.data); err != nil {
				c.close(false)
				for range out { // until the reader sees the close
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			c.close(false)
			p.forget(c)
			return
		}
		ch := chunk{data: append([]byte(nil), buf[:n]...), at: time.Now()}
		switch p.fate(stream, &ch) {
		case drop:
			continue
		case closeConn:
			c.close(false)
			p.forget(c)
			return
		case resetConn:
			c.close(true)
			p.forget(c)
			return
		}
		out <- ch
	}
}

func (p *Proxy) forget(c *pipe) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

type fate int

const (
	forward fate = iota
	drop
	closeConn
	resetConn
)

// fate says what the faults of the moment on stream do to ch, and sets
// its latency.
func (p *Proxy) fate(stream string, ch *chunk) fate {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.stream != stream {
			continue
		}
		switch f.kind {
		case reset:
			return resetConn
		case blackhole:
			return drop
		case loseReply:
			if f.lose > 0 {
				f.lose--
				return closeConn
			}
		case latency:
			d := f.delay
			if f.jitter > 0 {
				d += time.Duration(rand.Int64N(int64(2*f.jitter))) - f.jitter
			}
			ch.wait += d
		}
	}
	return forward
}
