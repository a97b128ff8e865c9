package latchkey_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"

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

// Every method that takes a ctx panics in the caller's goroutine, with a
// message that says so, when given a nil one: before it sends anything or
// starts any goroutine, so no library goroutine dies of it.
func TestNilContext_panicsInCaller(t *testing.T) {
	mr, _ := redistest.Miniredis(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: mr.Addr()}))
	ctx := context.Background()
	name := t.Name()
	ps := permitsemaphore.New(c, name+"-ps")
	if _, err := ps.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	permit, err := ps.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	rw := rwlock.New(c, name+"-rw")
	handles := []any{
		mutex.New(c, name+"-m"),
		fairlock.New(c, name+"-f"),
		rw, rw.ReadLock(), rw.WriteLock(),
		semaphore.New(c, name+"-s"),
		ps, permit,
		countdownlatch.New(c, name+"-l"),
		multilock.New(mutex.New(c, name+"-a"), mutex.New(c, name+"-b")),
		redlock.New([]redis.UniversalClient{c}, name+"-r"),
		election.New(c, name+"-e"),
	}
	ctxType := reflect.TypeFor[context.Context]()
	for _, h := range handles {
		v := reflect.ValueOf(h)
		for i := range v.NumMethod() {
			m, mt := v.Method(i), v.Type().Method(i)
			if m.Type().NumIn() == 0 || m.Type().In(0) != ctxType {
				continue
			}
			what := fmt.Sprintf("%T.%s", h, mt.Name)
			t.Run(what, func(t *testing.T) {
				args := []reflect.Value{reflect.Zero(ctxType)}
				for j := 1; j < m.Type().NumIn(); j++ {
					args = append(args, sample(m.Type().In(j), m.Type().IsVariadic() && j == m.Type().NumIn()-1))
				}
				got := make(chan any, 1)
				go func() {
					got <- panicOf(func() {
						if m.Type().IsVariadic() {
							m.CallSlice(args)
						} else {
							m.Call(args)
						}
					})
				}()
				select {
				case v := <-got:
					// A method that derives a context says what context.WithCancel says.
					if msg := fmt.Sprint(v); !strings.Contains(msg, "nil Context") && !strings.Contains(msg, "nil parent") {
						t.Errorf("%s(nil, ...) panicked with %v; want a panic that says the Context is nil", what, v)
					}
				case <-time.After(10 * time.Second):
					t.Errorf("%s(nil, ...) did not return within 10s", what)
				}
			})
		}
	}
	for _, f := range []struct {
		what string
		call func()
	}{
		//lint:ignore SA1012 the nil ctx is the test
		{"latchkey.Preload", func() { _ = latchkey.Preload(nil, c) }},
	} {
		if v := panicOf(f.call); !strings.Contains(fmt.Sprint(v), "nil Context") {
			t.Errorf("%s(nil, ...) panicked with %v; want a panic that says the Context is nil", f.what, v)
		}
	}
	flight.Settle()
	time.Sleep(100 * time.Millisecond) // a library goroutine that panicked would have ended the process
}

// sample returns a valid argument of type t (for a variadic, a slice of one).
func sample(t reflect.Type, variadic bool) reflect.Value {
	if variadic {
		s := reflect.MakeSlice(t, 1, 1)
		s.Index(0).Set(sample(t.Elem(), false))
		return s
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(100 * time.Millisecond)
	case t == reflect.TypeFor[permitsemaphore.Lease]():
		return reflect.ValueOf(permitsemaphore.Lease(time.Second))
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return reflect.ValueOf(1).Convert(t)
	case reflect.String:
		return reflect.ValueOf("x").Convert(t)
	}
	return reflect.Zero(t)
}
