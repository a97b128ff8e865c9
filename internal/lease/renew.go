package lease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

type batchKey struct {
	kind  *Kind
	slot  int
	lease time.Duration
	sync  time.Duration
}

// renew renews due holds, the batches concurrently, so that a stalled
// server (a paused cluster master) delays only the holds it serves.
func (s *Scheduler) renew(due []*Hold) {
	// A single server takes a batch of any keys; a cluster (or a Ring)
	// needs one slot per script call.
	_, single := s.client.(*redis.Client)
	groups := make(map[batchKey][]*Hold)
	for _, h := range due {
		k := batchKey{h.Kind, 0, h.Lease, h.Sync}
		if !single {
			k.slot = keys.Slot(h.Keys[0])
		}
		groups[k] = append(groups[k], h)
	}
	var wg sync.WaitGroup
	for k, hs := range groups {
		for len(hs) > 0 {
			n := min(len(hs), MaxBatch)
			batch := hs[:n]
			wg.Go(func() { s.renewBatch(k, batch) })
			hs = hs[n:]
		}
	}
	wg.Wait()
}

func (s *Scheduler) renewBatch(k batchKey, hs []*Hold) {
	ks := make([]string, 0, len(hs)*k.kind.KeysPerItem)
	args := make([]any, 1, 2+len(hs)*k.kind.ArgsPerItem)
	args[0] = k.lease.Milliseconds()
	if k.kind.Clock {
		args = append(args, nil) // the clock, read below
	}
	for _, h := range hs {
		ks = append(ks, h.Keys...)
		args = append(args, h.Args(h.Owner)...)
	}
	sent := time.Now()
	if k.kind.Clock {
		// The lease the script sets ends at this clock, in whole ms, plus
		// the lease: the validity counts from there (Add keeps sent's
		// monotonic reading, which timers go by).
		args[1] = sent.UnixMilli()
		sent = sent.Add(-time.Duration(sent.UnixNano() % int64(time.Millisecond)))
	}
	ctx, cancel := withTimeout(renewTimeout(k.lease) + k.sync)
	res, err := s.call(ctx, k, ks, args)
	cancel()
	if err == nil && len(res) != len(hs) {
		err = fmt.Errorf("lease: renewal returned %d results for %d holds", len(res), len(hs))
	}

	var (
		lost   []lostHold
		failed []*Hold
	)
	now := time.Now()
	s.mu.Lock()
	for i, h := range hs {
		if _, live := s.holds[h]; !live {
			continue // released meanwhile
		}
		switch {
		case err == nil && res[i] == 1:
			h.valid = sent.Add(h.Lease)
			h.next = sent.Add(h.Lease / 3)
			h.failures, h.lastErr, h.recheck = 0, nil, false
			h.expiry.Reset(time.Until(h.deadline()))
		case err == nil:
			// The expiry stays armed (see Hold.Lost).
			delete(s.holds, h)
			h.found = true
			lost = append(lost, lostHold{h, res[i], h.recheck})
		default: // retried until the expiry timer gives up
			h.failures, h.lastErr = h.failures+1, err
			h.next = now.Add(h.retryDelay())
			failed = append(failed, h)
		}
	}
	s.mu.Unlock()
	for _, h := range failed {
		if h.Failed != nil {
			h.Failed(err)
		}
	}
	for _, l := range lost {
		s.unwatch(l.h)
		switch {
		case l.res < 0:
			l.h.Lost(fmt.Errorf("%w: the name holds another type of value now", lostErr))
		case l.recheck:
			l.h.Lost(fmt.Errorf("%w: %w", lostErr, ErrForgotten))
		default:
			l.h.Lost(fmt.Errorf("%w: found gone on renewal", lostErr))
		}
	}
}

// A lostHold is a hold found lost, with the renewal's answer for it, and
// whether Recheck asked for that renewal.
type lostHold struct {
	h       *Hold
	res     int64
	recheck bool
}

// call runs a renewal script through the runtime's send path, which
// returns by ctx's end even against a stalled server, so that a round
// never outlasts the validity of its holds.
func (s *Scheduler) call(ctx context.Context, k batchKey, ks []string, args []any) ([]int64, error) {
	return s.send(ctx, k.kind.Script, ks, args, k.sync)
}
