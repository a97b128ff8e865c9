package hold

import (
	"slices"
	"testing"
)

// A set finds every live hold, the first one's slot reused once emptied,
// with the map beside it in use.
func TestSet(t *testing.T) {
	var s set
	keys := func() []string {
		var ks []string
		for h := range s.all {
			ks = append(ks, h.key)
		}
		slices.Sort(ks)
		return ks
	}
	for _, k := range []string{"a", "b", "c"} {
		s.add(&Hold{key: k})
	}
	s.remove("a") // the first slot's
	s.add(&Hold{key: "d"})
	s.remove("c") // the map's
	s.remove("x") // none
	if got := keys(); !slices.Equal(got, []string{"b", "d"}) {
		t.Fatalf("all = %v, want [b d]", got)
	}
	for _, k := range []string{"b", "d"} {
		if h := s.get(k); h == nil || h.key != k {
			t.Errorf("get(%q) = %v", k, h)
		}
	}
	if s.get("a") != nil || s.get("c") != nil {
		t.Error("get finds a removed hold")
	}
}
