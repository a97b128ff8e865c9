package hold

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
)

// Extend sets the lease of the hold under key (the owner field the renewal
// kind takes) to d with kind's renewal of ks, sent by snd, and tells the
// hold's keeping what it knows of the outcome. It
// never acquires: a renewal that finds the hold gone returns an error
// matching lockerr.ErrNotHeld, and ends the hold as lost.
func (t *Table) Extend(ctx context.Context, snd rt.Sender, kind *lease.Kind, ks []string, key string, d time.Duration) error {
	sent := time.Now()
	rep := snd.Send(ctx, scripts.Renewal(scripts.Get(kind.Script), ks, []any{scripts.Ms(d), key}))
	res, err := scripts.Ints(rep.Cmd)
	switch {
	case err == nil && len(res) != 1:
		err = fmt.Errorf("renewal returned %d results for 1 hold", len(res))
	case err == nil:
		err = rep.SyncErr() // applied where a failover may lose it
	}
	h := t.Get(key)
	switch {
	case err != nil:
		if h != nil {
			h.keep.Extend(sent, d, false) // it may have applied
		}
		return err
	case res[0] == 1:
		if h != nil {
			h.keep.Extend(sent, d, true)
		}
		return nil
	}
	if h != nil {
		t.Lose(h, fmt.Errorf("%s: %w: gone when extended", t.what(), lockerr.ErrLost))
	}
	return lockerr.ErrNotHeld
}
