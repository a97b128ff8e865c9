package semcore

import (
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// An attempt's reply says the waiter's rank and its sleep's bound in the
// order of its family's script: a semaphore's {0, rank, retry, handed}, a
// permit semaphore's {0, retry, rank, handed}.
func TestAnswer_eachFamilysReply(t *testing.T) {
	reply := func(vs ...int64) rt.Reply {
		cmd := redis.NewCmd(t.Context())
		val := make([]any, len(vs))
		for i, v := range vs {
			val[i] = v
		}
		cmd.SetVal(val)
		return rt.Reply{Cmd: cmd}
	}
	for _, tc := range []struct {
		leases   bool
		vs       []int64
		granted  bool
		rank     int64
		retry    time.Duration
		tooMany  bool
		badReply bool
	}{
		{leases: false, vs: []int64{1, 5, 0}, granted: true},
		{leases: false, vs: []int64{0, 3, 250, 0}, rank: 3, retry: 250 * time.Millisecond},
		{leases: false, vs: []int64{0, 0, -1, 0}, rank: 0, retry: -1},
		{leases: true, vs: []int64{1, 0, 0}, granted: true},
		{leases: true, vs: []int64{0, 250, 3, 0}, rank: 3, retry: 250 * time.Millisecond},
		{leases: true, vs: []int64{-1, 5, 0}, tooMany: true},
		{leases: true, vs: []int64{0, 250, 0}, badReply: true},
	} {
		c := &Core{Leases: tc.leases}
		place := wait.NewPlace("key", wait.Channel{})
		place.Rank = -7
		a, err := c.answer(reply(tc.vs...), place)
		switch {
		case tc.badReply:
			if err == nil {
				t.Errorf("leases %v, reply %v: no error", tc.leases, tc.vs)
			}
			continue
		case err != nil:
			t.Errorf("leases %v, reply %v: %v", tc.leases, tc.vs, err)
			continue
		case tc.tooMany:
			if !errors.Is(a.Refused, lockerr.ErrInvalidPermits) {
				t.Errorf("leases %v, reply %v: refused with %v, want ErrInvalidPermits", tc.leases, tc.vs, a.Refused)
			}
			continue
		}
		if a.Granted != tc.granted || a.Refused != nil {
			t.Errorf("leases %v, reply %v: granted %v, refused %v; want granted %v", tc.leases, tc.vs, a.Granted, a.Refused, tc.granted)
		}
		if !tc.granted && (place.Rank != tc.rank || a.Retry != tc.retry) {
			t.Errorf("leases %v, reply %v: rank %d, retry %v; want %d, %v", tc.leases, tc.vs, place.Rank, a.Retry, tc.rank, tc.retry)
		}
	}
}
