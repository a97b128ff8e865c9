package main

func init() {
	register(&Impl{
		Name:  "redisson",
		Color: "#e6550d",
		Kind:  KindMutex,
		Rank:  6,
		About: "the in-run Redisson yardstick, in redisson.go: Redisson's RLock protocol as its Java client " +
			"sends it for lock()/unlock() with its defaults, written from the protocol reference. Lock: " +
			"EVALSHA of the acquire script (watchdog lease 30s; renewals every 10s never fall due here), " +
			"and when held, SUBSCRIBE redisson_lock__channel:{name} and retry on each message or when " +
			"the holder's TTL runs out. Unlock: EVALSHA of the unlock script with its latch " +
			"redisson_unlock_latch:{name}:<32 hex> (TTL 20s, the top of Redisson's default 16-20s), then a " +
			"DEL of the latch that the client does not wait for: pipelined in front of the handle's next " +
			"command. Its client CPU is the Go emulation's, not a JVM's.",
		New: func(c *Conn, name string) any { return newRedissonLock(c, name) },
	})
	register(&Impl{
		Name:     instrYardstick,
		Color:    "#a63603",
		Kind:     KindMutex,
		Rank:     7,
		Optional: true,
		About: "Redisson's RFencedLock protocol, latchkey's yardstick in the instructions scenario (latchkey's " +
			"mutex always fences), in redisson.go: as redisson, but its acquire script also INCRs the token " +
			"counter redisson_lock_token:{name} (lockAndGetToken). Runs only where a scenario names it.",
		New: func(c *Conn, name string) any { return newRedissonFencedLock(c, name) },
	})
}
