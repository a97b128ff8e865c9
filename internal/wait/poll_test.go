package wait

import (
	"testing"
	"time"
)

// The head backs off from pollMin to pollHead; a waiter behind it looks
// every pollBehind; every sleep stays within a quarter of its step, inside
// the grant's grace.
func TestPoller(t *testing.T) {
	within := func(got, step time.Duration) bool { return got >= step*3/4 && got <= step*5/4 }
	var p poller
	for i, step := range []time.Duration{10, 20, 40, 80, 160, 200, 200} {
		step *= time.Millisecond
		if got := p.next(0); !within(got, step) {
			t.Errorf("head look %d: %v, want %v give or take a quarter", i, got, step)
		}
	}
	if got := p.next(3); !within(got, pollBehind) {
		t.Errorf("behind: %v, want %v give or take a quarter", got, pollBehind)
	}
	if got := p.next(0); !within(got, pollMin) {
		t.Errorf("a new head: %v, want %v: it backs off afresh", got, pollMin)
	}
	if pollBehind*5/4 >= time.Second {
		t.Errorf("a waiter behind the head may sleep %v, past a grant's 1s grace", pollBehind*5/4)
	}
}
