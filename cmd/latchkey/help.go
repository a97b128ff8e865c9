package main

import (
	"flag"
	"fmt"
	"strings"
)

// help makes fs's -h print the command's usage line, text (its
// arguments, what it changes, an example), and its own flags; the
// connection flags are latchkey -h's.
func help(fs *flag.FlagSet, usage, text string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: latchkey [connection flags] %s\n\n%s\n", usage, strings.TrimSpace(text))
		own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		conn := false
		fs.VisitAll(func(f *flag.Flag) {
			if connFlag[f.Name] {
				conn = true
			} else {
				own.Var(f.Value, f.Name, f.Usage)
			}
		})
		if conn {
			fmt.Fprintf(w, "\nFlags (the connection flags, latchkey -h lists them, may come here too):\n")
		}
		own.SetOutput(w)
		own.PrintDefaults()
	}
}

// connFlag are the names of the connection flags (see connFlags.register).
var connFlag = map[string]bool{"redis": true, "cluster": true, "sentinel-master": true, "user": true, "password": true, "timeout": true}

const inspectHelp = `
Shows each NAME's kind, TTL, holders (their fencing token, their process,
how long ago their lease was renewed), waiters (alive or dead), permits,
count, leader. Reads only: changes nothing.

NAME is the synchronizer's name as the services give it (a Redisson
getLock("orders") is orders). Exit status 3 if nothing is under a NAME.

Example:
  latchkey -redis redis-1:6379 inspect orders:{42}`

const lsHelp = `
Lists the synchronizers whose names match PATTERN (a Redis glob: * ? [a-z]
\x; default *), one row each, printed as they are found: one SCAN pass over
each master, reading little of any key that is no synchronizer's. A lock
whose own key is gone but whose dead waiters' queue is left is listed too.
Reads only: changes nothing.

-timeout bounds each round trip (each SCAN call, each batch of keys
sifted or read), not the listing: a keyspace of a million keys takes as
long as it takes. A round trip past -timeout, or a master that fails, ends
that master's listing: the rows found so far are printed, stderr says what
is missing, and the exit status is 7 (partial).

Example:
  latchkey -cluster -redis node-1:7000 ls 'orders:*'`

const watchHelp = `
Follows NAME: prints its state, then a line for each change as it
happens, each release it hears whose hold no look saw, each force-unlock,
each hold that runs down unrenewed, and what it may have missed. Reads
only: changes nothing. It ends on Ctrl-C.

It looks every -every, on every message of NAME's channels, and when a
TTL runs out. A fair lock's releases go to each waiter's own channel:
watch hears them all where patterns work (one server, or a cluster without
sharded pub/sub), and on a Redis 7 cluster those of the waiters queued at
its latest look. A release with nobody queued publishes nothing: a hold
taken and released between two looks then shows only in the fencing
counter ("may have missed holds": latchkey's holders draw a token at each
acquisition; a Java client's RLock draws none and stays unseen).

Example:
  latchkey watch -every 1s orders:{42}`

const unlockHelp = `
Force-unlocks NAME, a mutex, fair lock or read-write lock, whoever holds
it: its holds are deleted, and the waiters are told as a release tells
them (latchkey's first waiter is granted the lock, Redisson's wake up).
The question names each holder's host and pid (from its process record).
The old holder is not stopped: a latchkey holder learns within about a
second (its Done closes, Err says force-unlocked; a client that polls
learns at its next renewal, within a third of its lease), a Java client
never does: its watchdog stops at its next renewal. Exit status 4 if
nobody holds it, 6 if NAME is no lock.

Example:
  latchkey unlock -yes orders:{42}`

const evictHelp = `
Takes WAITER (its id as inspect shows it) out of NAME's queue, a mutex's,
fair lock's, semaphore's, permit semaphore's or read-write lock's waiting
writers, as if it had given up: whoever it held back moves up, and the
first in line is told. For a waiter that died queued. The waiter itself
is not told: a live one queues again at its next attempt. Exit status 3
if no such waiter is queued.

Example:
  latchkey evict orders:{42} 0192b4c2-8d6e-8f3a-9c1d-2e3f4a5b6c7d:17`

const releaseHelp = `
Gives permits back as their holders' own release would, serving the
waiters in line: -n N to a semaphore (whose permits have no ids), or
-id ID one permit of a permit semaphore (its id as inspect shows it). For
holders that died without releasing. A plain integer, which may be a
latch, wants -kind semaphore. Exit status 3 if no permit ID is held, 6 if
NAME is of another kind.

Example:
  latchkey release -n 2 -kind semaphore jobs:{eu}`

const countdownHelp = `
Counts latch NAME down -n times (1), stopping at zero, as CountDown does:
at zero the latch is deleted and every waiter released. For counting
processes that died. A plain integer, which may be a semaphore, wants
-kind countdownlatch. Exit status 3 if no latch is there, 6 if NAME is of
another kind.

Example:
  latchkey countdown -n 3 -kind countdownlatch batch:{7}`

const clearHelp = `
Deletes every key of NAME, a lock nobody holds: what its dead waiters left
queued (those keys have no TTL) and its fencing counter. Live waiters are
told to queue again. Exit status 6 if the lock is held (force-unlock it
first), 3 if nothing is there.

Example:
  latchkey clear orders:{42}`

const versionHelp = `
Prints the version latchkey was built from, the Go release and go-redis's
version. Takes no arguments, reads nothing from Redis.

Example:
  latchkey version`

const luaHelp = `
Without NAME, lists every Lua script latchkey sends, one a line, as
scripts/MANIFEST does: its name, the SHA-1 of what is sent (what EVALSHA
names it by, and SCRIPT EXISTS looks for), its code lines, the functions
it defines per call, and the fragments it is made of, in order. With
NAME, prints that script exactly as it is sent to Redis: its fragments
put in, its comments and the functions it never calls taken out. Reads
nothing from Redis and changes nothing. Exit status 2 if no script is
called NAME (close names are listed).

Example:
  latchkey lua mutex_acquire`

const deadlocksHelp = `
Finds the processes that wait for each other. It lists the synchronizers
matching PATTERN (default *) as ls does, and draws the wait-for graph:
a node is a process, the UUID that is the first half of every owner id it
makes (<uuid>:<n>: latchkey's process, as its record names it with host
and pid; a Redisson client, a JVM's usually); an edge goes from each live
queued waiter's process to the process that holds what it waits for. Each
cycle prints with each process's host and pid, what it holds and waits
for, and the command that breaks it: the force-unlock of one of its locks
(one whose next in line is in the cycle, a latchkey holder's, which is
told, before a Java one's), and whose hold that ends. It looks again after
-settle and keeps only the cycles whose holds and waits are the same
calls'. Reads only: changes nothing. Exit status 8 if it finds a cycle, 7
if the listing was partial and it found none.

What it cannot see: a semaphore's holders (nothing records them: a cycle
through a semaphore is "possible", if the process after it holds a
permit); a process's goroutines or threads apart (a process whose one
call holds and whose other call waits, unrelated, closes a cycle too: a
deadlock's holds never end, so -settle, and then the holds' ages, tell);
waiters with no queue entry (Java clients' RLock and semaphore waiters,
which only listen; readers behind a writer); Redisson's place in a
latchkey queue and a permit semaphore's waiters, whose entries name no
process; latches, which nobody holds.

Example:
  latchkey -cluster -redis node-1:7000 deadlocks 'orders:*'`
