package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
)

// A resubscription the server refuses (here: the user lost its channels,
// which also closes its subscriber connections) leaves the connection up
// and the channel deaf, while go-redis counts it subscribed. The Hub's
// waiters look again at once, and the Hub subscribes again until the
// server accepts: a publish then wakes them as before.
func TestHub_refusedResubscription(t *testing.T) {
	s := redistest.StartServer(t)
	c, ctl := s.Client(t), s.Client(t)
	ctx := context.Background()
	h := newHub(t, c)
	ch := channelName(t, 0)
	sub := subscribe(t, h, ch, notify.WakeAll)

	if err := ctl.Do(ctx, "ACL", "SETUSER", "default", "resetchannels").Err(); err != nil {
		t.Fatal(err)
	}
	_ = ctl.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err() // if the ACL change left it
	if !woken(sub, wakeTimeout) {
		t.Fatal("waiter not woken when its channel's resubscription was refused")
	}
	if err := ctl.Do(ctx, "ACL", "SETUSER", "default", "allchannels").Err(); err != nil {
		t.Fatal(err)
	}
	// Refusals go on until the ACL changed back: the Hub pauses between
	// tries, up to 5s, and each refusal wakes the waiter.
	eventually(t, 3*wakeTimeout, func() bool { return numSub(t, ctl, ch) == 1 }, "not subscribed again once the server accepts")
	time.Sleep(100 * time.Millisecond) // a last refusal's wake-up, if any, lands
	select {
	case <-sub.C(): // drop it: the publish must wake the waiter itself
	default:
	}
	if n := ctl.Publish(ctx, ch, "0").Val(); n != 1 {
		t.Fatalf("PUBLISH reached %d subscribers, want 1", n)
	}
	if !woken(sub, wakeTimeout) {
		t.Fatal("waiter not woken by a publish after the server accepted its channel again")
	}
}
