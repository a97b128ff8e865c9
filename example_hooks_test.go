package latchkey_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// LogHooks logs what an operator needs to know, here a hold lost because
// its key was deleted behind its holder's back. Hooks are set per client;
// latchkey logs nothing on its own.
func ExampleLogHooks() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	// A program would pass slog.Default(); this logger leaves out the time,
	// so that the output stays the same.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	latchkey.SetHooks(rdb, latchkey.LogHooks(logger))

	ctx := context.Background()
	m := mutex.New(rdb, "report", mutex.WithWatchdogTimeout(300*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	rdb.Del(ctx, "report") // as another program, or an operator, might
	<-m.Done()             // closes once the watchdog finds the hold gone
	// Output:
	// level=ERROR msg="latchkey: hold lost" kind=mutex name=report error="mutex: report: latchkey: hold lost: found gone on renewal"
}
