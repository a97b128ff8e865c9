// Package keys derives Redis key and channel names the way Redisson does, so
// that every key and channel of one primitive lands in one cluster hash slot.
package keys

import "strings"

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
