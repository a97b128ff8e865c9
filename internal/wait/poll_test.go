package wait

import (
	"testing"
	"time"
)

// A waiter's looks follow its place: the head backs off from pollMin to
// pollHead; r places behind, from (r+1) pollMin to pollBehind; a new place
// starts afresh; every sleep stays within a quarter of its step, inside the
// grant's grace.
func TestPoller(t *testing.T) {
	within := func(got, step time.Duration) bool { return got >= step*3/4 && got <= step*5/4 }
	ms := time.Millisecond
	var p poller
	for i, step := range []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 200 * ms, 200 * ms} {
		if got := p.next(0); !within(got, step) {
			t.Errorf("head look %d: %v, want %v give or take a quarter", i, got, step)
		}
	}
	for i, step := range []time.Duration{30 * ms, 60 * ms, 120 * ms, 240 * ms, 480 * ms, 500 * ms} {
		if got := p.next(2); !within(got, step) {
			t.Errorf("look %d two places behind: %v, want %v give or take a quarter", i, got, step)
		}
	}
	if got := p.next(1); !within(got, 20*ms) {
		t.Errorf("a new place: %v, want 20ms: it starts afresh", got)
	}
	if got := p.next(-1); !within(got, pollMin) {
		t.Errorf("no queue: %v, want %v, as the head", got, pollMin)
	}
	if pollBehind*5/4 >= time.Second {
		t.Errorf("a waiter behind the head may sleep %v, past a grant's 1s grace", pollBehind*5/4)
	}
}
