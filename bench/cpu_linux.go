//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// selfCPU returns the user+system CPU time the bench process has used so
// far: getrusage(RUSAGE_SELF), every thread of it.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100
// on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// treeCPU returns the user+system CPU time of the process pid and of its
// live descendants (a PostgreSQL server's backends), from /proc.
func treeCPU(pid int) (time.Duration, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		p, pp, t, ok := parseStat(string(b))
		if ok {
			parent[p], ticks[p] = pp, t
		}
	}
	if _, ok := ticks[pid]; !ok {
		return 0, os.ErrNotExist
	}
	var total time.Duration
	for p, t := range ticks {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				total += processCPU(p, t)
				break
			}
		}
	}
	return total, nil
}

// processCPU returns the CPU time of process p, whose /proc/PID/stat said
// ticks. The stat figure is whole ticks per process: a run's 16 backends
// of 5ms each may all read as no time at all. The scheduler's own figure,
// in nanoseconds per thread (/proc/PID/task/TID/schedstat), does not round,
// so it is preferred; it leaves out threads that have exited, which the
// servers measured here (one-thread backends; Go's threads) do not do.
func processCPU(p int, ticks int64) time.Duration {
	dir := filepath.Join("/proc", strconv.Itoa(p), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return time.Duration(ticks) * clockTick
	}
	var ns int64
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
		if err != nil {
			continue // exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return time.Duration(ticks) * clockTick
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return time.Duration(ticks) * clockTick
		}
		ns += n
	}
	return time.Duration(ns)
}

// parseStat returns the pid, parent pid and utime+stime of a
// /proc/PID/stat line. The command name, in parentheses, may hold spaces.
func parseStat(s string) (pid, ppid int, ticks int64, ok bool) {
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return 0, 0, 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	f := strings.Fields(s[close+1:]) // f[0] is field 3 (state)
	if err != nil || len(f) < 13 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return pid, ppid, utime + stime, true
}
