package hold

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// An Alarm tells a holder at once that someone else ended its hold with
// latchkey's ForceUnlock or the CLI's unlock, which name the owners they
// forced out on the lock's forced channel (latchkey_lock__forced:{N},
// latchkey_rwlock__forced:{N}). Renewals would find it too, but only a
// third of a lease later, and a fixed lease not before it ran out: for
// that long two processes would act as holders. A hold that lasts
// AlarmAfter has its Hub tap that channel (see notify.Hub.Tap), and looks
// at once whether it still holds, so that one ended before the tap was
// live is found as well; it looks again after a reconnect, which may have
// lost a message. Shorter holds, most of them, cost nothing.
//
// The alarm listens on latchkey's channel alone: Redisson's releases count
// the subscribers of Redisson's channels to tell whether Java waiters
// listen, and a holder there would be taken for one. So a Redisson
// client's forceUnlock, or a plain DEL, which name nobody, is found at the
// hold's next renewal, or when its fixed lease runs out.
type Alarm struct {
	Client redis.UniversalClient
	Hub    func() *notify.Hub
	// Channel is the lock's forced channel.
	Channel string
	// Key and Field name the hash field that a hold of owner keeps.
	Key   string
	Field func(owner string) string

	keeper Keeper // whose holds it watches (see Alarmed)
}

// AlarmAfter is how long a hold lasts before its alarm is set: a holder is
// told within about that much (and two round trips) of a force-unlock.
const AlarmAfter = 500 * time.Millisecond

// Alarmed returns k, each hold of which is watched by a. It keeps k in a,
// which serves one Keeper only.
func Alarmed(k Keeper, a *Alarm) Keeper {
	a.keeper = k
	return (*alarmed)(a)
}

type alarmed Alarm

func (k *alarmed) Keep(id string, started time.Time, lost func(error)) Keeping {
	a := (*Alarm)(k)
	inner := a.keeper.Keep(id, started, lost)
	if rt.Polling(a.Client) {
		return inner // its Hub must not subscribe: renewals find the loss
	}
	w := &alarmWatch{Keeping: inner, a: a, owner: id, field: a.Field(id), lost: lost}
	w.timer = time.AfterFunc(AlarmAfter, w.run)
	return w
}

// An alarmWatch is one hold's alarm, and the hold's Keeping.
type alarmWatch struct {
	Keeping
	a     *Alarm
	owner string // as the forced channel names it
	field string // the hash field the hold keeps
	lost  func(error)
	timer *time.Timer

	mu    sync.Mutex
	ended bool
	stop  chan struct{} // closed when the hold ends; made by run, if it runs
}

func (w *alarmWatch) Stop() {
	w.Keeping.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.ended = true
		w.timer.Stop()
		if w.stop != nil {
			close(w.stop)
		}
	}
}

// stopped reports whether the hold ended.
func (w *alarmWatch) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// ending returns a channel closed when the hold ends. Only a hold that
// lasts AlarmAfter needs one.
func (w *alarmWatch) ending() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop == nil {
		w.stop = make(chan struct{})
		if w.ended {
			close(w.stop)
		}
	}
	return w.stop
}

// tapTimeout bounds the tap's subscription, and lookTimeout one look.
const (
	tapTimeout  = 5 * time.Second
	lookTimeout = 2 * time.Second
)

// run taps the channel and looks, then looks at each message, until the
// hold ends. A tap that fails leaves the hold to its renewals.
func (w *alarmWatch) run() {
	ctx, cancel := context.WithTimeout(context.Background(), tapTimeout)
	sub, err := w.a.Hub().Tap(ctx, w.a.Channel)
	cancel()
	if err != nil {
		return
	}
	defer sub.Close()
	ending := w.ending()
	if !w.stopped() && w.look() {
		for {
			select {
			case <-sub.C():
				if !w.heard(sub) {
					return
				}
			case <-sub.Done():
				return
			case <-ending:
				return
			}
		}
	}
}

// heard handles a signal of the tap, and reports whether the hold is
// still to be watched: a message that names the owner forced out ends it,
// and messages missed make it look.
func (w *alarmWatch) heard(sub *notify.Subscription) bool {
	if w.stopped() {
		return false
	}
	payloads, missed := sub.Heard()
	for _, p := range payloads {
		if slices.Contains(strings.Fields(p), w.owner) {
			w.lost(fmt.Errorf("%w: force-unlocked", lockerr.ErrLost))
			return false
		}
	}
	return !missed || w.look()
}

// look asks the server whether the hold's field is still there, and
// declares the hold lost if not; it reports whether the hold is still to
// be watched. A look that fails leaves the hold to its renewals.
func (w *alarmWatch) look() bool {
	ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
	defer cancel()
	look := redis.NewBoolCmd(ctx, "hexists", w.a.Key, w.field)
	if err := rt.Of(w.a.Client).Look(ctx, look); err != nil || look.Val() {
		return true
	}
	if w.stopped() { // released meanwhile
		return false
	}
	w.lost(fmt.Errorf("%w: force-unlocked or deleted: gone from the lock while held", lockerr.ErrLost))
	return false
}
