// Package countdownlatch provides a distributed count-down latch backed by
// Redis, wire-compatible with Redisson's RCountDownLatch.
//
// A latch holds a count. [Latch.TrySetCount] gives a latch that does not
// exist a positive count, [Latch.CountDown] lowers it by one, and
// [Latch.Wait] blocks until it reaches zero; then every waiter, in every
// process, is released at once. A latch whose count reached zero no longer
// exists, and a latch that does not exist has count zero: Wait on it returns
// at once, CountDown on it does nothing, and TrySetCount may start it again.
// Latches have no owner (as in Redisson): any process may count down any
// latch, and a process that crashes simply does not count down.
//
// Waiters do not poll. A blocked Wait sleeps until a message on the latch's
// channel says the count changed, then reads the count once. Pub/sub is
// lossy, so unlike Redisson's await, which can hang forever on a lost
// message, a Wait also looks again after a bounded sleep of a few seconds.
// Many waiters in one process share one subscriber connection (see package
// pubsub), and one message releases all of them.
//
// latchkey does better than Redisson in two places, without changing the
// layout: [Latch.Delete] releases the waiters (Redisson's delete publishes
// NEW_COUNT, which leaves its awaiters blocked; latchkey publishes
// ZERO_COUNT, which opens Java and Go waiters alike, since a deleted latch
// has count zero), and a latchkey waiter wakes on any message of the
// channel, so it is released by a Java client's delete too.
//
// Redis keys, as Redisson lays them out for a latch named N:
//
//	N                                        string, the count; absent = 0
//	redisson_countdownlatch__channel__{N}    "1" NEW_COUNT when a count is set,
//	                                         "0" ZERO_COUNT when it reaches 0
//
// The channel is always wrapped in braces, even when N has a hash tag of its
// own (a Redisson quirk). In a Redis Cluster such a name puts the channel in
// another hash slot than the key: a script cannot declare both (Redisson's
// own latch scripts fail there with CROSSSLOT), and with sharded pub/sub it
// cannot publish to a channel that another master serves. For such a name
// on a cluster client, latchkey changes the key with a script on the key's
// slot and then publishes the message from the client, with SPUBLISH or
// PUBLISH as the Hub does, to the channel's own shard, where the waiters
// listen. A crash or a network failure between the two loses that message,
// which the waiters' bounded sleep absorbs. Names without braces, and every
// name outside a cluster, publish atomically from the script, as Redisson
// does.
package countdownlatch
