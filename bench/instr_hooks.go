package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// scriptHash returns the SHA-1 of the script an EVALSHA or EVAL runs, or
// "" for another command.
func scriptHash(c redis.Cmder) string {
	args := c.Args()
	if len(args) < 2 {
		return ""
	}
	switch c.Name() {
	case "evalsha", "evalsha_ro":
		s, _ := args[1].(string)
		return s
	case "eval", "eval_ro":
		s, _ := args[1].(string)
		sum := sha1.Sum([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	return ""
}

// scriptReply returns the reply of c if it ran the script sha.
func scriptReply(c redis.Cmder, sha string) (any, error) {
	cmd, ok := c.(*redis.Cmd)
	if !ok || scriptHash(c) != sha {
		return nil, errors.New("another command")
	}
	return cmd.Result()
}

// scriptInts returns the reply of c as integers if it ran the script sha
// and answered an array of them.
func scriptInts(c redis.Cmder, sha string) ([]int64, bool) {
	v, err := scriptReply(c, sha)
	a, ok := v.([]any)
	if err != nil || !ok {
		return nil, false
	}
	out := make([]int64, len(a))
	for i, x := range a {
		switch x := x.(type) {
		case int64:
			out[i] = x
		case string: // a number the script wrote as digits (go-redis's Int64Slice reads both)
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, false
			}
			out[i] = n
		default:
			return nil, false
		}
	}
	return out, true
}

// A sentMix counts the commands clients send, scripts by name (its add
// is a cmdHook's before).
type sentMix struct {
	names map[string]string // script SHA-1 -> name
	mu    sync.Mutex
	n     map[string]int64
}

func newSentMix() *sentMix {
	m := &sentMix{names: map[string]string{
		redissonTry.Hash():       "redisson acquire",
		redissonFencedTry.Hash(): "redisson fenced acquire",
		redissonUnlock.Hash():    "redisson unlock",
	}, n: map[string]int64{}}
	for _, s := range scripts.All() {
		m.names[s.Hash()] = s.Name()
	}
	return m
}

func (m *sentMix) add(c redis.Cmder) {
	name := c.Name()
	if sha := scriptHash(c); sha != "" {
		if name = m.names[sha]; name == "" {
			name = "script " + sha[:7]
		}
	}
	m.mu.Lock()
	m.n[name]++
	m.mu.Unlock()
}

func (m *sentMix) reset() {
	m.mu.Lock()
	clear(m.n)
	m.mu.Unlock()
}

// perOp returns the counts divided by ops.
func (m *sentMix) perOp(ops float64) map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]float64{}
	for k, v := range m.n {
		out[k] = float64(v) / ops
	}
	return out
}

// A cmdHook is a go-redis hook that shows each command a client sends,
// alone or in a pipeline, to before as it goes and to after once it is
// answered.
type cmdHook struct{ before, after func(redis.Cmder) }

func (h cmdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h cmdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.each([]redis.Cmder{cmd}, h.before)
		err := next(ctx, cmd)
		h.each([]redis.Cmder{cmd}, h.after)
		return err
	}
}

func (h cmdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.each(cmds, h.before)
		err := next(ctx, cmds)
		h.each(cmds, h.after)
		return err
	}
}

func (h cmdHook) each(cmds []redis.Cmder, f func(redis.Cmder)) {
	if f == nil {
		return
	}
	for _, c := range cmds {
		f(c)
	}
}
