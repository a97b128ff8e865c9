package keys

import (
	"context"
	"encoding"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A boxed key goes to the server as its bytes and reads, in a command's
// text (a trace's, an error's), as its name.
func TestBox(t *testing.T) {
	l := LockOf("orders")
	var b Boxes
	l.Box(&b)
	boxes := []any{b.Name, b.Token, b.Queue, b.Deadlines, b.Channel, b.Hubs, b.Grant}
	names := []string{l.Name, l.Token, l.Queue, l.Deadlines, l.Channel, l.Hubs, l.Grant}
	for i, box := range boxes {
		m, ok := box.(encoding.BinaryMarshaler)
		if !ok {
			t.Fatalf("box %d is a %T, which go-redis cannot write without an allocation", i, box)
		}
		if p, _ := m.MarshalBinary(); string(p) != names[i] {
			t.Errorf("box %d writes %q, want %q", i, p, names[i])
		}
	}
	text := redis.NewCmd(context.Background(), append([]any{"evalsha", "sha", len(boxes)}, boxes...)...).String()
	if want := "evalsha sha 7 " + strings.Join(names, " "); !strings.HasPrefix(text, want) {
		t.Errorf("command text %q, want %q", text, want)
	}
}
