package scripts

// The requests of the count-down latch's scripts: a Redisson
// RCountDownLatch, a string holding the count, and its channel.

var (
	latchTrySet    = Get("latch_try_set")
	latchCountDown = Get("latch_count_down")
)

// latch writes a latch's KEYS: its key, and its channel unless the caller
// publishes (channel "", see LatchCountDown.Channel).
func (b *build) latch(name, channel string) {
	b.key("latch key", name)
	if channel != "" {
		b.key("redisson_countdownlatch__channel__{name}", channel)
	}
}

// latchPub writes the publish command, or "" when the caller publishes.
func (b *build) latchPub(channel string) {
	if channel != "" {
		b.input("PUBLISH or SPUBLISH", Pub)
	} else {
		b.arg("PUBLISH or SPUBLISH", "")
	}
}

// LatchTrySet sets the count of a latch that does not exist.
type LatchTrySet struct {
	Name    string
	Channel string // as LatchCountDown's
	Count   int64
	Record  string // the request's own
}

func (r LatchTrySet) Request() Request {
	b := begin(latchTrySet, 2, 2)
	b.latch(r.Name, r.Channel)
	b.arg("the new count", r.Count)
	b.latchPub(r.Channel)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// LatchCountDown counts a latch down by one, and deletes it at zero.
type LatchCountDown struct {
	Name string
	// Channel is the latch's channel (keys.LatchChannel), on which the
	// script publishes; "" when it hashes to another cluster slot than
	// Name, and the caller publishes itself.
	Channel string
	Record  string // the request's own
}

func (r LatchCountDown) Request() Request {
	b := begin(latchCountDown, 2, 1)
	b.latch(r.Name, r.Channel)
	b.latchPub(r.Channel)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}
