package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// instrRows is the scenario's table: a row per case and impl, with the
// mean over the rounds and the ratio to the yardstick's mean.
func instrRows(rs []*Result) ([]string, [][]string) {
	heads := []string{"case", "impl", "instructions/op", "× " + instrYardstick, "per window", "cmds/op", "sent per op"}
	var rows [][]string
	for _, c := range instrCases {
		var ref float64
		for _, r := range rs {
			if r.Impl == instrYardstick {
				ref = instrMean(r, c.name)
			}
		}
		for _, r := range rs {
			v := instrMean(r, c.name)
			if v <= 0 {
				continue
			}
			ratio := "-"
			if ref > 0 {
				ratio = fmt.Sprintf("%.2f", v/ref)
			}
			var each []string
			var cmds float64
			var sent map[string]float64
			for _, w := range r.Windows {
				if w.Case == c.name {
					each = append(each, kInstr(w.PerOp))
					cmds += w.Commands
					sent = w.Sent
				}
			}
			rows = append(rows, []string{c.name, r.Impl, kInstr(v), ratio, strings.Join(each, ", "),
				fmt.Sprintf("%.2f", cmds/float64(len(each))), sentString(sent)})
		}
	}
	return heads, rows
}

// instrMean returns r's mean instructions per op in case c over its
// windows, 0 when it has none.
func instrMean(r *Result, c string) float64 {
	var sum float64
	n := 0
	for _, w := range r.Windows {
		if w.Case == c {
			sum += w.PerOp
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func kInstr(v float64) string { return fmt.Sprintf("%.1fk", v/1000) }

// sentString lists the commands sent per op, most first (the last
// window's).
func sentString(sent map[string]float64) string {
	names := slices.Collect(maps.Keys(sent))
	slices.SortFunc(names, func(a, b string) int {
		if sent[a] != sent[b] {
			if sent[a] > sent[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %s", n, num2(sent[n])))
	}
	return strings.Join(parts, ", ")
}

// num2 formats a count per op: two decimals, or three below 0.01, less
// trailing zeros.
func num2(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v < 0.01 {
		s = fmt.Sprintf("%.3f", v)
	}
	return strings.TrimSuffix(strings.TrimSuffix(s, "0"), ".0")
}
