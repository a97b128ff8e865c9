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
		fs.VisitAll(func(f *flag.Flag) {
			if !connFlag[f.Name] {
				own.Var(f.Value, f.Name, f.Usage)
			}
		})
		fmt.Fprintf(w, "\nFlags (the connection flags, latchkey -h lists them, may come here too):\n")
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
