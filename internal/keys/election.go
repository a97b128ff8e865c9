package keys

// Election is the layout of a leader election: the mutex its candidates
// contend for, Redisson's RLock on the name, so that a Redisson client
// locking the same name excludes them, and the leader's record beside it.
type Election struct {
	Lock
	// Leader is latchkey_election:{N}, a hash of the latest leader's owner
	// id, value and term; it is the leader's only while its owner holds
	// the lock.
	Leader string
	// Changes is latchkey_election__channel:{N}: the leader's term, or "0"
	// when a leader resigned, each time the leadership or its value changes.
	Changes string
}

// ElectionOf returns the layout of the election called name.
func ElectionOf(name string) Election {
	return Election{
		Lock:    LockOf(name),
		Leader:  Prefix("latchkey_election", name),
		Changes: Prefix("latchkey_election__channel", name),
	}
}
