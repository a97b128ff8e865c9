package scripts

func init() {
	for _, name := range []string{"lock_renew", "lock_take", "pes_renew", "rw_renew_read"} {
		sample("Renewal/"+name, func() Request { return Renewal(Get(name), nil, nil) })
	}
}
