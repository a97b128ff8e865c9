package scripts

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Int decodes a script's integer reply.
func Int(cmd *redis.Cmd) (int64, error) {
	v, err := cmd.Int64()
	if err != nil {
		return 0, fmt.Errorf("latchkey: script reply: %w", err)
	}
	return v, nil
}

// Ints decodes a script's reply that is an array of integers.
func Ints(cmd *redis.Cmd) ([]int64, error) {
	v, err := cmd.Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("latchkey: script reply: %w", err)
	}
	return v, nil
}

// Pair decodes a reply of exactly two integers, the shape of every acquire
// script: {1, value} when acquired, {0, retry-hint} when not.
func Pair(cmd *redis.Cmd) (ok bool, v int64, err error) {
	vs, err := Ints(cmd)
	if err != nil {
		return false, 0, err
	}
	if len(vs) != 2 {
		return false, 0, fmt.Errorf("latchkey: script reply: want 2 integers, got %d", len(vs))
	}
	return vs[0] == 1, vs[1], nil
}

// Millis turns a millisecond count from a script into a Duration; negative
// counts (no TTL, no bound) become -1.
func Millis(ms int64) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// Ms formats d as whole milliseconds for ARGV, rounding up so that a
// positive duration never becomes 0.
func Ms(d time.Duration) int64 {
	ms := int64(d / time.Millisecond) // truncated toward zero: up for d < 0
	if d%time.Millisecond > 0 {
		ms++
	}
	return ms
}
