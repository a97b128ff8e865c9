package scripts

func init() {
	sample("LatchTrySet", func() Request { return LatchTrySet{Channel: "c"}.Request() })
	sample("LatchCountDown", func() Request { return LatchCountDown{Channel: "c"}.Request() })
}
