package flight

import "sync"

// behind counts the clean-ups under way (see Background). Not a
// sync.WaitGroup: Settle may run while other clean-ups start (tests that
// run in parallel).
var behind struct {
	sync.Mutex
	n    int
	idle sync.Cond
}

func init() { behind.idle.L = &behind.Mutex }

// Background runs f, a clean-up that a call left behind when it returned
// (its requests still on their way, or its undo), in a goroutine that
// Settle waits for, and returns a channel closed when f has returned.
func Background(f func()) <-chan struct{} {
	done := make(chan struct{})
	behind.Lock()
	behind.n++
	behind.Unlock()
	go func() {
		defer func() {
			behind.Lock()
			if behind.n--; behind.n == 0 {
				behind.idle.Broadcast()
			}
			behind.Unlock()
		}()
		defer close(done)
		f()
	}()
	return done
}

// Settle waits until no clean-up that Background started is under way.
// Tests call it before they check for leaked goroutines or for what a
// clean-up leaves.
func Settle() {
	behind.Lock()
	defer behind.Unlock()
	for behind.n > 0 {
		behind.idle.Wait()
	}
}
