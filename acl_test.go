package latchkey_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// aclPrefix is the start of every conformance case's name (see uniqueName),
// which the documented ACL's app: becomes.
const aclPrefix = "latchkey-suite-"

// documentedACL returns the arguments of the nth ACL SETUSER command (from
// 0) in the package documentation (doc.go), for user and password, with its
// app: names prefix replaced by prefix: the suite runs as exactly the users
// that the documentation recommends.
func documentedACL(t *testing.T, nth int, user, password, prefix string) []any {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	in, seen := false, 0
	for _, line := range strings.Split(string(src), "\n") {
		text, ok := strings.CutPrefix(line, "//\t")
		switch {
		case !in && ok && strings.HasPrefix(text, "ACL SETUSER "):
			in, seen = true, seen+1
		case in && !ok:
			in = false
		}
		if in && seen == nth+1 {
			words = append(words, strings.Fields(text)...)
		}
	}
	if len(words) < 4 {
		t.Fatal("doc.go has no ACL SETUSER example")
	}
	args := []any{"ACL", "SETUSER", user}
	for _, w := range words[3:] { // after ACL SETUSER <name>
		switch {
		case strings.HasPrefix(w, ">"):
			w = ">" + password
		default:
			w = strings.ReplaceAll(w, "app:", prefix)
		}
		args = append(args, w)
	}
	return args
}

// aclBackends run the suite on the shared server as each user documented
// in doc.go (by commands, by categories), and fail the run if Redis logged
// any denial for that user.
// The categories deny INFO, which latchkey asks once per master before it
// counts the replicas with WAIT instead: that refusal is expected.
var aclBackends = []backend{aclBackend(0, "redis-acl"), aclBackend(1, "redis-acl-categories", "info")}

func aclBackend(nth int, name string, expected ...string) backend {
	return backend{name, func(t *testing.T) *env { return aclEnv(t, nth, name, expected) }}
}

func aclEnv(t *testing.T, nth int, user string, expected []string) *env {
	s := redistest.SharedServer(t)
	const password = "acl-test-password"
	admin := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer admin.Close()
	ctx := context.Background()
	// Plus LLEN, which only the fairlock cases send, to watch the queue:
	// latchkey itself never does.
	acl := append(documentedACL(t, nth, user, password, aclPrefix), "+llen")
	if err := admin.Do(ctx, acl...).Err(); err != nil {
		t.Fatalf("the documented ACL: %v", err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkACLLog(t, s.Addr(), user, expected...) })
	return &env{
		Name: uniqueName(t),
		Client: func() redis.UniversalClient {
			return closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr(), Username: user, Password: password}))
		},
		Advance: time.Sleep,
		Real:    true,
	}
}

// checkACLLog fails t if the server logged an ACL denial for user, other
// than of the expected commands.
func checkACLLog(t *testing.T, addr, user string, expected ...string) {
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	entries, err := admin.ACLLog(context.Background(), 100).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Username == user && !slices.Contains(expected, e.Object) {
			t.Errorf("ACL denied %s: %s %q (context %s, %d times)", user, e.Reason, e.Object, e.Context, e.Count)
		}
	}
}

// A user set up by categories may not run INFO: replica sync counts the
// replicas with WAIT and stays on (TestACL_replicaCountedRightAfterAWait),
// and a user that may run neither INFO nor WAIT is refused with an error
// that says what to grant, rather than left unsynced in silence.
func TestACL_replicaSyncWithoutInfo(t *testing.T) {
	master := redistest.StartServer(t)
	redistest.StartReplica(t, master)
	admin := master.Client(t)
	ctx := context.Background()
	const password = "acl-test-password"
	noWait := append(documentedACL(t, 1, "nowait", password, "sync:"), "-wait")
	if err := admin.Do(ctx, noWait...).Err(); err != nil {
		t.Fatal(err)
	}
	as := func(user string) *redis.Client {
		return closeLater(t, redis.NewClient(&redis.Options{Addr: master.Addr(), Username: user, Password: password}))
	}

	err := mutex.New(as("nowait"), "sync:other").Lock(ctx)
	if err == nil || !strings.Contains(err.Error(), "+info or +wait") || !strings.Contains(err.Error(), "WithReplicaSync(0)") {
		t.Fatalf("Lock by a user that may run neither INFO nor WAIT = %v; want an error that names the fix", err)
	}
	if err := mutex.New(as("nowait"), "sync:third", mutex.WithReplicaSync(0)).Lock(ctx); err != nil {
		t.Fatalf("Lock with replica sync off = %v", err)
	}
}

// A user that may not run INFO has a master's replicas counted by WAIT.
// On Redis 7.0 a connection's WAIT counts only the replicas that
// acknowledged the master's offset as of the connection's last command,
// and a replica's answer to the master's GETACK leaves out the GETACK
// itself: right after anyone's WAIT, a live replica looks behind until its
// next once-a-second acknowledgement. The count must still find it, or
// the writes it misses go unsynced in silence.
func TestACL_replicaCountedRightAfterAWait(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	admin := master.Client(t)
	ctx := context.Background()
	const password = "acl-test-password"
	if err := admin.Do(ctx, documentedACL(t, 1, "categories", password, "sync:")...).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		// Someone else's synced write, just before this client's first.
		if _, err := admin.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "sync:other", i, 0)
			p.Do(ctx, "WAIT", 1, 1000)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		c := closeLater(t, redis.NewClient(&redis.Options{Addr: master.Addr(), Username: "categories", Password: password}))
		waits := &locktest.Commands{Only: "wait"}
		c.AddHook(waits)
		m := mutex.New(c, "sync:lock", mutex.WithReplicaSync(time.Second))
		if err := m.Lock(ctx); err != nil {
			t.Fatalf("Lock %d: %v", i, err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatalf("Unlock %d: %v", i, err)
		}
		if waits.N() == 0 {
			t.Fatalf("client %d: Lock and Unlock sent no WAIT: its master's live replica was not counted", i)
		}
	}

	// A replica counted once stays counted while it answers nothing, as
	// long as a master lists a silent replica (repl-timeout, 60s by
	// default): a synced write then fails rather than going unsynced.
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: master.Addr(), Username: "categories", Password: password}))
	m := mutex.New(c, "sync:frozen", mutex.WithReplicaSync(200*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	replica.Freeze()
	defer replica.Thaw()
	for i := range 3 {
		if err := m.Lock(ctx); !errors.Is(err, latchkey.ErrNotReplicated) {
			t.Fatalf("Lock %d with the replica frozen = %v; want ErrNotReplicated", i, err)
		}
	}
}
