//go:build linux

package main

import "syscall"

// sysProcAttr has the kernel kill a server the bench started if the bench
// process dies without stopping it; with uid set (non-zero), the server
// runs as that user and group, as PostgreSQL insists when the bench runs
// as root.
func sysProcAttr(uid, gid uint32) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if uid != 0 {
		a.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	return a
}
