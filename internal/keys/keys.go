// Package keys derives Redis key and channel names the way Redisson does, so
// that every key and channel of one primitive lands in one cluster hash slot.
package keys

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// Prefix returns p:{name}, or p:name when name already carries a hash tag
// (Redisson's prefixName).
func Prefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

// Suffix returns {name}:s, or name:s when name already carries a hash tag
// (Redisson's suffixName).
func Suffix(name, s string) string {
	return Tag(name) + ":" + s
}

// Tag returns {name}, or name itself when it already carries a hash tag.
func Tag(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// LockChannel is the unlock channel of RLock, FencedLock and the fair lock's
// base name: redisson_lock__channel:{name}.
func LockChannel(name string) string { return Prefix("redisson_lock__channel", name) }

// LatchChannel is RCountDownLatch's channel, which always braces the
// name, hash tag or not: redisson_countdownlatch__channel__{name}.
func LatchChannel(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

// TokenKey is the fencing counter of RFencedLock: redisson_lock_token:{name}.
func TokenKey(name string) string { return Prefix("redisson_lock_token", name) }

// Slot returns the Redis Cluster hash slot of key (CRC16/XMODEM of the hash
// tag, or of the whole key when it has no non-empty tag, modulo 16384).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16Table holds CRC16/XMODEM of every byte value, for crc16.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// Once returns the key of the record of request id on the primitive name,
// latchkey_once:{name}:<id>, in the slot of the primitive's other keys.
func Once(name, id string) string { return Prefix("latchkey_once", name) + ":" + id }

// Usable is the check every I/O method of every primitive makes first,
// in its caller's goroutine: it panics if ctx is nil (a programming
// error, reported before anything is sent or any goroutine started), and
// returns nil if every key and channel of a primitive called name
// shares one hash slot wherever clients put keys, and otherwise an error
// matching lockerr.ErrCrossSlot that says why and how to fix the name. It
// is the one rule of which names a primitive serves: on a single server
// every name works, keys derived as Redisson derives them; on a Redis
// Cluster (a *redis.ClusterClient, which is also what
// redis.NewUniversalClient returns for several addresses) the name must be
// non-empty and its braces must hold a non-empty hash tag if it has any,
// since the derived keys (Prefix, Suffix) hash on that tag or on the
// name, and the name itself on the whole of it. Every I/O method of every
// primitive calls it first, so a refused name never reaches Redis. It
// does no I/O.
//
// A *redis.Ring is refused whatever the name, with an error matching
// errors.ErrUnsupported: it spreads keys over independent servers, and a
// primitive's waiters would listen on a server its releases do not
// publish to.
func Usable(ctx context.Context, name string, clients ...redis.UniversalClient) error {
	flight.MustContext(ctx)
	for _, c := range clients {
		if _, ok := c.(*redis.Ring); ok {
			return fmt.Errorf("%w: latchkey does not run on a *redis.Ring, whose servers share no pub/sub: "+
				"use a *redis.Client per server (a RedLock takes several), or a Redis Cluster", errors.ErrUnsupported)
		}
		if _, ok := c.(*redis.ClusterClient); !ok {
			continue
		}
		if why := splits(name); why != "" {
			return fmt.Errorf("%w: name %q %s, so its keys would not share a cluster hash slot; "+
				"give the name a non-empty hash tag, such as {id} in \"order:{id}\"", lockerr.ErrCrossSlot, name, why)
		}
		return nil
	}
	return nil
}

// splits says why name's derived keys would land in several hash slots,
// or returns "" if they all hash alike. A name without braces is wrapped
// in a tag of its own ({name}), on which the name hashes too; a name with a
// '{' is left as it is and its keys hash on its first hash tag, the text
// between its first '{' and the next '}', when that text is not empty.
func splits(name string) string {
	i := strings.IndexByte(name, '{')
	switch {
	case name == "":
		return "is empty"
	case i < 0 && strings.IndexByte(name, '}') >= 0:
		return "has a '}' but no '{'"
	case i < 0:
		return ""
	}
	if j := strings.IndexByte(name[i+1:], '}'); j <= 0 {
		return "has a '{' without a non-empty hash tag after it"
	}
	return ""
}

// MustClient panics, naming pkg, if c is nil or a nil pointer of a client
// type (a constructor's unchecked error, such as a *redis.Client that is
// nil): a programming error, caught in New before any call can reach a
// goroutine of the library, where a panic could not be recovered.
func MustClient(pkg string, c redis.UniversalClient) {
	if why := NilClient(c); why != "" {
		panic(pkg + ": New: " + why)
	}
}

// NilClient says what is nil about c ("nil client", "nil *redis.Client"),
// or returns "" if c is a client.
func NilClient(c redis.UniversalClient) string {
	if c == nil {
		return "nil client"
	}
	if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Sprintf("nil %T", c)
	}
	return ""
}
