package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// sampleFields is how many fields of a hash ls samples to tell a lock's
// hash (owner fields, and a read-write lock's mode) from another.
const sampleFields = 8

// sieveStep tells, in a round trip or two and reading little of any value,
// whether key may be a synchronizer's, and calls keep if so: a hash whose
// sampled fields are owner ids (or a read-write lock's mode), or an
// integer string with something beside it that ties it to a semaphore or
// a latch (see bareStep), or any integer string with all. The reads fit
// every type: the one that does not fit the key's fails with WRONGTYPE,
// and neither reads more than a few bytes of a big value.
func sieveStep(c *conn, key string, all bool, keep func()) step {
	return func(r *round) func() (step, error) {
		fields := r.p.HRandField(r.ctx, key, sampleFields)
		head := r.p.GetRange(r.ctx, key, 0, 20)
		return func() (step, error) {
			switch {
			case fields.Err() == nil:
				if len(fields.Val()) > 0 && sampledLock(fields.Val()) {
					keep()
				}
				return nil, nil
			case head.Err() == nil:
				if _, err := strconv.ParseInt(head.Val(), 10, 64); err != nil {
					return nil, nil
				}
				if all {
					keep()
					return nil, nil
				}
				return bareStep(c, key, keep), nil
			case wrongType(fields.Err()) && wrongType(head.Err()):
				return nil, nil // neither a hash nor a string
			}
			return nil, c.keyErr(key, cmpErr(fields.Err(), head.Err()))
		}
	}
}

// sampledLock reports whether every field sampled is a lock's.
func sampledLock(fields []string) bool {
	for _, f := range fields {
		if f != "mode" && !ownerShaped(f) {
			return false
		}
	}
	return true
}

// bareStep calls keep unless the integer under name is bare: no
// semaphore's keys beside it (queue, grants, listeners, turn, permit
// leases) and no listener on a semaphore's or a latch's channel, as
// detection would find (see detection.byListeners).
func bareStep(c *conn, name string, keep func()) step {
	return func(r *round) func() (step, error) {
		sem, latch := keys.SemaphoreOf(name), keys.LatchChannel(name)
		beside := []string{sem.Leases, sem.Queue, sem.Grants, sem.Listeners, sem.Turn}
		var exists []*redis.IntCmd
		if rt.Usable(r.ctx, name, c.client) == nil { // all in the name's slot
			exists = append(exists, r.p.Exists(r.ctx, beside...))
		} else {
			for _, k := range beside {
				exists = append(exists, r.p.Exists(r.ctx, k))
			}
		}
		r.count = append(r.count, sem.Channel, latch)
		return func() (step, error) {
			for _, cmd := range exists {
				if err := cmd.Err(); err != nil {
					return nil, c.keyErr(name, err)
				}
				if cmd.Val() > 0 {
					keep()
					return nil, nil
				}
			}
			if r.countErr != nil {
				return nil, c.keyErr(name, r.countErr)
			}
			if r.counts == nil || r.counts[sem.Channel] > 0 || r.counts[latch] > 0 {
				keep() // listened to, or the server would not say
			}
			return nil, nil
		}
	}
}

// wrongType reports whether err is Redis' WRONGTYPE reply.
func wrongType(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// cmpErr returns the first of errs that is not WRONGTYPE.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil && !wrongType(err) {
			return err
		}
	}
	return nil
}
