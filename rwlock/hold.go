package rwlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/notify"
)

// renewRead is the watchdog's renewal of read holds: it resets an owner's
// timeout keys and raises the hash TTL, and never touches other owners'.
var renewRead = &lease.Kind{Script: "rw_renew_read", KeysPerItem: 2, ArgsPerItem: 1}

// keepers returns what keeps read and write holds alive under cfg: a fixed
// lease, or the watchdog, which renews a read hold's own timeout keys.
//
// Both have an alarm on latchkey_rwlock__forced, where latchkey's
// force-unlocks name the owners they forced out (see hold.Alarm).
func (rw *RWMutex) keepers() (readKeep, writeKeep hold.Keeper) {
	alarm := func(s side) *hold.Alarm {
		return &hold.Alarm{
			Client: rw.client, Hub: func() *notify.Hub { return rw.cfg.HubFor(rw.client) },
			Channel: rw.layout.Forced, Key: rw.name,
			Field: func(id string) string { return field(id, s) },
		}
	}
	readKeep, writeKeep = rw.leases()
	return hold.Alarmed(readKeep, alarm(read)), hold.Alarmed(writeKeep, alarm(write))
}

// leases returns what renews read and write holds, or lets them run out.
func (rw *RWMutex) leases() (readKeep, writeKeep hold.Keeper) {
	if rw.cfg.Fixed > 0 {
		return hold.Fixed(rw.cfg.Fixed), hold.Fixed(rw.cfg.Fixed)
	}
	watchdog := func(kind *lease.Kind, keys func(string) []string, s side) *hold.Watchdog {
		return &hold.Watchdog{
			Client: rw.client, Kind: kind, Keys: keys,
			Args:  func(id string) []any { return []any{field(id, s)} },
			Lease: rw.cfg.Watchdog, Sync: rw.cfg.Sync.Timeout(),
			What: rt.Event{Kind: "rwlock", Name: rw.name},
		}
	}
	readKeep = watchdog(renewRead, func(id string) []string { return []string{rw.name, rw.timeoutPrefix(id)} }, read)
	writeKeep = watchdog(lease.HashLock, func(string) []string { return []string{rw.name} }, write)
	return readKeep, writeKeep
}

// acquired records a successful acquisition whose script was sent at
// started, and a write hold's fencing token (0 for a read hold).
func (rw *RWMutex) acquired(id string, s side, plain bool, token int64, started time.Time) *hold.Hold {
	if s == read {
		return rw.holds.Acquired(field(id, s), id, int(s), plain, 0, started, rw.readKeep)
	}
	rw.w.mu.Lock()
	defer rw.w.mu.Unlock()
	h := rw.holds.Acquired(field(id, s), id, int(s), plain, token, started, rw.writeKeep)
	rw.w.latest, rw.w.token = h, token
	return h
}

// lockContext acquires rw on side s as Lock or RLock does and returns a
// copy of ctx that is cancelled when this hold ends: when it is released
// (its owner's last count of that side), or when it is lost, and then
// context.Cause reports an error matching latchkey.ErrLost that says why.
func (rw *RWMutex) lockContext(ctx context.Context, s side) (context.Context, error) {
	h, ok, err := rw.take(ctx, -1, s)
	if !ok {
		return nil, err
	}
	return rw.holds.Context(ctx, h), nil
}

// released records the release script's answer for owner id's hold on
// side s: -1 not held, -2 released but the owner's other read holds had
// expired, 0 the owner's last hold of that side released, n > 0 holds left.
func (rw *RWMutex) released(id string, s side, res int64) {
	f := field(id, s)
	switch {
	case res == -1:
		rw.holds.NotHeld(f, s.String()+" hold found not held on unlock")
	case res == -2:
		rw.holds.NotHeld(f, "the owner's other read holds had expired")
	case res == 0:
		rw.holds.Released(f)
	default:
		rw.holds.Decremented(f)
	}
}
