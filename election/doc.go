// Package election provides leader election backed by Redis, in the shape
// of etcd's concurrency.Election: candidates Campaign, and block until they
// lead; the leader Resigns, or Proclaims a new value; anyone reads the
// Leader, or Observes each change of it without polling.
//
// A leadership is a hold of a latchkey mutex (package mutex) on the
// election's name, kept alive by its client's watchdog: a leader that
// crashes, is cut off or paused keeps the leadership for at most its lease
// timeout (WithLeaseTimeout, 30s by default) after its last renewal, and
// then the candidate first in line takes over. Candidates wait in the
// mutex's queue, so a resignation hands the leadership to the next one in
// the same round trip, and a Redisson client locking the same name (an
// RLock) excludes every candidate, and is excluded by the leader.
//
// Every leadership has a term: the fencing token of its hold, which
// strictly increases from one leader to the next, across restarts of a
// Redis server that lost it (see mutex.Mutex.Token). A leader learns of
// its loss through the context Campaign returns, whose cause then matches
// latchkey.ErrLost; but a leader that was paused learns nothing until it
// runs again. Give the term to every write the leader makes, so that the
// store can refuse one whose leadership ended: that, not the context, is
// what makes a deposed leader harmless.
//
// Redis keys for an election named N: the mutex's (see package mutex), and
//
//	latchkey_election:{N}           hash owner, value, term: the latest
//	                                leader's record, deleted when it
//	                                resigns; the leader's only while its
//	                                owner holds N
//	latchkey_election__channel:{N}  a leader's term when it starts or
//	                                proclaims, "0" when it resigns
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
package election
