package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

// BenchmarkLs times ls on a server that holds 20 locks among n keys that
// are no synchronizer's, of every type (see fillKeyspace): the time is
// linear in the keys, which each take a share of a SCAN page and of a
// round trip or two that sift the page.
//
//	go test -run '^$' -bench BenchmarkLs -benchtime 3x ./cmd/latchkey
func BenchmarkLs(b *testing.B) {
	bin := build(b)
	for _, n := range []int{200_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			srv := redistest.StartServer(b)
			rdb := srv.Client(b)
			fillKeyspace(b, rdb, n)
			for i := range 20 {
				rdb.HSet(b.Context(), fmt.Sprintf("lock:%d", i), fmt.Sprintf("%s:%d", java, i+1), 1)
				rdb.PExpire(b.Context(), fmt.Sprintf("lock:%d", i), time.Hour)
			}
			c := cli{bin: bin, conn: []string{"-redis", srv.Addr()}}
			for b.Loop() {
				if _, errOut, code := c.run(b, "ls"); code != 0 {
					b.Fatalf("ls: exit %d: %s", code, errOut)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
