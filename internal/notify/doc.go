// Package notify is the Hub: one Redis subscriber connection per client (one
// per cluster master in sharded mode) that every waiting latchkey primitive
// shares. Users configure it through package pubsub, a facade over it.
//
// Waiters never poll. A blocked Lock, Acquire or Wait subscribes to its
// primitive's channel through a Hub, runs its attempt once more after the
// server has confirmed the subscription, and then sleeps until a wake-up
// arrives or a bound derived from the data (a holder's TTL, a permit's
// expiry) runs out. Pub/sub is lossy: the bound is the correctness backstop,
// the message is the fast path.
//
// Channels are reference-counted: the first waiter on a channel subscribes,
// the last one unsubscribes. A message wakes as many local waiters as the
// channel's [WakePolicy] says (one for an unlock, all for a write unlock or a
// latch reaching zero, k for a release of k permits). Wake-ups are coalescing,
// non-blocking signals, so a slow waiter never stalls dispatch. When the
// subscriber connection is re-established every waiter is woken, because
// messages published while it was down are gone.
//
// Every primitive uses the Hub shared by its go-redis client (package
// internal/shared keeps it) unless given another one with its WithHub
// option.
package notify
