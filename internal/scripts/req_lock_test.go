package scripts

func init() {
	sample("LockAcquire", func() Request { return LockAcquire{}.Request() })
	sample("LockRelease", func() Request { return LockRelease{}.Request() })
	sample("LockDelete", func() Request { return LockDelete{Beside: []string{"k"}}.Request() })
	sample("LockForceRelease", func() Request { return LockForceRelease{Forced: "f"}.Request() })
}
