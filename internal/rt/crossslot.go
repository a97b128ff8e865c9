package rt

import (
	"fmt"
	"strings"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// crossSlot makes a server's CROSSSLOT answer to cmd match
// lockerr.ErrCrossSlot, keeping the server's error in the chain. A cluster
// client never gets here with a name it cannot serve (keys.Usable refuses
// it before any I/O); another client talking to a cluster node does, and
// its caller then learns why as a cluster client's would.
func crossSlot(cmd *redis.Cmd) *redis.Cmd {
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "CROSSSLOT") {
		cmd.SetErr(fmt.Errorf("%w (give the name a non-empty hash tag, such as {id} in \"order:{id}\"): %w", lockerr.ErrCrossSlot, err))
	}
	return cmd
}
