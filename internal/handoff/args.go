package handoff

import (
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// ScriptArgs returns the ARGV of a script of a queued primitive (the
// mutex, the fair lock, the semaphores): first the inputs that every one
// of them takes at the same positions (scripts/fragment/inputs.lua): the
// client's clock now, the publish command pub, life, how long a queue
// entry lives unless its waiter attempts again, the Grace, and whether pub
// counts every receiver on client (Counted); then the script's own, own.
func ScriptArgs(client redis.UniversalClient, now time.Time, pub string, life time.Duration, own ...any) []any {
	return append([]any{now.UnixMilli(), pub, scripts.Ms(life), scripts.Ms(Grace), Counted(client, pub)}, own...)
}

// Flag returns a script's flag for b: "1" or "0".
func Flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
