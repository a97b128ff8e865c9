package chaos

import (
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

func init() {
	toxics.Register("lose_replies", new(loseReplies))
}

// loseReplies is a toxic that drops the first Count chunks that pass
// through it, on any connection of its proxy, closing the connection each
// was on; the rest pass. On the downstream stream it makes the server's
// next reply get lost after the server applied the command, and go-redis
// send the command again on a new connection: the ambiguous reply that
// every write must survive.
type loseReplies struct {
	Count int64 `json:"count"`
	lost  atomic.Int64
}

func (t *loseReplies) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil || t.lost.Add(1) <= t.Count {
				stub.Close()
				return
			}
			stub.Output <- c
		}
	}
}

// LoseReplies drops the next n replies of the server to the proxy's
// clients, closing the connection of each, until healed.
func (p *Proxy) LoseReplies(n int64) (heal func()) {
	return p.toxic("lose_replies", "downstream", map[string]int64{"count": n})
}
