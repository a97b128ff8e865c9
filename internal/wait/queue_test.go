package wait_test

import (
	"testing"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/wait"
)

// A queue entry outlives three backstops, at which its waiter attempts at
// the latest, refreshing it.
func TestQueueTimeout_threeBackstops(t *testing.T) {
	if handoff.QueueTimeout != 3*wait.Backstop {
		t.Errorf("handoff.QueueTimeout = %v, want 3 × wait.Backstop = %v", handoff.QueueTimeout, 3*wait.Backstop)
	}
}
