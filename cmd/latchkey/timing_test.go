package main

import (
	"strconv"
	"time"
)

// window bounds an age the CLI reports when the test staged it as base
// at the instant at (a TTL set, a deadline written): the age is base at
// least, however slow the machine, and at most base plus the time the
// test has seen pass since, which a loaded machine's scheduler may make
// seconds. A millisecond more allows for the ms that Redis and UnixMilli
// truncate.
func window(base time.Duration, at time.Time) (lo, hi time.Duration) {
	return base, base + time.Since(at) + time.Millisecond
}

// inSeconds reports whether s, seconds as the CLI prints them (rounded,
// see rounded), may be an age in [lo, hi].
func inSeconds(s int, lo, hi time.Duration) bool {
	d := time.Duration(s) * time.Second
	return d >= lo.Round(time.Second) && d <= hi.Round(time.Second)
}

// atoi is strconv.Atoi for digits a regexp matched: -1 if they overflow.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
