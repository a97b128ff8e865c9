package main

import "fmt"

// annotate adds to st's note what its kind and its queue call for: an
// ambiguous kind, and waiters that seem dead, with the command that
// removes them.
func annotate(st *State) {
	switch st.Kind {
	case kindCounter:
		if st.bare {
			st.addNote("a plain integer with nothing beside it (no queue, no permit zset, no listener on a semaphore's " +
				"or a latch's channel), perhaps no synchronizer at all: ls leaves it out; pass -kind semaphore or -kind countdownlatch")
		} else {
			st.addNote("a plain integer: pass -kind semaphore or -kind countdownlatch")
		}
	case kindEitherLock:
		st.addNote("a Redisson lock hash with nothing beside it: an RLock, or an RFairLock nobody waits for, which Redis cannot tell apart")
	}
	n, d := len(st.Queue), dead(st)
	switch {
	case d == 0:
	case isLock(st.Kind) && len(st.Holders) == 0 && d == n:
		st.addNote(fmt.Sprintf("free; %d dead %s queued: run latchkey clear %s", d, plural(d, "waiter"), st.Name))
	default:
		st.addNote(fmt.Sprintf("%d of %d %s dead: latchkey evict %s WAITER", d, n, plural(n, "waiter"), st.Name))
	}
}

// addNote appends a remark to st's note.
func (st *State) addNote(s string) {
	if st.Note != "" {
		st.Note += "; "
	}
	st.Note += s
}

// isLock reports whether kind is a lock's, which unlock and clear act on.
func isLock(kind string) bool {
	switch kind {
	case kindMutex, kindFairLock, kindRWLock, kindEitherLock:
		return true
	}
	return false
}

// counted returns n and word, with an s unless n is 1: "1 permit", "2 permits".
func counted(n int64, word string) string { return fmt.Sprintf("%d %s", n, plural(int(n), word)) }

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
