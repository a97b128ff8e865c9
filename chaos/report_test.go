package chaos

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counters are the figures of the summary line.
type counters struct {
	acquisitions atomic.Int64 // successful acquisitions, of any primitive
	violations   atomic.Int64 // broken safety or liveness properties
	losses       atomic.Int64 // holds whose loss the library signalled
	faults       atomic.Int64 // faults injected
	wiped        atomic.Int64 // holders whose server forgot them, told
	toldMax      atomic.Int64 // the longest of those took to be told, ns
}

// totals aggregates the counters of every test of the run.
var totals counters

func (c *counters) summary() string {
	line := fmt.Sprintf("chaos: %d acquisitions, %d violations, %d losses signalled, %d faults injected",
		c.acquisitions.Load(), c.violations.Load(), c.losses.Load(), c.faults.Load())
	if n := c.wiped.Load(); n > 0 {
		line += fmt.Sprintf(", %d holders of a wiped server told within %v", n, time.Duration(c.toldMax.Load()).Round(time.Millisecond))
	}
	return line
}

// maxShown bounds the violations a report quotes; the rest are counted.
const maxShown = 20

// A Report collects the counters and the violations of one test. Its
// methods are safe for concurrent use, from any goroutine: violations are
// reported on the test when it ends, never from a worker goroutine.
type Report struct {
	counters
	mu    sync.Mutex
	shown []string
}

// newReport returns the report of t, which logs its counters and fails t
// with the violations when t ends.
func newReport(t testing.TB) *Report {
	r := &Report{}
	t.Cleanup(func() {
		t.Logf("%s: %d acquisitions, %d violations, %d losses signalled, %d faults injected",
			t.Name(), r.acquisitions.Load(), r.violations.Load(), r.losses.Load(), r.faults.Load())
		r.mu.Lock()
		defer r.mu.Unlock()
		if n := r.violations.Load(); n > 0 {
			t.Errorf("%d violations:\n\t%s", n, strings.Join(r.shown, "\n\t"))
		}
	})
	return r
}

// Violation records a broken property.
func (r *Report) Violation(format string, args ...any) {
	r.violations.Add(1)
	totals.violations.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.shown) < maxShown {
		r.shown = append(r.shown, fmt.Sprintf(format, args...))
	} else if len(r.shown) == maxShown {
		r.shown = append(r.shown, "(more not shown)")
	}
}

// Acquired counts n successful acquisitions.
func (r *Report) Acquired(n int64) {
	r.acquisitions.Add(n)
	totals.acquisitions.Add(n)
}

// Lost counts a loss that the library signalled.
func (r *Report) Lost() {
	r.losses.Add(1)
	totals.losses.Add(1)
}

// Told records that a holder whose server forgot its hold (a restart
// without persistence) was told of the loss d after the crash.
func (r *Report) Told(d time.Duration) {
	for _, c := range []*counters{&r.counters, &totals} {
		c.wiped.Add(1)
		for old := c.toldMax.Load(); int64(d) > old && !c.toldMax.CompareAndSwap(old, int64(d)); old = c.toldMax.Load() {
		}
	}
}

// Fault counts an injected fault.
func (r *Report) Fault() {
	r.faults.Add(1)
	totals.faults.Add(1)
}
