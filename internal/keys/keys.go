// Package keys derives Redis key and channel names the way Redisson does, so
// that every key and channel of one primitive lands in one cluster hash slot.
package keys

import (
	"fmt"
	"strings"
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

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Once returns the key of the record of request id on the primitive name,
// latchkey_once:{name}:<id>, in the slot of the primitive's other keys.
func Once(name, id string) string { return Prefix("latchkey_once", name) + ":" + id }

// Check returns an error if name cannot keep every key and channel of a
// primitive in one cluster hash slot under Redisson's naming rules: a name
// with a '{' must hold a non-empty hash tag (a '{' followed later by a '}'
// with something between them), since the prefixed keys then hash on that
// tag alone; and a name with a '}' but no '{' would be wrapped into a tag
// that ends early. Such names work on a single server, but a cluster
// answers CROSSSLOT, so they are refused everywhere.
func Check(name string) error {
	i := strings.IndexByte(name, '{')
	if i < 0 {
		if strings.IndexByte(name, '}') >= 0 {
			return fmt.Errorf("name %q has a '}' but no '{': its keys would not share a cluster hash slot", name)
		}
		return nil
	}
	if j := strings.IndexByte(name[i+1:], '}'); j <= 0 {
		return fmt.Errorf("name %q has a '{' without a non-empty hash tag after it: its keys would not share a cluster hash slot", name)
	}
	return nil
}
