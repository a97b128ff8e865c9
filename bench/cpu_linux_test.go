//go:build linux

package main

import "testing"

func TestParseStat(t *testing.T) {
	pid, ppid, ticks, ok := parseStat("4242 (postgres: bench x) S 4200 1 1 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 1 0")
	if !ok || pid != 4242 || ppid != 4200 || ticks != 22 {
		t.Errorf("parseStat: %d %d %d %v", pid, ppid, ticks, ok)
	}
}
