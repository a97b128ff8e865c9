package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// testUnlockNamesHolder: unlock names the holder by its host and pid, as
// its process recorded itself, and says when it learns of the unlock: a
// latchkey holder within about a second, which its Done shows; a Java
// holder never. Before, unlock named owner ids alone.
func testUnlockNamesHolder(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "unlockwho")
	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(context.Background())
	eventually(t, "the holder's process record", func() bool {
		st := c.inspect(t, name)
		return len(st.Holders) == 1 && st.Holders[0].Process != nil
	})
	time.Sleep(600 * time.Millisecond) // a hold that lasts half a second listens for its force-unlock
	host, _ := os.Hostname()
	out, errOut, code := c.run(t, "unlock", "-yes", name)
	forced := time.Now()
	if code != 0 || !strings.Contains(out, fmt.Sprintf("was held by %s pid %d", host, os.Getpid())) ||
		!strings.Contains(out, "told within about a second") {
		t.Errorf("unlock: exit %d, %q%s; want the holder's host and pid, and when it learns", code, out, errOut)
	}
	select {
	case <-m.Done():
		t.Logf("the holder was told %v after the CLI's unlock returned", time.Since(forced))
	case <-time.After(3 * time.Second):
		t.Error("the holder was not told within 3s of the unlock")
	}

	java := testName(t, "unlockjava")
	rdb.HSet(ctx, java, "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:3", 1)
	rdb.PExpire(ctx, java, time.Minute)
	defer rdb.Del(context.Background(), java)
	if out, _, _ := c.run(t, "unlock", "-yes", java); !strings.Contains(out, "a Java client (owner 6a1d3c2e") ||
		!strings.Contains(out, "a Java holder is never told") {
		t.Errorf("unlock of a Java holder: %q", out)
	}
}
