// Package keys derives Redis key and channel names the way Redisson does, so
// that every key and channel of one primitive lands in one cluster hash slot.
package keys

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

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

// Once returns the record of request id on the primitive name,
// latchkey_once:{name}:<id>, in the slot of the primitive's other keys. A
// ':' in id comes out as '.', so that everything up to the last ':' is the
// name's part (see OnceLane).
func Once(name, id string) string { return once(name, id, -1) }

// requests numbers the records NewOnce makes.
var requests atomic.Int64

// NewOnce returns a fresh record of a request on the primitive name, as
// Once makes it, in one allocation: a record names its request within
// this process (the runner puts it on a lane of the client's, whose key
// holds the process's id; see OnceLane).
func NewOnce(name string) string { return once(name, "r", requests.Add(1)) }

// once is Once(name, id), with n after id when it is not negative.
func once(name, id string, n int64) string {
	pre, post := "latchkey_once:{", "}:"
	if strings.Contains(name, "{") { // Prefix's rule
		pre, post = "latchkey_once:", ":"
	}
	var digits [20]byte
	num := digits[:0]
	if n >= 0 {
		num = strconv.AppendInt(num, n, 10)
	}
	var b strings.Builder
	b.Grow(len(pre) + len(name) + len(post) + len(id) + len(num))
	b.WriteString(pre)
	b.WriteString(name)
	b.WriteString(post)
	for i := 0; i < len(id); i++ {
		if c := id[i]; c == ':' {
			b.WriteByte('.')
		} else {
			b.WriteByte(c)
		}
	}
	b.Write(num)
	return b.String()
}

// OnceLane returns the key lane, latchkey_once:{name}:<lane>, of the
// primitive that rec, a record made by Once, belongs to: in rec's slot,
// and under the same ACL key patterns.
func OnceLane(rec, lane string) string {
	return rec[:strings.LastIndexByte(rec, ':')+1] + lane
}

// OnceThen is the record of the request a call sends when the one
// recorded against rec answered that it could not apply (a fast path's
// fallback), in rec's slot.
func OnceThen(rec string) string { return rec + "+" }

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
