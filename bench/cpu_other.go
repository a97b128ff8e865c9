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
