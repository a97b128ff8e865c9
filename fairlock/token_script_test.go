package fairlock

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/scripts"
)

// The fencing token in the acquire script's replies: a first take draws
// one; a grant draws the next, which its grantee's attempt is answered
// with when the letter was not read, as is a resend of it; a re-entry
// draws the next; a counter lost while held starts again from the clock.
func TestScriptTokens(t *testing.T) {
	m, c := scriptMutex(t)
	ctx, now := context.Background(), time.Now()
	run := func(op, id, reentry string) []int64 {
		t.Helper()
		return ints(t, runAt(t, m, op, id, reentry, now))
	}
	first := run(opAcquire, "a:1", "0")
	if len(first) != 3 || first[0] != 1 || first[2] < now.Add(-time.Hour).UnixMicro() {
		t.Fatalf("first take = %v, want {1, 1, a token from the clock in µs}", first)
	}
	t1 := first[2]
	if vs := run(opAcquire, "b:1", "0"); vs[0] != 0 {
		t.Fatalf("b's attempt on a held lock = %v", vs)
	}
	if vs := run(opRelease, "a:1", "1"); !slices.Equal(vs, []int64{1}) {
		t.Fatalf("release = %v, want 1", vs)
	}
	if n := c.Get(ctx, "latchkey_lock_token:{job}").Val(); n != itoa(t1+1) {
		t.Fatalf("counter after the grant = %s, want %d", n, t1+1)
	}
	for _, what := range []string{"the grantee's attempt", "its resend"} {
		if vs := run(opAcquire, "b:1", "0"); !slices.Equal(vs, []int64{1, 1, t1 + 1}) {
			t.Errorf("%s = %v, want {1, 1, %d}: the grant's token", what, vs, t1+1)
		}
	}
	if vs := run(opAcquire, "b:1", "1"); !slices.Equal(vs, []int64{1, 2, t1 + 2}) {
		t.Errorf("re-entry = %v, want {1, 2, %d}", vs, t1+2)
	}
	c.Del(ctx, "latchkey_lock_token:{job}")
	if vs := run(opAcquire, "b:1", "0"); len(vs) != 3 || vs[2] <= t1+2 {
		t.Errorf("a resend after the counter was lost = %v, want a token above %d", vs, t1+2)
	}
}

// A forced unlock and a dequeue that gives a grant back grant the lock to
// the next latchkey waiter, each drawing the next token.
func TestScriptGrantTokens(t *testing.T) {
	m, c := scriptMutex(t)
	ctx, now := context.Background(), time.Now()
	run := func(op, id string) []int64 {
		t.Helper()
		return ints(t, runAt(t, m, op, id, scripts.Fresh, now))
	}
	counter := func() int64 { n, _ := c.Get(ctx, "latchkey_lock_token:{job}").Int64(); return n }
	t1 := run(opAcquire, "a:1")[2]
	run(opAcquire, "b:1")
	run(opAcquire, "c:1")
	run(opForce, "")
	if n := counter(); n != t1+1 {
		t.Fatalf("counter after a forced unlock granted b = %d, want %d", n, t1+1)
	}
	if vs := run(opDequeue, "b:1"); !slices.Equal(vs, []int64{1}) {
		t.Fatalf("b's dequeue = %v, want 1: the grant given back", vs)
	}
	if n := counter(); n != t1+2 {
		t.Fatalf("counter after b gave its grant back to c = %d, want %d", n, t1+2)
	}
	if vs := run(opAcquire, "c:1"); !slices.Equal(vs, []int64{1, 1, t1 + 2}) {
		t.Errorf("c's attempt = %v, want {1, 1, %d}", vs, t1+2)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ints returns a script's reply, an integer or an array of them, as a slice.
func ints(t *testing.T, rep rt.Reply) []int64 {
	t.Helper()
	if n, err := scripts.Int(rep.Cmd); err == nil {
		return []int64{n}
	}
	vs, err := scripts.Ints(rep.Cmd)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}
