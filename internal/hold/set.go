package hold

// A set is a Table's live holds, by key. Most handles hold once at a time,
// and many live for one hold: the first hold sits in one, and the map is
// made only when a second is live beside it.
type set struct {
	one  *Hold
	more map[string]*Hold
}

// get returns the live hold under key, or nil.
func (s *set) get(key string) *Hold {
	if s.one != nil && s.one.key == key {
		return s.one
	}
	return s.more[key]
}

// add adds h, whose key no live hold has.
func (s *set) add(h *Hold) {
	if s.one == nil {
		s.one = h
		return
	}
	if s.more == nil {
		s.more = make(map[string]*Hold)
	}
	s.more[h.key] = h
}

// remove removes the hold under key, if any.
func (s *set) remove(key string) {
	if s.one != nil && s.one.key == key {
		s.one = nil
		return
	}
	delete(s.more, key)
}

// all yields the live holds, in no order.
func (s *set) all(yield func(*Hold) bool) {
	if s.one != nil && !yield(s.one) {
		return
	}
	for _, h := range s.more {
		if !yield(h) {
			return
		}
	}
}

// current is, by class, the hold that Done and Err report on: Any's first,
// then the classes 0 and 1 (a read-write lock's sides; the other locks
// have one class, 0).
type current [3]*Hold

func (c *current) of(class int) *Hold { return c[class+1] }

// set makes h the current hold of its class and of Any.
func (c *current) set(class int, h *Hold) { c[class+1], c[Any+1] = h, h }
