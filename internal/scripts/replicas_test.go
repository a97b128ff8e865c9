package scripts

import (
	"testing"
	"time"
)

// A count by WAIT keeps a replica it saw for silentReplica after the
// replica falls silent; a count by INFO is taken as it is.
func TestReplicaCount_set(t *testing.T) {
	t0 := time.Now()
	var rc replicaCount
	steps := []struct {
		n      int
		byWait bool
		after  time.Duration
		want   int
	}{
		{2, true, 0, 2},
		{1, true, time.Second, 2},                 // one fell silent: still counted
		{0, true, silentReplica, 2},               // silentReplica after it was last seen
		{0, true, silentReplica + time.Second, 0}, // then dropped, as a master drops it
		{1, true, silentReplica + 2*time.Second, 1},
		{0, false, silentReplica + 3*time.Second, 0}, // INFO says none: none
	}
	for i, s := range steps {
		rc.set(s.n, s.byWait, t0.Add(s.after))
		if rc.n != s.want {
			t.Errorf("step %d: set(%d, %v) after %v: n = %d, want %d", i, s.n, s.byWait, s.after, rc.n, s.want)
		}
	}
}
