package redistest

import (
	"context"
	"testing"
	"time"
)

func TestStartReplica_waitAndFreeze(t *testing.T) {
	m := StartServer(t)
	r := StartReplica(t, m)
	mc := m.Client(t)
	ctx := context.Background()
	if err := mc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := mc.Do(ctx, "WAIT", 1, 1000).Int()
	if err != nil || n != 1 {
		t.Fatalf("WAIT = %d, %v; want 1", n, err)
	}
	if got := r.Client(t).Get(ctx, "k").Val(); got != "v" {
		t.Fatalf("replica has %q", got)
	}
	r.Freeze()
	mc.Set(ctx, "k", "w", 0)
	start := time.Now()
	n, err = mc.Do(ctx, "WAIT", 1, 300).Int()
	r.Thaw()
	if err != nil || n != 0 {
		t.Fatalf("WAIT with the replica frozen = %d, %v; want 0", n, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("WAIT returned after %v, before its timeout", d)
	}
}
