// Package chaos is latchkey's fault-injection suite. It has no API: its
// tests start their own redis-server processes (through
// internal/redistest), put an in-process fault proxy between every
// contending client and its server, inject faults (latency, blackholes,
// reset connections, CLIENT KILL of normal and pub/sub connections, SCRIPT
// FLUSH, SIGSTOP of a server, restarts with and without persistence,
// master/replica and cluster failovers), record the call and return of
// every operation on one monotonic clock, and check the histories: directly
// (never two holders unless the earlier one was told of its loss first,
// fencing tokens strictly increase, permits never exceed the limit, no
// waiter blocked past its bound once a fault heals) and for linearizability
// with porcupine.
//
// Run it from the repository root with
//
//	go -C chaos test ./...
//
// The seed is fixed (1) unless -chaos.seed or CHAOS_SEED says otherwise;
// -chaos.scale (or CHAOS_SCALE) multiplies the durations of the soak tests,
// and -short shrinks them for a quick run. The last line the suite prints is
//
//	chaos: <N> acquisitions, <V> violations, <L> losses signalled, <F> faults injected
//
// The tests are named after the reliability test table (T02, T08, ...) of
// the project's reliability notes.
package chaos
