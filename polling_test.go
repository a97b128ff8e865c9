package latchkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The conformance suite runs on polling clients too (latchkey.SetPolling),
// as a user that may not subscribe, as behind a proxy that refuses
// SUBSCRIBE: every case must hold, and the server must log no refused
// subscription.
func init() {
	aclBackends = append(aclBackends, backend{"redis-polling", pollingEnv})
	backends = append(backends, backend{"cluster-polling", clusterPollingEnv})
}

// clusterPollingEnv is the cluster backend with polling clients; the
// cases' own eyes subscribe through a client that does not poll.
func clusterPollingEnv(t *testing.T) *env {
	c := redistest.SharedCluster(t)
	client := func() *redis.ClusterClient {
		return closeLater(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()}))
	}
	return &env{
		Name: uniqueName(t),
		Client: func() redis.UniversalClient {
			cc := client()
			latchkey.SetPolling(cc, true)
			return cc
		},
		Advance:  time.Sleep,
		Real:     true,
		Polling:  true,
		Observer: func() redis.UniversalClient { return client() },
	}
}

func pollingEnv(t *testing.T) *env {
	s := redistest.SharedServer(t)
	const user, password = "polling", "polling-test-password"
	admin := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer admin.Close()
	ctx := context.Background()
	err := admin.Do(ctx, "ACL", "SETUSER", user, "reset", "on", ">"+password, "~*", "&*",
		"+@all", "-subscribe", "-ssubscribe", "-psubscribe").Err()
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkACLLog(t, s.Addr(), user) })
	return &env{
		Name: uniqueName(t),
		Client: func() redis.UniversalClient {
			c := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr(), Username: user, Password: password}))
			latchkey.SetPolling(c, true)
			return c
		},
		Advance: time.Sleep,
		Real:    true,
		Polling: true,
		Observer: func() redis.UniversalClient {
			return closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
		},
	}
}
