//go:build linux

package main

import "syscall"

// sysProcAttr has the kernel kill the embedded redis-server if the bench
// process dies without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
