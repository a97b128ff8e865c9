package hold

import (
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// fakeKeeper records what a Table asks of its Keeper.
type fakeKeeper struct {
	mu   sync.Mutex
	kept []*fakeKeeping
}

func (k *fakeKeeper) Keep(id string, started time.Time, lost func(error)) Keeping {
	f := &fakeKeeping{id: id, started: started, lost: lost}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, f)
	return f
}

// keepings returns the Keepings made so far, oldest first.
func (k *fakeKeeper) keepings() []*fakeKeeping {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*fakeKeeping(nil), k.kept...)
}

// only returns k's one Keeping, failing t if it made another number.
func (k *fakeKeeper) only(t *testing.T) *fakeKeeping {
	t.Helper()
	ks := k.keepings()
	if len(ks) != 1 {
		t.Fatalf("Keep called %d times, want 1", len(ks))
	}
	return ks[0]
}

// fakeKeeping records Again and Stop; its lost declares its hold lost.
type fakeKeeping struct {
	id      string
	started time.Time
	lost    func(error)

	mu      sync.Mutex
	agains  []time.Time
	extends []time.Duration
	stops   int
}

func (f *fakeKeeping) Extend(_ time.Time, d time.Duration, _ bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extends = append(f.extends, d)
}

// Until is an hour after the acquisition, plus what Extend added.
func (f *fakeKeeping) Until() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	until := f.started.Add(time.Hour)
	for _, d := range f.extends {
		until = until.Add(d)
	}
	return until
}

func (f *fakeKeeping) Again(started time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agains = append(f.agains, started)
}

func (f *fakeKeeping) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
}

func (f *fakeKeeping) counts() (agains []time.Time, stops int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.agains...), f.stops
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// count returns h's count as its Table sees it.
func count(tb *Table, h *Hold) int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return h.count
}
