//go:build !linux

package redistest

import "syscall"

// sysProcAttr returns nil: parent-death signals exist only on Linux, so
// elsewhere processes are stopped only by test cleanups and [Main].
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
