package notify_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// subscribeCalls reads how many SUBSCRIBE or SSUBSCRIBE commands a server
// has run, from INFO commandstats.
func subscribeCalls(t *testing.T, c *redis.Client, cmd string) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// tapAll taps every channel at once, and fails unless each tap hears a
// message published on its channel.
func tapAll(t *testing.T, h *notify.Hub, pub redis.UniversalClient, publish string, chans []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	taps := make([]*notify.Subscription, len(chans))
	errs := make([]error, len(chans))
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Go(func() { taps[i], errs[i] = h.Tap(ctx, ch) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("tap %s: %v", chans[i], err)
		}
		defer taps[i].Close()
	}
	for i, ch := range chans {
		if err := pub.Do(ctx, publish, ch, "0").Err(); err != nil {
			t.Fatal(err)
		}
		if !woken(taps[i], wakeTimeout) {
			t.Fatalf("the tap of %s did not hear its message", ch)
		}
	}
}

// Taps made together share SUBSCRIBE commands, and each hears its own
// channel.
func TestHub_tapsShareSubscribes(t *testing.T) {
	s := redistest.SharedServer(t)
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	const n = 300
	chans := make([]string, n)
	for i := range chans {
		chans[i] = channelName(t, i)
	}
	before := subscribeCalls(t, raw, "subscribe")
	tapAll(t, h, raw, "publish", chans)
	// 300 taps fit two commands (256 channels each); allow for a loaded
	// machine spreading them over several tap delays.
	if got := subscribeCalls(t, raw, "subscribe") - before; got > n/10 {
		t.Errorf("%d taps took %d SUBSCRIBE commands, want them shared", n, got)
	}
}

// On a cluster, taps of channels in many hash slots of one master share
// SSUBSCRIBEs by slot only: every tap is made, and hears its channel.
func TestHub_tapsSharded(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cc := cl.Client(t)
	h := newHub(t, cc)
	var chans []string
	for i := range 40 {
		chans = append(chans, fmt.Sprintf("pubsub-test:{%s-%d}:forced", t.Name(), i))
		if i%2 == 0 {
			chans = append(chans, fmt.Sprintf("pubsub-test:{%s-%d}:other", t.Name(), i)) // the same slot
		}
	}
	tapAll(t, h, cc, "spublish", chans)
}
