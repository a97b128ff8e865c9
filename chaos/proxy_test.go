package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Net holds the in-process toxiproxy proxies of one test: one per client,
// so that a fault cuts off one client and not the others.
type Net struct {
	srv *toxiproxy.ApiServer
}

// newNet returns an empty Net whose proxies are stopped by t.Cleanup.
func newNet(t testing.TB) *Net {
	return &Net{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
}

// Proxy starts a proxy on a free port of 127.0.0.1 that forwards to
// upstream. It is stopped by t.Cleanup.
func (n *Net) Proxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	p := &Proxy{p: toxiproxy.NewProxy(n.srv, "redis", "127.0.0.1:0", upstream), toxics: make(map[string]bool)}
	if err := p.p.Start(); err != nil {
		t.Fatalf("chaos: start proxy to %s: %v", upstream, err)
	}
	t.Cleanup(p.p.Stop)
	return p
}

// A Proxy is one client's link to its server, into which faults (toxics)
// are put. Its methods are safe for concurrent use.
type Proxy struct {
	p      *toxiproxy.Proxy
	mu     sync.Mutex
	seq    int
	toxics map[string]bool
}

// Addr returns the address that clients dial instead of the server's.
func (p *Proxy) Addr() string {
	p.p.Lock()
	defer p.p.Unlock()
	return p.p.Listen
}

// toxic adds a toxic of type typ on stream ("upstream": requests,
// "downstream": replies) and returns a function that removes it.
func (p *Proxy) toxic(typ, stream string, attrs map[string]int64) (heal func()) {
	p.mu.Lock()
	p.seq++
	name := fmt.Sprintf("%s_%s_%d", typ, stream, p.seq)
	p.toxics[name] = true
	p.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "toxicity": 1, "attributes": attrs})
	if _, err := p.p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		panic(fmt.Sprintf("chaos: add toxic %s: %v", body, err)) // a bug of the suite
	}
	var once sync.Once
	return func() { once.Do(func() { p.remove(name) }) }
}

func (p *Proxy) remove(name string) {
	p.mu.Lock()
	ok := p.toxics[name]
	delete(p.toxics, name)
	p.mu.Unlock()
	if ok {
		_ = p.p.Toxics.RemoveToxic(context.Background(), name)
	}
}

// Latency delays every reply by d, plus up to jitter.
func (p *Proxy) Latency(d, jitter time.Duration) (heal func()) {
	return p.toxic("latency", "downstream", map[string]int64{"latency": d.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// Blackhole drops everything sent on stream ("upstream": requests never
// reach the server; "downstream": the server applies them but its replies
// are lost) until healed. Healing closes the connections it held.
func (p *Proxy) Blackhole(stream string) (heal func()) {
	return p.toxic("timeout", stream, map[string]int64{"timeout": 0})
}

// Reset makes the next data on stream reset its connection (TCP RST)
// instead of being forwarded: on "downstream" a request is applied and its
// reply lost. It lasts until healed.
func (p *Proxy) Reset(stream string) (heal func()) {
	return p.toxic("reset_peer", stream, map[string]int64{"timeout": 0})
}

// Clear removes every toxic.
func (p *Proxy) Clear() {
	p.mu.Lock()
	names := make([]string, 0, len(p.toxics))
	for name := range p.toxics {
		names = append(names, name)
	}
	p.mu.Unlock()
	for _, name := range names {
		p.remove(name)
	}
}

// Retarget points the proxy at a new upstream, closing its connections, as
// a virtual IP moved to a promoted replica would.
func (p *Proxy) Retarget(upstream string) error {
	p.p.Lock()
	listen := p.p.Listen
	p.p.Unlock()
	return p.p.Update(&toxiproxy.Proxy{Listen: listen, Upstream: upstream, Enabled: true})
}
