// Package scripts holds latchkey's Lua: every script that latchkey runs
// on Redis, one per operation, and the fragments they are composed from.
// It is for operators who want to read what runs on their servers and for
// ports of latchkey to other languages; Go programs use the primitives,
// which run these scripts through latchkey's own runner.
//
// Each *.lua file is a script, named as latchkey loads it; its header
// names its KEYS, its ARGV and its return values. A header line
//
//	-- uses fragment/<name>.lua
//
// (several may follow, in order) puts fragment/<name>.lua before the
// script, after the fragments that one uses itself, each fragment once:
// Redis scripts cannot include one another, so code that two scripts
// share is written once, in a fragment, whose header says what it defines
// and which KEYS and ARGV it reads. fragment/once.lua is the request
// record: a script that uses it takes one more key and one more argument,
// last, which it removes before anything else reads KEYS or ARGV.
//
// The scripts of the queued primitives (mutex, fair lock, semaphore,
// permit semaphore) take the same inputs first (fragment/inputs.lua), and
// their own from ARGV[6]:
//
//	ARGV[1] now: ms since the epoch, the client's clock
//	ARGV[2] PUBLISH or SPUBLISH
//	ARGV[3] how long a queue entry lives unless its waiter attempts again,
//	        ms (the fair lock: a latchkey waiter's liveness timeout)
//	ARGV[4] grace, ms: how long a grant waits for its waiter to take it
//	ARGV[5] "1" if PUBLISH counts every receiver of a Hub's channel (a
//	        single server, or sharded pub/sub), else "0"
//
// What latchkey sends is each script composed with its fragments, without
// comments, and without the functions of its fragments that the script
// never calls (each function defined costs the server on every call).
// MANIFEST lists every script as sent: its SHA-1 (the name EVALSHA and
// SCRIPT EXISTS use), its code lines, the functions it defines, and the
// fragments it is made of. latchkey's CLI prints the text itself:
//
//	latchkey lua NAME
//
// A test of latchkey's runner fails when MANIFEST differs from what the
// scripts make, and
//
//	go test ./internal/scripts -run Manifest -update
//
// rewrites it.
package scripts

import "embed"

// FS holds the scripts (*.lua) and the fragments (fragment/*.lua).
//
//go:embed *.lua fragment/*.lua
var FS embed.FS
