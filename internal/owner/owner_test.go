package owner_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// Ids made by New are told from Redisson's (a version 4 UUID) and from
// whatever a user passes.
func TestLatchkey(t *testing.T) {
	id := owner.New()
	if !owner.Latchkey(id) {
		t.Errorf("Latchkey(New() = %q) = false", id)
	}
	if u, err := uuid.Parse(owner.Process()); err != nil || u.Version() != 8 || u.Variant() != uuid.RFC4122 {
		t.Errorf("process id %q: version %v, variant %v, err %v; want an RFC 9562 version 8 UUID", owner.Process(), u.Version(), u.Variant(), err)
	}
	for _, id := range []string{uuid.NewString() + ":1", "worker-7", "", owner.Process()} {
		if owner.Latchkey(id) {
			t.Errorf("Latchkey(%q) = true", id)
		}
	}
}
