package chaos

import (
	"fmt"
	"sync"
	"time"
)

// A hold is one client's belief that it holds a name: from the return of
// its acquisition until it calls the release, or sees its Done channel
// closed, or (for leased permits without a Done channel) its lease runs out.
type hold struct {
	client int
	write  bool            // exclusive: a lock or a write lock
	n      int64           // permits
	token  int64           // fencing token, 0 if none
	done   <-chan struct{} // closed when the library signals the hold's end; nil if never
	until  int64           // history time after which the hold has surely expired; 0 if never
	called int64           // history time of the call of the acquisition
	at     int64           // history time the acquisition returned
	note   string          // what the holder was doing, for violation messages
	// overlapped is set once a grant overlapping this hold was reported,
	// so that one stale hold counts as one violation.
	overlapped bool
}

// closed reports whether the library has signalled the end of the hold,
// or its lease has surely run out by now.
func (h *hold) closed(now int64) bool {
	if h.until != 0 && now >= h.until {
		return true
	}
	if h.done == nil {
		return false
	}
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// Holders tracks the holds that clients believe they have, and checks at
// every acquisition, as it returns, that it does not overlap a hold whose
// owner was not told of its end: two exclusive holds, a read and a write
// hold, or more permits than the limit. It also acts as a fenced resource:
// a holder writes its token into it, and a token lower than one already
// written is rejected; a rejected writer that was not told of its loss is a
// violation. Holders is safe for concurrent use.
type Holders struct {
	r     *Report
	h     *History
	limit int64 // permits of a semaphore; 0 for locks
	mu    sync.Mutex
	holds map[string]map[int]*hold // by name, by client
	seen  map[string]int64         // highest token written, by name
}

func newHolders(r *Report, h *History, limit int64) *Holders {
	return &Holders{r: r, h: h, limit: limit, holds: make(map[string]map[int]*hold), seen: make(map[string]int64)}
}

// Begin records that an acquisition of name by hd.client just returned,
// and reports a violation if it overlaps a live hold of another client.
func (hs *Holders) Begin(name string, hd hold) {
	now := hs.h.Now()
	hd.at = now
	hs.mu.Lock()
	defer hs.mu.Unlock()
	m := hs.holds[name]
	if m == nil {
		m = make(map[int]*hold)
		hs.holds[name] = m
	}
	if hd.closed(now) {
		return // the library told the caller at once that the grant is over
	}
	permits := hd.n
	for c, o := range m {
		if c == hd.client || o.closed(now) {
			continue
		}
		switch {
		case hs.limit > 0:
			permits += o.n
		case (hd.write || o.write) && !o.overlapped:
			o.overlapped = true
			hs.r.Violation("%s: client %d acquired (write=%v, token %d%s) while client %d held it (write=%v, token %d, acquired %v before%s) and had not been told of its loss",
				name, hd.client, hd.write, hd.token, since(hd, now), c, o.write, o.token, time.Duration(now-o.at), o.note)
		}
	}
	if hs.limit > 0 && permits > hs.limit {
		hs.r.Violation("%s: client %d acquired %d permits: %d held by clients not told of any loss, limit %d",
			name, hd.client, hd.n, permits, hs.limit)
	}
	m[hd.client] = &hd
}

// End records that client no longer believes it holds name: it is about
// to release it, or saw its loss.
func (hs *Holders) End(name string, client int) {
	hs.mu.Lock()
	delete(hs.holds[name], client)
	hs.mu.Unlock()
}

// Note records what client is doing while it holds name, for the
// message of a violation that its hold is part of.
func (hs *Holders) Note(name string, client int, note string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hd := hs.holds[name][client]; hd != nil {
		hd.note = ", " + note
	}
}

// Write writes token into the fenced resource name on behalf of client,
// whose hold ends with done. A token lower than the highest written is
// rejected, which is a violation unless done is closed by then. Write
// reports whether the resource accepted the token.
func (hs *Holders) Write(name string, client int, token int64, done <-chan struct{}) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if token >= hs.seen[name] {
		hs.seen[name] = token
		return true
	}
	hd := hold{done: done}
	if !hd.closed(0) {
		hs.r.Violation("%s: client %d wrote with token %d after token %d, and was not told of its loss",
			name, client, token, hs.seen[name])
	}
	return false
}

// since describes how long before now the call of hd was made, if known.
func since(hd hold, now int64) string {
	if hd.called == 0 {
		return ""
	}
	return fmt.Sprintf(", its call made %v before", time.Duration(now-hd.called))
}
