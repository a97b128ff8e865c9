package rt

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Looks that can wait a moment (a hold's alarm looking whether its hold
// is still there) share round trips: those given within lookDelay of the
// first go in one pipeline, so that ten thousand holds coming of age
// together cost a few round trips, not ten thousand.
const (
	lookDelay    = 50 * time.Millisecond
	maxLookBatch = 1024
	// lookTimeout bounds one batch's pipeline.
	lookTimeout = 2 * time.Second
)

// looks gathers one client's looks into batches.
type looks struct {
	client redis.UniversalClient
	mu     sync.Mutex
	next   *lookBatch // the batch that takes the next look
}

type lookBatch struct {
	cmds []redis.Cmder
	sent sync.Once
	done chan struct{} // closed once cmds have their answers
}

// Look sends cmd, a command that changes nothing, with the other looks
// given within lookDelay, and returns its error once the batch was
// answered, or ctx.Err() if ctx ends first (cmd must then not be read).
func (r *Runtime) Look(ctx context.Context, cmd redis.Cmder) error {
	b := r.looks.add(cmd)
	select {
	case <-b.done:
		return cmd.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *looks) add(cmd redis.Cmder) *lookBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.next
	if b == nil {
		b = &lookBatch{done: make(chan struct{})}
		l.next = b
		time.AfterFunc(lookDelay, func() { l.send(b) })
	}
	b.cmds = append(b.cmds, cmd)
	if len(b.cmds) >= maxLookBatch {
		l.next = nil // full: no look joins it now
		go l.send(b)
	}
	return b
}

// send sends b's looks in one pipeline, once; from then on no look joins
// b.
func (l *looks) send(b *lookBatch) {
	b.sent.Do(func() {
		l.mu.Lock()
		if l.next == b {
			l.next = nil
		}
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		defer cancel()
		_, _ = l.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range b.cmds {
				_ = p.Process(ctx, c)
			}
			return nil
		})
		close(b.done)
	})
}
