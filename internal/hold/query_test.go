package hold

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

func TestQueries(t *testing.T) {
	mr, c := redistest.Miniredis(t)
	ctx := context.Background()

	if ok, err := IsLocked(ctx, c, "lock"); ok || err != nil {
		t.Errorf("IsLocked of an absent key = %v, %v", ok, err)
	}
	if n, err := Count(ctx, c, "lock", "o"); n != 0 || err != nil {
		t.Errorf("Count of an absent key = %d, %v; want 0, nil", n, err)
	}
	if d, err := TTL(ctx, c, "lock"); d != 0 || err != nil {
		t.Errorf("TTL of an absent key = %v, %v; want 0, nil", d, err)
	}

	mr.HSet("lock", "o", "3")
	if ok, err := IsLocked(ctx, c, "lock"); !ok || err != nil {
		t.Errorf("IsLocked = %v, %v; want true", ok, err)
	}
	if n, err := Count(ctx, c, "lock", "o"); n != 3 || err != nil {
		t.Errorf("Count = %d, %v; want 3", n, err)
	}
	if n, err := Count(ctx, c, "lock", "other"); n != 0 || err != nil {
		t.Errorf("Count of another owner = %d, %v; want 0", n, err)
	}
	if d, err := TTL(ctx, c, "lock"); d != -1 || err != nil {
		t.Errorf("TTL of a key without one = %v, %v; want -1", d, err)
	}
	mr.SetTTL("lock", 10*time.Second)
	if d, err := TTL(ctx, c, "lock"); d != 10*time.Second || err != nil {
		t.Errorf("TTL = %v, %v; want 10s", d, err)
	}

	mr.Set("str", "x")
	if _, err := Count(ctx, c, "str", "o"); err == nil {
		t.Error("Count of a string key: no error")
	}
}
