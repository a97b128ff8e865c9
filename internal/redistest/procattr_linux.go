//go:build linux

package redistest

import "syscall"

// sysProcAttr asks the kernel to SIGKILL a started process when the test
// binary dies, so that a crashed or killed test leaves no server behind.
//
// The signal is tied to the OS thread that started the process. The Go
// runtime keeps its threads alive except when a goroutine exits while locked
// to its thread with runtime.LockOSThread, so helpers must not be called
// from such a goroutine.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
