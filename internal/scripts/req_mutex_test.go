package scripts

func init() {
	sample("MutexAcquire", func() Request { return MutexAcquire{}.Request() })
	sample("MutexTakeFree", func() Request { return MutexTakeFree{}.Request() })
	sample("MutexTakeOwner", func() Request { return MutexTakeOwner{}.Request() })
	sample("MutexRelease", func() Request { return MutexRelease{}.Request() })
	sample("MutexReleaseAlone", func() Request { return MutexReleaseAlone{}.Request() })
	sample("MutexDequeue", func() Request { return MutexDequeue{}.Request() })
	sample("MutexForce", func() Request { return MutexForce{}.Request() })
	sample("MutexDelete", func() Request { return MutexDelete{}.Request() })
}
