package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Request records alive at the end of a run: latchkey's (latchkey_once:*,
// each answering a resent request the way its first copy was answered)
// and Redisson's unlock latches (redisson_unlock_latch:*), with the memory
// they hold. They are counted when a run's measured window closes, before
// its clients are closed, on every Redis of the scenario, with SCAN MATCH.
// The bench never flushes between runs, so only the keys of the run's own
// names count: those whose hash tag, {scenario:impl:seq}, carries a
// sequence number drawn after the run's clients were made (Env.Name).
const (
	recordPattern = "latchkey_once:*"
	latchPattern  = "redisson_unlock_latch:*"
	// memoryAll is how many keys of a kind and server have their MEMORY
	// USAGE summed one by one; of more, that many spread over the scan are
	// measured and their mean scaled by the count.
	memoryAll = 1000
	scanCount = 1000
)

// A keyCount is how many keys of a kind were alive and their memory in
// bytes, -1 when the server cannot tell.
type keyCount struct {
	Keys  float64 `json:"keys"`
	Bytes float64 `json:"bytes"`
}

func (k *keyCount) add(o keyCount) {
	k.Keys += o.Keys
	if k.Bytes < 0 || o.Bytes < 0 {
		k.Bytes = -1
	} else {
		k.Bytes += o.Bytes
	}
}

// RecordStats are the request records alive at the end of a run: over
// the rounds of a Result, their mean.
type RecordStats struct {
	Once    keyCount `json:"latchkey_once"`
	Latches keyCount `json:"redisson_unlock_latch"`
	// Sampled is set when some memory was estimated from a sample of
	// memoryAll keys rather than summed over every key.
	Sampled bool `json:"memory_sampled,omitempty"`
}

// keys returns how many records of both kinds were alive, -1 for nil.
func (s *RecordStats) keys() float64 {
	if s == nil {
		return -1
	}
	return s.Once.Keys + s.Latches.Keys
}

// bytes returns the memory of both kinds, -1 for nil or when unknown.
func (s *RecordStats) bytes() float64 {
	if s == nil || s.Once.Bytes < 0 || s.Latches.Bytes < 0 {
		return -1
	}
	return s.Once.Bytes + s.Latches.Bytes
}

// meanRecords returns the mean of the runs' records, nil when no run
// could count them.
func meanRecords(all []*RecordStats) *RecordStats {
	var out RecordStats
	n := 0
	for _, s := range all {
		if s == nil {
			continue
		}
		out.Once.add(s.Once)
		out.Latches.add(s.Latches)
		out.Sampled = out.Sampled || s.Sampled
		n++
	}
	if n == 0 {
		return nil
	}
	for _, k := range []*keyCount{&out.Once, &out.Latches} {
		k.Keys /= float64(n)
		if k.Bytes > 0 {
			k.Bytes /= float64(n)
		}
	}
	return &out
}

// countRecords counts the records of the names drawn after seq0 on every
// Redis of env.
func countRecords(ctx context.Context, env *Env, seq0 int64) (*RecordStats, error) {
	var out RecordStats
	for _, c := range env.Controls {
		for _, kind := range []struct {
			pattern string
			into    *keyCount
		}{{recordPattern, &out.Once}, {latchPattern, &out.Latches}} {
			keys, err := scanRun(ctx, c, kind.pattern, seq0)
			if err != nil {
				return nil, err
			}
			bytes, sampled := memoryOf(ctx, c, keys)
			kind.into.add(keyCount{Keys: float64(len(keys)), Bytes: bytes})
			out.Sampled = out.Sampled || sampled
		}
	}
	return &out, nil
}

// scanRun returns the keys on c matching pattern whose names were drawn
// after seq0, once each (SCAN may return a key twice).
func scanRun(ctx context.Context, c *redis.Client, pattern string, seq0 int64) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	it := c.Scan(ctx, 0, pattern, scanCount).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		if seq, ok := nameSeq(k); ok && seq > seq0 && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, it.Err()
}

// nameSeq returns the sequence number of the bench name in key: the last
// field of its hash tag {scenario:impl:seq}.
func nameSeq(key string) (int64, bool) {
	_, tag, ok := strings.Cut(key, "{")
	if !ok {
		return 0, false
	}
	tag, _, ok = strings.Cut(tag, "}")
	if !ok {
		return 0, false
	}
	i := strings.LastIndexByte(tag, ':')
	if i < 0 {
		return 0, false
	}
	seq, err := strconv.ParseInt(tag[i+1:], 10, 64)
	return seq, err == nil
}

// memoryOf returns the memory the keys hold on c (MEMORY USAGE): summed
// over every key, or estimated from memoryAll of them spread over the list
// when there are more, in which case sampled is set. It returns -1 when
// the server cannot tell. A key gone meanwhile holds nothing.
func memoryOf(ctx context.Context, c *redis.Client, keys []string) (bytes float64, sampled bool) {
	if len(keys) == 0 {
		return 0, false
	}
	sample := keys
	if len(keys) > memoryAll {
		sample, sampled = make([]string, memoryAll), true
		for i := range sample {
			sample[i] = keys[i*len(keys)/memoryAll]
		}
	}
	pipe := c.Pipeline()
	cmds := make([]*redis.IntCmd, len(sample))
	for i, k := range sample {
		cmds[i] = pipe.MemoryUsage(ctx, k)
	}
	_, _ = pipe.Exec(ctx)
	var sum int64
	for _, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return -1, sampled
		default:
			sum += v
		}
	}
	return float64(sum) * float64(len(keys)) / float64(len(sample)), sampled
}
