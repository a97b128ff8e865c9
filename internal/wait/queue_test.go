package wait_test

import (
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

// A queue entry outlives three backstops, at which its waiter attempts at
// the latest, refreshing it.
func TestQueueTimeout_threeBackstops(t *testing.T) {
	if scripts.QueueLife != 3*wait.Backstop {
		t.Errorf("scripts.QueueLife = %v, want 3 × wait.Backstop = %v", scripts.QueueLife, 3*wait.Backstop)
	}
}
