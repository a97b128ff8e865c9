package rt

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A count by WAIT keeps a replica it saw for silentReplica after the
// replica falls silent; a count by INFO is taken as it is.
func TestReplicaCount_set(t *testing.T) {
	t0 := time.Now()
	var rc replicaCount
	steps := []struct {
		n      int
		byWait bool
		after  time.Duration
		want   int
	}{
		{2, true, 0, 2},
		{1, true, time.Second, 2},                 // one fell silent: still counted
		{0, true, silentReplica, 2},               // silentReplica after it was last seen
		{0, true, silentReplica + time.Second, 0}, // then dropped, as a master drops it
		{1, true, silentReplica + 2*time.Second, 1},
		{0, false, silentReplica + 3*time.Second, 0}, // INFO says none: none
	}
	for i, s := range steps {
		rc.set(s.n, s.byWait, t0.Add(s.after))
		if rc.n != s.want {
			t.Errorf("step %d: set(%d, %v) after %v: n = %d, want %d", i, s.n, s.byWait, s.after, rc.n, s.want)
		}
	}
}

// A count by WAIT finds every live replica even right after another
// connection's WAIT, when on Redis 7.0 they all look behind (see
// replicasByWait), and none of a frozen one.
func TestReplicasByWait(t *testing.T) {
	master := redistest.StartServer(t)
	a := redistest.StartReplica(t, master)
	redistest.StartReplica(t, master)
	admin := master.Client(t)
	ctx := context.Background()
	for i := range 3 {
		if _, err := admin.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "k", i, 0)
			p.Do(ctx, "WAIT", 2, 1000)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := replicasByWait(ctx, admin); n != 2 || err != nil {
			t.Fatalf("count %d right after a WAIT = %d, %v; want 2", i, n, err)
		}
	}
	a.Freeze()
	defer a.Thaw()
	if _, err := admin.Set(ctx, "k", "frozen", 0).Result(); err != nil {
		t.Fatal(err)
	}
	if n, err := replicasByWait(ctx, admin); n != 1 || err != nil {
		t.Fatalf("count with a replica frozen = %d, %v; want 1", n, err)
	}
}
