package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// watch is the watchdog of one hold, taken at from: every third of the
// lease it renews the hold on every node at once. A renewal confirmed by a
// quorum moves the validity on; a renewal that finds too few nodes still
// holding it for a quorum to be possible ends the hold at once; any other
// failure is retried soon, until the validity runs out and the hold's
// expiry timer ends it.
//
// A hold of one Mutex is renewed by its own goroutine, unlike the
// per-client batching of package lease: its renewals must reach every node
// together and be counted as one.
func (m *Mutex) watch(h *held, from time.Time) {
	every := m.cfg.Watchdog / 3
	retry := min(m.cfg.Watchdog/10, time.Second)
	renew := m.renewal(m.cfg.Watchdog, h.owner)

	// A renewal in flight when the hold ends is cut short, so that Unlock
	// and the tests' leak check do not wait for a slow node.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	timer := time.NewTimer(time.Until(from.Add(every)))
	defer timer.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-timer.C:
		}
		sent := time.Now()
		rs := m.fanout(ctx, renew, nil)
		if ctx.Err() != nil {
			return // the hold ended during the renewal
		}
		renewed, failed := count(rs, 1)
		gone := len(rs) - renewed - failed
		switch {
		case renewed >= m.quorum:
			if !h.extend(sent) {
				return
			}
			timer.Reset(time.Until(sent.Add(every)))
		case len(rs)-gone < m.quorum:
			h.lose(fmt.Errorf("%w: %w", lockerr.ErrLost, m.quorumError("renew", renewed, rs)))
			return
		default:
			timer.Reset(retry)
		}
	}
}

var renewScript = scripts.Get(lease.HashLock.Script)

// renewal sets the TTL of owner id's hold on one node to d: 1 if renewed,
// 0 if the node does not have it (-1: the name holds another type).
func (m *Mutex) renewal(d time.Duration, id string) nodeCall {
	keys, args := []string{m.name}, []any{scripts.Ms(d), id}
	return func(ctx context.Context, c redis.UniversalClient) (int64, error) {
		rep := m.sender(c).Send(ctx, scripts.Renewal(renewScript, keys, args))
		res, err := scripts.Ints(rep.Cmd)
		if err == nil {
			err = rep.SyncErr() // not renewed where a failover could lose it
		}
		if err != nil {
			return 0, err
		}
		if len(res) != 1 {
			return 0, fmt.Errorf("redlock: renewal returned %d results for 1 hold", len(res))
		}
		return res[0], nil
	}
}
