package scripts

func init() {
	sample("PesAcquire", func() Request { return PesAcquire{}.Request() })
	sample("PesRelease", func() Request { return PesRelease{IDs: []string{"a", "b"}}.Request() })
	sample("PesDequeue", func() Request { return PesDequeue{}.Request() })
	sample("PesSet", func() Request { return PesSet{}.Request() })
	sample("PesDelete", func() Request { return PesDelete{}.Request() })
	sample("PesCount", func() Request { return PesCount{}.Request() })
	sample("PesLease", func() Request { return PesLease{End: 1}.Request() })
}
