//go:build !linux

package main

import "syscall"

// sysProcAttr is nil here: servers the bench starts run as the bench does,
// and outlive it if it dies without stopping them.
func sysProcAttr(uid, gid uint32) *syscall.SysProcAttr { return nil }
