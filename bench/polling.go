package main

import (
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
)

// kindPolling is the kind of latchkey-polling, which runs only where a
// scenario names it.
const kindPolling Kind = "mutex-polling"

func init() {
	register(&Impl{
		Name:  "latchkey-polling",
		Kind:  kindPolling,
		Rank:  3,
		Color: "#9edae5",
		About: "latchkey mutex on a client set to poll (latchkey.SetPolling): no pub/sub; a waiter r " +
			"places behind the head looks after (r+1)x10ms, backing off to 200ms at the head, 500ms behind.",
		New: func(c *Conn, name string) any {
			latchkey.SetPolling(c.Client, true)
			return latchkeyMutex{mutex.New(c.Client, name)}
		},
		Close: closeLatchkey,
	})
	both := []string{"latchkey", "latchkey-polling"}
	registerScenario(&Scenario{
		Name: "hotlock-polling", Rank: 14, Workers: 8, Contended: true, Also: both, Optional: true,
		About: "hotlock (8 workers, hold 1ms, think 1ms) waiting through the pub/sub Hub (latchkey) " +
			"and by polling (latchkey-polling): what waiting without pub/sub costs in handoff and in " +
			"commands per acquisition.",
		Run: Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
	registerScenario(&Scenario{
		Name: "slowlock-polling", Rank: 15, Workers: 8, Contended: true, Also: both, Optional: true,
		About: "8 workers hold for 50ms and think 50ms, through the Hub and by polling: a polling " +
			"waiter's looks while the lock is held long, in commands per acquisition.",
		Run: Load{Workers: 8, Hold: 50 * time.Millisecond, Think: 50 * time.Millisecond, Capacity: 1}.Run,
	})
}
