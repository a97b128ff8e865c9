package rt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// Usable is the check every I/O method of every primitive makes first,
// in its caller's goroutine: it panics if ctx is nil (a programming
// error, reported before anything is sent or any goroutine started), and
// returns nil if every key and channel of a primitive called name
// shares one hash slot wherever clients put keys, and otherwise an error
// matching lockerr.ErrCrossSlot that says why and how to fix the name. It
// is the one rule of which names a primitive serves: on a single server
// every name works, keys derived as Redisson derives them; on a Redis
// Cluster (a *redis.ClusterClient, which is also what
// redis.NewUniversalClient returns for several addresses) the name must be
// non-empty and its braces must hold a non-empty hash tag if it has any,
// since the derived keys (Prefix, Suffix) hash on that tag or on the
// name, and the name itself on the whole of it. Every I/O method of every
// primitive calls it first, so a refused name never reaches Redis. It
// does no I/O.
//
// A *redis.Ring is refused whatever the name, with an error matching
// errors.ErrUnsupported: it spreads keys over independent servers, and a
// primitive's waiters would listen on a server its releases do not
// publish to.
func Usable(ctx context.Context, name string, clients ...redis.UniversalClient) error {
	flight.MustContext(ctx)
	for _, c := range clients {
		if _, ok := c.(*redis.Ring); ok {
			return fmt.Errorf("%w: latchkey does not run on a *redis.Ring, whose servers share no pub/sub: "+
				"use a *redis.Client per server (a RedLock takes several), or a Redis Cluster", errors.ErrUnsupported)
		}
		if _, ok := c.(*redis.ClusterClient); !ok {
			continue
		}
		if why := splits(name); why != "" {
			return fmt.Errorf("%w: name %q %s, so its keys would not share a cluster hash slot; "+
				"give the name a non-empty hash tag, such as {id} in \"order:{id}\"", lockerr.ErrCrossSlot, name, why)
		}
		return nil
	}
	return nil
}

// splits says why name's derived keys would land in several hash slots,
// or returns "" if they all hash alike. A name without braces is wrapped
// in a tag of its own ({name}), on which the name hashes too; a name with a
// '{' is left as it is and its keys hash on its first hash tag, the text
// between its first '{' and the next '}', when that text is not empty.
func splits(name string) string {
	i := strings.IndexByte(name, '{')
	switch {
	case name == "":
		return "is empty"
	case i < 0 && strings.IndexByte(name, '}') >= 0:
		return "has a '}' but no '{'"
	case i < 0:
		return ""
	}
	if j := strings.IndexByte(name[i+1:], '}'); j <= 0 {
		return "has a '{' without a non-empty hash tag after it"
	}
	return ""
}
