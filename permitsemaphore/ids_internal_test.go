package permitsemaphore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
)

// The ids that the Go side derives from a first id are those the script
// stores, also where their last 6 bytes wrap past 2^48.
func TestPermitIDs_asTheScriptMakesThem(t *testing.T) {
	c := locktest.Client(t, redistest.SharedServer(t))
	ctx := context.Background()
	s := New(c, locktest.Name(t, "permitsemaphore-test"))
	if err := s.SetPermits(ctx, 8); err != nil {
		t.Fatal(err)
	}
	first := strings.Repeat("\x5a", 10) + "\xff\xff\xff\xff\xff\xfe"
	req := scripts.PesAcquire{Sem: s.c.Keys, LeaseEnd: scripts.PermanentLease, Try: true, First: first, N: 4, Record: s.c.Record()}
	rep := s.c.Sender().Send(ctx, req.Request())
	if vs, err := scripts.Ints(rep.Cmd); err != nil || vs[0] != 1 {
		t.Fatalf("acquire = %v, %v", vs, err)
	}
	got, err := c.ZRange(ctx, s.c.Keys.Leases, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := permitIDs(first, 4)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the script stored %q, the Go side derives %q", got, want)
	}
	if !slices.Contains(want, first) {
		t.Errorf("the first id %q is not among %q", first, want)
	}
}
