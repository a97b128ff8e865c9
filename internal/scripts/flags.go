package scripts

// A script's yes-or-no inputs go as the characters of one argument, not
// as an argument each: every argument costs the server about a thousand
// instructions to parse, hand to Lua and collect, more than the script
// spends reading a character (string.byte). The strings are made once.

// yesNo is "1" or "0".
func yesNo(v bool) byte {
	if v {
		return '1'
	}
	return '0'
}

// acquireFlags[reentry][queued][try][heard] is mutex_acquire.lua's ARGV[9].
var acquireFlags = func() func(reentry string, queued, try, heard bool) string {
	var table [3][2][2][2]string
	for r := range 3 {
		for q := range 2 {
			for t := range 2 {
				for h := range 2 {
					table[r][q][t][h] = string([]byte{'0' + byte(r), yesNo(q == 1), yesNo(t == 1), yesNo(h == 1)})
				}
			}
		}
	}
	return func(reentry string, queued, try, heard bool) string {
		r := 0
		if len(reentry) == 1 && reentry[0] >= '0' && reentry[0] <= '2' {
			r = int(reentry[0] - '0')
		}
		return table[r][b2i(queued)][b2i(try)][b2i(heard)]
	}
}()

// releaseFlags(reentrant, yield) is mutex_release.lua's ARGV[8].
func releaseFlags(reentrant bool, yield Yield) string {
	switch {
	case reentrant && yield == YieldLock:
		return "11"
	case reentrant:
		return "10"
	case yield == YieldLock:
		return "01"
	}
	return "00"
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
