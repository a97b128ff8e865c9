package rt

import (
	"context"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Call is a request together with the script it is for. A primitive
// whose operations are each a script of their own builds its Calls in one
// place, choosing the script by operation there, so that a request is
// run, resent and resolved by the script it was built for.
type Call struct {
	Script *scripts.Script
	Write
}

// Exec runs the call's script as the request (see Script.Exec).
func (c Call) Exec(ctx context.Context, client redis.UniversalClient) Reply {
	return Exec(ctx, client, c.Script, c.Write)
}

// Resend runs the call through transient faults (see Script.Resend).
func (c Call) Resend(ctx context.Context, client redis.UniversalClient) (Reply, error) {
	return Resend(ctx, client, c.Script, c.Write)
}

// Resolve learns what became of the call, given up on without an answer
// (see Script.Resolve).
func (c Call) Resolve(ctx context.Context, client redis.UniversalClient) (Reply, bool, error) {
	return Resolve(ctx, client, c.Script, c.Write)
}
