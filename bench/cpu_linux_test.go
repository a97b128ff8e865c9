//go:build linux

package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

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

// TestTreeCPU counts a child's CPU time to the nanosecond: a child that
// spins for a few milliseconds, under one clock tick, still shows.
func TestTreeCPU(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	self, err := treeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var child time.Duration
	for deadline := time.Now().Add(10 * time.Second); child <= 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if child, err = treeCPU(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	if child <= 0 || self <= 0 || child%clockTick == 0 {
		t.Errorf("tree CPU: self %v, child %v; want both above 0, the child's in nanoseconds", self, child)
	}
}
