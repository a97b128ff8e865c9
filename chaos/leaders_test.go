package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/election"
)

// A leadership is one won Campaign, from its return to the end of its
// context. Times are on the history's clock.
type leadership struct {
	client int
	term   int64
	epoch  int             // server wipes before its Campaign was called
	called int64           // the Campaign call
	start  int64           // its return
	ctx    context.Context // the leadership's context
	// Set under the Leaders' lock as the leadership ends:
	resign int64 // the first Resign call; 0 if none yet
	told   int64 // when its context was seen done; 0 while it is not
	lost   bool  // ... with a cause that matches latchkey.ErrLost
}

// leading reports whether l's leader believed it led at t: it had not
// called Resign yet.
func (l *leadership) leading(t int64) bool { return l.resign == 0 || t < l.resign }

// resigned says when l's leader called Resign, if it did, from end.
func (l *leadership) resigned(end int64) string {
	if l.resign == 0 {
		return "it did not resign"
	}
	return fmt.Sprintf("its Resign was called %v after that end", time.Duration(l.resign-end))
}

// Leaders tracks the leaderships of one election. As each begins, it
// checks that no other leader still believes it leads, unless the server
// forgot that one (a wipe: the server frees it at once, before anyone can
// tell its leader). It is also the fenced store that leaders write to:
// it accepts a write only with a term at least the highest it saw. It is
// safe for concurrent use.
type Leaders struct {
	r    *Report
	h    *History
	name string // the election's, in the history

	mu    sync.Mutex
	all   []*leadership
	wipes []int64 // when the server was killed and restarted empty
	last  int64   // the highest term written
	// Counts, for the log: writes accepted; writes refused from leaders
	// already told, or deposed by a wipe; leaders that overlapped one
	// whose server forgot it.
	accepted, refused, wipedStale, wipedOverlaps int
}

func newLeaders(r *Report, h *History, name string) *Leaders {
	return &Leaders{r: r, h: h, name: name}
}

// epoch returns how many wipes there have been so far.
func (ls *Leaders) epoch() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.wipes)
}

// wiped records that the server was killed at, and lost its data.
func (ls *Leaders) wiped(at int64) {
	ls.mu.Lock()
	ls.wipes = append(ls.wipes, at)
	ls.mu.Unlock()
}

// begin records a leadership whose Campaign just returned, checks it
// against the leaders that still believe they lead, and watches its end.
func (ls *Leaders) begin(l *leadership) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, o := range ls.all {
		if o.told != 0 || o.resign != 0 || o.ctx.Err() != nil {
			continue
		}
		if o.epoch < len(ls.wipes) {
			ls.wipedOverlaps++
			continue
		}
		ls.r.Violation("client %d leads (term %d) while client %d, leader since %v before (term %d), was not told of its loss",
			l.client, l.term, o.client, time.Duration(l.start-o.start), o.term)
	}
	ls.all = append(ls.all, l)
	context.AfterFunc(l.ctx, func() { ls.end(l) })
}

// end records that l's context is done, and why. A loss told before the
// Resign call goes into the history; one told while the Resign is on its
// way does not: that Resign may still succeed, when the leader's local
// deadline passed with its hold still on the server, which the Resign
// then released (a refused Resign tells the model of the loss instead).
func (ls *Leaders) end(l *leadership) {
	now := ls.h.Now()
	lost := errors.Is(context.Cause(l.ctx), latchkey.ErrLost)
	ls.mu.Lock()
	l.told, l.lost = now, lost
	before := l.resign == 0
	ls.mu.Unlock()
	if lost {
		ls.r.Lost()
	}
	if lost && before {
		ls.h.Add(Op{Client: l.client, Name: ls.name, Kind: Lost, Outcome: OK, Call: l.start, Return: now})
	}
}

// current returns the client of the latest leadership whose leader still
// believes it leads, and for how long it has, or -1 if there is none.
func (ls *Leaders) current() (int, time.Duration) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if n := len(ls.all); n > 0 {
		if l := ls.all[n-1]; l.told == 0 && l.resign == 0 {
			return l.client, time.Duration(ls.h.Now() - l.start)
		}
	}
	return -1, 0
}

// resigning records that l's leader is about to call Resign.
func (ls *Leaders) resigning(l *leadership) {
	ls.mu.Lock()
	if l.resign == 0 {
		l.resign = ls.h.Now()
	}
	ls.mu.Unlock()
}

// write is l's leader writing to the store with its term, having seen its
// context live at checked. The store refuses a term below the highest it
// saw: a violation if the writer was not told of its loss (two leaders
// believed they led, and the newer had written), unless a wipe deposed it.
// A write accepted although the writer was told before it checked would
// break the context's promise: also a violation.
func (ls *Leaders) write(l *leadership, checked int64) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	told := l.ctx.Err() != nil
	if l.term < ls.last {
		switch {
		case told:
			ls.refused++
		case l.epoch < len(ls.wipes):
			ls.wipedStale++
		default:
			ls.r.Violation("client %d wrote with term %d after term %d was written, and was not told of its loss",
				l.client, l.term, ls.last)
		}
		return false
	}
	if l.told != 0 && l.told < checked {
		ls.r.Violation("the store accepted term %d from client %d, told of its loss %v before it checked its context",
			l.term, l.client, time.Duration(checked-l.told))
	}
	ls.last = l.term
	ls.accepted++
	return true
}

