//go:build !unix

package redistest

import "os"

// Placeholders for platforms without job-control signals; they are never
// sent because canPause is false.
var (
	sigStop os.Signal = os.Interrupt
	sigCont os.Signal = os.Interrupt
)

// canPause reports whether servers can be paused on this platform.
const canPause = false
