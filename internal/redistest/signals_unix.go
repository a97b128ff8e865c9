//go:build unix

package redistest

import "syscall"

// Signals used to pause and resume a server.
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// canPause reports whether servers can be paused on this platform.
const canPause = true
