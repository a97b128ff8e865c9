//go:build !linux

package main

import (
	"errors"
	"time"
)

// treeCPU is not implemented here: CPU per op of a peer is shown as n/a.
func treeCPU(pid int) (time.Duration, error) {
	return 0, errors.New("process CPU time needs /proc")
}

// selfCPU is not implemented here: the client's CPU per op is shown as n/a.
func selfCPU() (time.Duration, error) {
	return 0, errors.New("the process's CPU time needs getrusage on Linux")
}
