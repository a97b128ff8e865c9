package scripts_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// reply returns a command that completed with v, or with err if not nil.
func reply(v any, err error) *redis.Cmd {
	cmd := redis.NewCmd(context.Background())
	if err != nil {
		cmd.SetErr(err)
	} else {
		cmd.SetVal(v)
	}
	return cmd
}

var errServer = errors.New("ERR boom")

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       any
		err     error
		want    int64
		wantErr error // nil: any error when fails is set
		fails   bool
	}{
		{name: "int", v: int64(42), want: 42},
		{name: "negative", v: int64(-1), want: -1},
		{name: "numeric string", v: "7", want: 7},
		{name: "nil reply", err: redis.Nil, fails: true, wantErr: redis.Nil},
		{name: "server error", err: errServer, fails: true, wantErr: errServer},
		{name: "array", v: []any{int64(1)}, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scripts.Int(reply(tc.v, tc.err))
			if tc.fails {
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("Int = %d, %v; want an error matching %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Int = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestInts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     any
		err   error
		want  []int64
		fails bool
	}{
		{name: "ints", v: []any{int64(1), int64(0), int64(1)}, want: []int64{1, 0, 1}},
		{name: "empty", v: []any{}, want: []int64{}},
		{name: "server error", err: errServer, fails: true},
		{name: "nil reply", err: redis.Nil, fails: true},
		{name: "not an array", v: int64(3), fails: true},
		{name: "element not an int", v: []any{int64(1), "x"}, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scripts.Ints(reply(tc.v, tc.err))
			if tc.fails {
				if err == nil {
					t.Fatalf("Ints = %v, want an error", got)
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Errorf("Ints error %v does not wrap %v", err, tc.err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("Ints = %v, %v; want %v", got, err, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Ints = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestPair(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      any
		err    error
		wantOK bool
		wantV  int64
		fails  bool
	}{
		{name: "acquired", v: []any{int64(1), int64(17)}, wantOK: true, wantV: 17},
		{name: "retry hint", v: []any{int64(0), int64(2500)}, wantV: 2500},
		{name: "no bound", v: []any{int64(0), int64(-1)}, wantV: -1},
		{name: "only 1 is acquired", v: []any{int64(-1), int64(0)}, wantV: 0},
		{name: "one element", v: []any{int64(1)}, fails: true},
		{name: "three elements", v: []any{int64(1), int64(2), int64(3)}, fails: true},
		{name: "not an array", v: int64(1), fails: true},
		{name: "server error", err: errServer, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, v, err := scripts.Pair(reply(tc.v, tc.err))
			if tc.fails {
				if err == nil || ok {
					t.Fatalf("Pair = %v, %d, %v; want false and an error", ok, v, err)
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Errorf("Pair error %v does not wrap %v", err, tc.err)
				}
				return
			}
			if err != nil || ok != tc.wantOK || v != tc.wantV {
				t.Fatalf("Pair = %v, %d, %v; want %v, %d", ok, v, err, tc.wantOK, tc.wantV)
			}
		})
	}
}

func TestMs(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},
		{time.Nanosecond, 1}, // a positive duration never becomes 0
		{time.Millisecond - 1, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{1500 * time.Microsecond, 2},
		{30 * time.Second, 30000},
		{-time.Nanosecond, 0}, // rounding up: toward +inf
		{-time.Millisecond, -1},
		{-1500 * time.Microsecond, -1},
		{-2 * time.Millisecond, -2},
		{time.Duration(math.MaxInt64), math.MaxInt64/int64(time.Millisecond) + 1}, // no overflow
		{time.Duration(math.MinInt64), math.MinInt64 / int64(time.Millisecond)},
	} {
		if got := scripts.Ms(tc.d); got != tc.want {
			t.Errorf("Ms(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func TestMillis(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want time.Duration
	}{
		{0, 0},
		{1, time.Millisecond},
		{2500, 2500 * time.Millisecond},
		{-1, -1},
		{-2, -1}, // PTTL of a missing key
		{math.MinInt64, -1},
	} {
		if got := scripts.Millis(tc.ms); got != tc.want {
			t.Errorf("Millis(%d) = %v, want %v", tc.ms, got, tc.want)
		}
	}
}

// Ms and Millis round-trip whole milliseconds.
func TestMsMillisRoundTrip(t *testing.T) {
	for _, ms := range []int64{0, 1, 999, 30000, 1 << 40} {
		if got := scripts.Ms(scripts.Millis(ms)); got != ms {
			t.Errorf("Ms(Millis(%d)) = %d", ms, got)
		}
	}
}
