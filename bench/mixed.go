package main

import (
	"math"
	"time"
)

// The mixed deployment: Go processes on latchkey and Java processes on
// Redisson take turns on one lock. latchkey grants a release to its own
// next waiter, but yields to Redisson's when they are listening; this
// scenario measures whether the Java side is served its share.
const (
	mixedWorkers = 8
	mixedJava    = 2 // of mixedWorkers: emulated Redisson clients
)

func init() {
	registerScenario(&Scenario{
		Name: "hotlock-mixed", Rank: 14, Kinds: []Kind{KindMutex}, Workers: mixedWorkers, Contended: true,
		// Only latchkey speaks Redisson's RLock layout; the other mutexes
		// keep other keys, so a Redisson client would not exclude them.
		Only: []string{"latchkey"},
		About: "hotlock in a mixed deployment: 6 workers on the impl, 2 emulated Redisson (Java) clients on " +
			"the same lock name with Redisson's RLock hash, scripts (unlock with its latch) and wait (retry on each \"0\" on " +
			"redisson_lock__channel, or when the holder's TTL runs out; subscribed only while waiting). " +
			"Each has its own client: Lock, hold 1ms, Unlock, think 1ms, all through one holders gauge. " +
			"Per side: acq/s and waits; Java share = acquisitions per Java worker / per Go worker.",
		Run: Load{Workers: mixedWorkers, Java: mixedJava, Hold: time.Millisecond, Think: time.Millisecond,
			Capacity: 1}.Run,
		Finish: mixedFinish,
	})
}

// The sides of a mixed load, as its series and figures name them.
const (
	sideGo   = "Go"
	sideJava = "Java"
)

// sides records each acquisition's wait in its side's series: the last
// ld.Java workers are the Java ones.
func (ld Load) sides(run *Run, workers []worker) {
	for i, w := range workers {
		side := sideGo
		if i >= ld.Workers-ld.Java {
			side = sideJava
		}
		for _, a := range w.acqs {
			run.addSeries(side+" wait", a.got-a.start)
		}
	}
}

// mixedFinish adds each side's throughput and the Java share: mean
// acquisitions per Java worker over mean per Go worker (1 is fair).
func mixedFinish(r *Result) {
	goN, javaN := r.Series[sideGo+" wait"].N, r.Series[sideJava+" wait"].N
	if r.WallSeconds <= 0 {
		return
	}
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	r.Extra[sideGo+" acq/s"] = math.Round(float64(goN) / r.WallSeconds)
	r.Extra[sideJava+" acq/s"] = math.Round(float64(javaN) / r.WallSeconds)
	if goN > 0 {
		share := float64(javaN) / mixedJava / (float64(goN) / (mixedWorkers - mixedJava))
		r.Extra["Java share"] = math.Round(share*100) / 100
	}
}
