package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress keeps one status line on stderr: rewritten in place on a
// terminal, one line per run otherwise. Disabled, it prints nothing.
type progress struct {
	w       io.Writer
	on, tty bool
	total   int
	ops     *atomic.Int64

	mu      sync.Mutex
	n       int
	label   string
	began   time.Time
	per     time.Duration
	base    int64
	viol    int
	ticker  *time.Ticker
	stopped chan struct{}
}

func newProgress(w io.Writer, on bool, total int, ops *atomic.Int64) *progress {
	p := &progress{w: w, on: on, total: total, ops: ops, stopped: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	if p.on && p.tty {
		p.ticker = time.NewTicker(200 * time.Millisecond)
		go func() {
			for {
				select {
				case <-p.ticker.C:
					p.draw()
				case <-p.stopped:
					return
				}
			}
		}()
	}
	return p
}

func (p *progress) start(scenario, impl string, round, rounds int, per time.Duration) {
	p.mu.Lock()
	p.n++
	p.label = fmt.Sprintf("[%d/%d] %s · %s · round %d/%d", p.n, p.total, scenario, impl, round, rounds)
	p.began, p.per, p.base = time.Now(), per, p.ops.Load()
	if p.on && !p.tty {
		fmt.Fprintf(p.w, "bench: %s (%v)\n", p.label, per)
	}
	p.mu.Unlock()
	p.draw()
}

func (p *progress) done(r *Run) {
	if r != nil {
		p.mu.Lock()
		p.viol += r.Violations
		p.mu.Unlock()
	}
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || !p.tty {
		return
	}
	el := min(time.Since(p.began), p.per).Round(100 * time.Millisecond)
	line := fmt.Sprintf("%s  %v/%v  %d acquisitions", p.label, el, p.per, p.ops.Load()-p.base)
	if p.viol > 0 {
		line += fmt.Sprintf("  !! %d VIOLATIONS", p.viol)
	}
	fmt.Fprintf(p.w, "\r%-100s", line)
}

func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ticker == nil {
		return
	}
	p.on = false
	p.ticker.Stop()
	close(p.stopped)
	p.ticker = nil
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 100))
}
