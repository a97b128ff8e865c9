package chaos

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Client timeouts: short, so that a fault shows within a lease of a
// second or two. Retries are go-redis's default (3): a command whose reply
// was lost is sent again, which is what users run with.
const (
	dialTimeout = 500 * time.Millisecond
	ioTimeout   = 500 * time.Millisecond
)

// adminName is the client name of the suite's own connections, which
// faults spare.
const adminName = "chaos-admin"

// newClient returns a client of addr with the suite's timeouts. It and its
// latchkey resources are closed by t.Cleanup.
func newClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: dialTimeout, ReadTimeout: ioTimeout, WriteTimeout: ioTimeout})
	closeLater(t, c)
	return c
}

// adminClient returns a client of addr that faults spare, for checks and
// for injecting faults.
func adminClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ClientName: adminName, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closeLater closes c, and the latchkey resources kept for it, when t ends.
func closeLater(t testing.TB, c redis.UniversalClient) {
	t.Cleanup(func() {
		_ = latchkey.Close(c)
		_ = c.Close()
	})
}

// Standalone is one redis-server with a proxy and a client per contending
// client, and an admin client that goes straight to the server.
type Standalone struct {
	Server  *redistest.Server
	Admin   *redis.Client
	Net     *Net
	Proxies []*Proxy
	Clients []*redis.Client
}

// newStandalone starts a server (with extraArgs) and n proxied clients.
func newStandalone(t testing.TB, n int, extraArgs ...string) *Standalone {
	t.Helper()
	s := redistest.StartServer(t, extraArgs...)
	e := &Standalone{Server: s, Admin: adminClient(t, s.Addr()), Net: newNet(t)}
	for range n {
		p := e.Net.Proxy(t, s.Addr())
		e.Proxies = append(e.Proxies, p)
		e.Clients = append(e.Clients, newClient(t, p.Addr()))
	}
	return e
}

// Heal heals every fault of every proxy.
func (e *Standalone) Heal() {
	for _, p := range e.Proxies {
		p.Clear()
	}
}

// name returns a lock name unique to t and i.
func name(t testing.TB, i int) string {
	return fmt.Sprintf("chaos:%s:%d", strings.ReplaceAll(t.Name(), "/", ":"), i)
}

var clientLine = regexp.MustCompile(`\bid=(\d+)\b.*\bname=(\S*).*\bflags=(\S+)`)

// clientIDs returns the ids of the server's connections that are not the
// suite's own: pub/sub connections if pubsub, the others if not.
func clientIDs(ctx context.Context, admin *redis.Client, pubsub bool) []string {
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		return nil
	}
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		m := clientLine.FindStringSubmatch(line)
		if m == nil || m[2] == adminName || strings.Contains(m[3], "S") || strings.Contains(m[3], "M") {
			continue
		}
		if strings.Contains(m[3], "P") == pubsub {
			ids = append(ids, m[1])
		}
	}
	return ids
}
