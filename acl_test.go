package latchkey_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// aclPrefix is the start of every conformance case's name (see uniqueName),
// which the documented ACL's app: becomes.
const aclPrefix = "latchkey-suite-"

// documentedACL returns the arguments of the ACL SETUSER command in the
// package documentation (doc.go), for user and password, with its app:
// names prefix replaced by prefix: the suite runs as exactly the user that
// the documentation recommends.
func documentedACL(t *testing.T, user, password, prefix string) []any {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		text, ok := strings.CutPrefix(line, "//\t")
		switch {
		case !in && ok && strings.HasPrefix(text, "ACL SETUSER "):
			in = true
		case in && !ok:
			in = false
		}
		if in {
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

// aclBackend runs the suite on the shared server as the user documented in
// doc.go, and fails the run if Redis logged any denial for that user.
var aclBackend = backend{"redis-acl", func(t *testing.T) *env {
	s := redistest.SharedServer(t)
	const user, password = "latchkey-acl", "acl-test-password"
	admin := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer admin.Close()
	ctx := context.Background()
	// Plus LLEN, which only the fairlock cases send, to watch the queue:
	// latchkey itself never does.
	acl := append(documentedACL(t, user, password, aclPrefix), "+llen")
	if err := admin.Do(ctx, acl...).Err(); err != nil {
		t.Fatalf("the documented ACL: %v", err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkACLLog(t, s.Addr(), user) })
	return &env{
		Name: uniqueName(t),
		Client: func() redis.UniversalClient {
			return closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr(), Username: user, Password: password}))
		},
		Advance: time.Sleep,
		Real:    true,
	}
}}

// checkACLLog fails t if the server logged an ACL denial for user.
func checkACLLog(t *testing.T, addr, user string) {
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	entries, err := admin.ACLLog(context.Background(), 100).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Username == user {
			t.Errorf("ACL denied %s: %s %q (context %s, %d times)", user, e.Reason, e.Object, e.Context, e.Count)
		}
	}
}
