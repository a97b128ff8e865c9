package latchkey_test

import (
	"strings"
	"testing"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/election"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// Programming errors panic in the caller's goroutine, in New, with a
// message that says what is wrong: never later, in a goroutine of the
// library, where no recover reaches and the process dies.

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// A typed nil client (a constructor's unchecked error) is refused by New as
// an untyped nil is.
func TestNew_typedNilClient(t *testing.T) {
	var (
		single  *redis.Client
		cluster *redis.ClusterClient
	)
	for _, c := range []struct {
		name   string
		client redis.UniversalClient
		want   string
	}{
		{"untyped", nil, "nil client"},
		{"*redis.Client", single, "nil *redis.Client"},
		{"*redis.ClusterClient", cluster, "nil *redis.ClusterClient"},
	} {
		for _, n := range []struct {
			pkg string
			new func(redis.UniversalClient)
		}{
			{"mutex", func(c redis.UniversalClient) { mutex.New(c, "x") }},
			{"fairlock", func(c redis.UniversalClient) { fairlock.New(c, "x") }},
			{"rwlock", func(c redis.UniversalClient) { rwlock.New(c, "x") }},
			{"semaphore", func(c redis.UniversalClient) { semaphore.New(c, "x") }},
			{"permitsemaphore", func(c redis.UniversalClient) { permitsemaphore.New(c, "x") }},
			{"countdownlatch", func(c redis.UniversalClient) { countdownlatch.New(c, "x") }},
			{"election", func(c redis.UniversalClient) { election.New(c, "x") }},
			{"pubsub", func(c redis.UniversalClient) { pubsub.New(c) }},
			{"redlock", func(c redis.UniversalClient) { redlock.New([]redis.UniversalClient{c}, "x") }},
		} {
			got := panicOf(func() { n.new(c.client) })
			msg, _ := got.(string)
			if !strings.HasPrefix(msg, n.pkg+": New: ") || !strings.Contains(msg, c.want) {
				t.Errorf("%s.New(%s) panicked with %v; want %q naming %q", n.pkg, c.name, got, n.pkg+": New: ...", c.want)
			}
		}
	}
}
