package scripts

func init() {
	sample("FairAcquire", func() Request { return FairAcquire{}.Request() })
	sample("FairRelease", func() Request { return FairRelease{}.Request() })
	sample("FairDequeue", func() Request { return FairDequeue{}.Request() })
	sample("FairForce", func() Request { return FairForce{}.Request() })
	sample("FairDelete", func() Request { return FairDelete{}.Request() })
}
