package scripts

func init() {
	sample("SemAcquire", func() Request { return SemAcquire{}.Request() })
	sample("SemRelease", func() Request { return SemRelease{}.Request() })
	sample("SemDequeue", func() Request { return SemDequeue{}.Request() })
	sample("SemSet", func() Request { return SemSet{}.Request() })
	sample("SemDelete", func() Request { return SemDelete{}.Request() })
	sample("SemRestock", func() Request { return SemRestock{}.Request() })
	sample("SemDrain", func() Request { return SemDrain{}.Request() })
	sample("SemCount", func() Request { return SemCount{}.Request() })
	sample("SemExpire", func() Request { return SemExpire{}.Request() })
	sample("SemTTL", func() Request { return SemTTL{}.Request() })
}
