package latchkey

import (
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// SetProcessRecord turns off (on = false), or back on, the record this
// process keeps of itself through client, which tells an operator which
// process holds or waits behind a latchkey owner id (see the package
// documentation, Process record). Turn it off before the client's first
// call to write nothing; turned off later, it is no longer rewritten and
// lapses with its TTL. The setting is kept per client, like the hooks,
// until Close.
func SetProcessRecord(client redis.UniversalClient, on bool) {
	rt.SetProcessRecord(client, on)
}
