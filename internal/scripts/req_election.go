package scripts

import "github.com/latchkey/latchkey/internal/keys"

// The requests of the election's scripts: the leader's record beside the
// election's lock, a Redisson RLock (see keys.Election).

var (
	electionLeader   = Get("election_leader")
	electionProclaim = Get("election_proclaim")
	electionResign   = Get("election_resign")
)

// ElectionLeader reads who leads, at one instant.
type ElectionLeader struct{ Election keys.Election }

func (r ElectionLeader) Request() Request {
	b := begin(electionLeader, 2, 0)
	b.key("the election's lock", r.Election.Name)
	b.key("the leader's record", r.Election.Leader)
	return b.done()
}

// ElectionProclaim records the value of a leader that holds the lock.
type ElectionProclaim struct {
	Election keys.Election
	Owner    string
	Value    string
	Term     int64 // the fencing token of the leader's hold
}

func (r ElectionProclaim) Request() Request {
	b := begin(electionProclaim, 3, 4)
	b.key("the election's lock", r.Election.Name)
	b.key("the leader's record", r.Election.Leader)
	b.key("the channel of changes", r.Election.Changes)
	b.arg("the leader's owner id", r.Owner)
	b.arg("its value", r.Value)
	b.arg("its term", r.Term)
	b.input("PUBLISH or SPUBLISH", Pub)
	b.synced()
	return b.done()
}

// ElectionResign deletes the record of a leader that released the lock.
// It does not wait for replicas: the release it follows did.
type ElectionResign struct {
	Election keys.Election
	Owner    string
}

func (r ElectionResign) Request() Request {
	b := begin(electionResign, 2, 2)
	b.key("the leader's record", r.Election.Leader)
	b.key("the channel of changes", r.Election.Changes)
	b.arg("the leader's owner id", r.Owner)
	b.input("PUBLISH or SPUBLISH", Pub)
	return b.done()
}
