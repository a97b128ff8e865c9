package main

// globMatch reports whether s matches pattern as Redis' SCAN MATCH and
// KEYS match it, byte by byte: * any run of bytes, ? one byte, [abc] one
// of a set, with ranges (a-z) and ^ to negate it, and \ quoting the byte
// after it. ls matches on its side of the wire, so that one pass over the
// keyspace finds both the names and the queues their waiters left.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0 // the latest *, and where in s its match would end
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				star, mark = p, i
				p++
				continue
			case '?':
				p++
				i++
				continue
			case '[':
				if ok, end := matchSet(pattern, p, s[i]); ok {
					p, i = end, i+1
					continue
				}
			case '\\':
				if p+1 < len(pattern) {
					c = pattern[p+1]
					if c == s[i] {
						p, i = p+2, i+1
						continue
					}
					break
				}
				fallthrough
			default:
				if c == s[i] {
					p++
					i++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the latest * match one byte more, and try again from there.
		mark++
		p, i = star+1, mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchSet matches b against the set that opens at pattern[open] ('['),
// and returns whether it matched and where the pattern goes on after the
// set. A set that the pattern ends inside ends with the pattern, as in
// Redis.
func matchSet(pattern string, open int, b byte) (bool, int) {
	p := open + 1
	negate := p < len(pattern) && pattern[p] == '^'
	if negate {
		p++
	}
	hit := false
	for p < len(pattern) && pattern[p] != ']' {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			p++
			hit = hit || pattern[p] == b
		case p+2 < len(pattern) && pattern[p+1] == '-' && pattern[p+2] != ']':
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			hit = hit || lo <= b && b <= hi
			p += 2
		default:
			hit = hit || pattern[p] == b
		}
		p++
	}
	if p < len(pattern) {
		p++ // the ]
	}
	return hit != negate, p
}
