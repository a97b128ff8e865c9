package scripts

func init() {
	sample("RWReadAcquire", func() Request { return RWReadAcquire{}.Request() })
	sample("RWWriteAcquire", func() Request { return RWWriteAcquire{}.Request() })
	sample("RWRelease", func() Request { return RWRelease{}.Request() })
	sample("RWWriteWithdraw", func() Request { return RWWriteWithdraw{}.Request() })
}