// A sample is what the server said of the election at some instant before
// at: the term of its leader (0 for none, or one not yet recorded).
type sample struct {
	at   int64
	term int64
}

// sampleLeaders asks the server for the leader of el every interval until
// ctx ends, and returns what it said: from outside the election, through a
// connection that faults spare, so that each leadership's end on the
// server is known to within a sample.
func sampleLeaders(ctx context.Context, h *History, el *election.Election, every time.Duration) []sample {
	var out []sample
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		l, err := el.Leader(qctx)
		cancel()
		if err == nil {
			out = append(out, sample{h.Now(), l.Term})
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
	return out
}

// gone returns, per term, the time of the first sample after those that
// showed it that did not: its leadership had ended on the server by then.
func gone(samples []sample) map[int64]int64 {
	out := map[int64]int64{}
	var cur int64
	for _, s := range samples {
		if s.term != cur {
			if cur != 0 {
				out[cur] = s.at
			}
			cur = s.term
		}
	}
	return out
}

// checkSignals checks that every leadership that ended other than by its
// Resign (on the server, or by a loss its leader was told of, before the
// Resign call) was told, with a cause that matches ErrLost, within a
// renewal period (lease/3) of its end on the server: of the first sample
// that no longer showed it, which that end precedes. A leader whose
// Resign is on its way may be told of a loss when its local deadline
// passes before the answer: that leadership ended by its Resign. One that
// a crash may have wiped (the crash came between its Campaign call and
// that sample) may instead be told within T17's bound, lease and a second
// after the crash: its leader can learn of a wipe only once it reaches
// the restarted server. A leadership too short for any sample to see it
// is left out. checkSignals returns what it checked.
func (ls *Leaders) checkSignals(samples []sample, lease time.Duration) signalStats {
	ends := gone(samples)
	var st signalStats
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.all {
		end, seen := ends[l.term]
		if !seen || l.term == 0 || !l.leading(end) && !(l.lost && l.leading(l.told)) {
			continue // its leader had called Resign before it ended, or was told
		}
		st.checked++
		if l.told == 0 || !l.lost {
			ls.r.Violation("term %d (client %d) ended on the server %v after it began, before its Resign, and its leader was not told of a loss (told: %v)",
				l.term, l.client, time.Duration(end-l.start), l.told != 0)
			continue
		}
		late := time.Duration(l.told - end)
		if crash, ok := ls.wipedAt(l, end); ok {
			// The crash may have freed it, or it may have begun after the
			// restart and ended later: either bound will do.
			st.wiped++
			d := time.Duration(l.told - crash)
			if l.start < crash {
				ls.r.Told(max(d, 0)) // surely held when the server crashed
			}
			if d > lease+time.Second && late > lease/3 {
				ls.r.Violation("term %d (client %d) was told %v after a crash that may have wiped it, bound %v, and %v after the sample that saw its end, bound lease/3 = %v; its Campaign was called %v and returned %v after the crash; %s",
					l.term, l.client, d, lease+time.Second, late, lease/3, time.Duration(l.called-crash), time.Duration(l.start-crash), l.resigned(end))
			}
			continue
		}
		if st.timed == 0 || late < st.earliest {
			st.earliest = late
		}
		if st.timed == 0 || late > st.latest {
			st.latest = late
		}
		st.timed++
		if late > lease/3 {
			ls.r.Violation("term %d (client %d) was told of its loss %v after its end on the server, bound lease/3 = %v; %s",
				l.term, l.client, late, lease/3, l.resigned(end))
		}
	}
	return st
}

// signalStats is what checkSignals checked: leaderships that ended other
// than by Resign, of which timed were held to lease/3 (told from earliest
// to latest after the sample that saw their end; negative: before it) and
// wiped may have been ended by a crash.
type signalStats struct {
	checked, timed, wiped int
	earliest, latest      time.Duration
}

func (st signalStats) String() string {
	return fmt.Sprintf("%d leaderships ended other than by Resign: %d may have been wiped; %d told from %v to %v after the sample that saw their end (negative: before)",
		st.checked, st.wiped, st.timed, st.earliest.Round(time.Millisecond), st.latest.Round(time.Millisecond))
}

// wipedAt returns the crash that ended l, if one came between its
// Campaign call and end, the first sample that no longer showed it.
func (ls *Leaders) wipedAt(l *leadership, end int64) (int64, bool) {
	for _, at := range ls.wipes {
		if at > l.called && at <= end {
			return at, true
		}
	}
	return 0, false
}
