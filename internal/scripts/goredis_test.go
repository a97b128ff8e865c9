package scripts

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// pipeWait reads the script's outcome from its command's error, not from
// the pipeline's: when the connection cannot be had, go-redis must set
// each command's error. It does from v9.22.0 on (earlier releases leave
// them nil, and a failed write would read as an empty answer), which is
// why go.mod requires at least that release.
func TestGoRedis_pipelineErrorsReachCommands(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pipe := c.Pipeline()
	ev := pipe.EvalSha(ctx, "0000000000000000000000000000000000000000", []string{"k"})
	wait := pipe.Do(ctx, "WAIT", 1, 10)
	if _, err := pipe.Exec(ctx); err == nil {
		t.Fatal("a pipeline to a refused port succeeded")
	}
	if ev.Err() == nil || wait.Err() == nil {
		t.Fatalf("a pipeline that could not connect left its commands' errors unset (EVALSHA %v, WAIT %v): "+
			"go-redis older than v9.22.0?", ev.Err(), wait.Err())
	}
}
