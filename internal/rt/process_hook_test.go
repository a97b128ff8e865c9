package rt_test

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A recorder is a go-redis hook that notes a client's commands: the
// writes of the record under key apart from all others, which it can hold
// back until its gate opens.
type recorder struct {
	key     string
	gate    chan struct{} // if not nil, a record write waits for it to close
	entered chan struct{} // closed when the first record write arrives

	mu     sync.Mutex
	others []string // every other command's name, in order, handshakes aside
	writes []error  // each finished record write's error
	once   sync.Once
}

func newRecorder(key string, gated bool) *recorder {
	r := &recorder{key: key, entered: make(chan struct{})}
	if gated {
		r.gate = make(chan struct{})
	}
	return r
}

func (r *recorder) record(cmd redis.Cmder) bool {
	a := cmd.Args()
	return strings.EqualFold(cmd.Name(), "set") && len(a) > 1 && a[1] == r.key
}

// note notes cmd, unless it is part of a new connection's handshake,
// which go-redis sends when its pool dials, whoever asked.
func (r *recorder) note(cmd redis.Cmder) {
	switch strings.ToLower(cmd.Name()) {
	case "hello", "auth", "client":
		return
	}
	r.mu.Lock()
	r.others = append(r.others, cmd.Name())
	r.mu.Unlock()
}

// Others returns the other commands the client has sent, in order.
func (r *recorder) Others() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.others...)
}

// Writes returns the errors of the record writes done so far.
func (r *recorder) Writes() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.writes...)
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !r.record(cmd) {
			r.note(cmd)
			return next(ctx, cmd)
		}
		r.once.Do(func() { close(r.entered) })
		if r.gate != nil {
			<-r.gate
		}
		err := next(ctx, cmd)
		r.mu.Lock()
		r.writes = append(r.writes, err)
		r.mu.Unlock()
		return err
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			r.note(cmd)
		}
		return next(ctx, cmds)
	}
}
