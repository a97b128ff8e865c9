package scripts

func init() {
	sample("ElectionLeader", func() Request { return ElectionLeader{}.Request() })
	sample("ElectionProclaim", func() Request { return ElectionProclaim{}.Request() })
	sample("ElectionResign", func() Request { return ElectionResign{}.Request() })
}
