package latchkey

import (
	"context"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// Preload loads every Lua script of latchkey on every master of client
// (SCRIPT LOAD), so that no first call pays for a miss. It is optional:
// latchkey loads a script the first time a server lacks it (after a
// restart, a failover or SCRIPT FLUSH too).
func Preload(ctx context.Context, client redis.UniversalClient) error {
	flight.MustContext(ctx)
	return scripts.Preload(ctx, client)
}
