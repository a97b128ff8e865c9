//go:build linux

package main

import "testing"

func TestParseStat(t *testing.T) {
	pid, ppid, ticks, ok := parseStat("4242 (postgres: bench x) S 4200 1 1 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 1 0")
	if !ok || pid != 4242 || ppid != 4200 || ticks != 22 {
		t.Errorf("parseStat: %d %d %d %v", pid, ppid, ticks, ok)
	}
}

func TestSelfCPU(t *testing.T) {
	before, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	after, err := selfCPU()
	if err != nil || after <= before || x == 0 {
		t.Errorf("CPU time %v then %v: %v", before, after, err)
	}
}
