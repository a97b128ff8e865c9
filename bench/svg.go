package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Charts are written by hand as plain SVG 1.1: no dependency, and they
// render in any browser and on GitHub. Every impl has one colour in every
// chart (Impl.Color); a run on miniredis is marked on every chart.

// chartWidth is the width of every chart; plots leave room for labels.
const chartWidth = 760

type svgDoc struct {
	b    strings.Builder
	w, h float64
	mini bool
}

// newSVG starts a chart with its title and, for a miniredis run, a mark
// that its figures are not comparable: a red label under the title and a
// large pale watermark across the plot.
func newSVG(w, h float64, title string, mini bool) *svgDoc {
	d := &svgDoc{w: w, h: h, mini: mini}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" `+
		`font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&d.b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", w, h)
	d.text(w/2, 20, "middle", title, `font-size="15" font-weight="bold"`)
	if mini {
		fmt.Fprintf(&d.b, `<rect x="%.1f" y="25" width="440" height="17" fill="#fee" stroke="#d00"/>`+"\n", w/2-220)
		d.text(w/2, 38, "middle", "miniredis run: figures NOT comparable to a real Redis", `fill="#d00" font-weight="bold"`)
	}
	return d
}

func (d *svgDoc) text(x, y float64, anchor, s string, extra ...string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n",
		x, y, anchor, strings.Join(extra, " "), html.EscapeString(s))
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, style string) {
	fmt.Fprintf(&d.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`+"\n", x1, y1, x2, y2, style)
}

func (d *svgDoc) rect(x, y, w, h float64, fill string) {
	fmt.Fprintf(&d.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, fill)
}

// String returns the document, with a miniredis run's watermark drawn
// over everything.
func (d *svgDoc) String() string {
	if d.mini {
		fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="56" font-weight="bold" `+
			`fill="#d00" fill-opacity="0.13" transform="rotate(-12 %.1f %.1f)">NOT COMPARABLE</text>`+"\n",
			d.w/2, d.h/2+20, d.w/2, d.h/2)
	}
	return d.b.String() + "</svg>\n"
}

// An axis maps values to a span of pixels, linearly from 0 or
// logarithmically, and says where its ticks go.
type axis struct {
	log      bool
	lo, hi   float64 // the values at the ends; lo > 0 on a log axis
	from, to float64 // pixels
	label    func(float64) string
}

// linearAxis runs from 0 to a round value at or above max.
func linearAxis(max, from, to float64, label func(float64) string) axis {
	step := niceStep(max / 5)
	return axis{lo: 0, hi: math.Max(step, math.Ceil(max/step-1e-9)*step), from: from, to: to, label: label}
}

// logAxis runs over whole decades covering [min, max].
func logAxis(min, max, from, to float64, label func(float64) string) axis {
	lo := math.Pow(10, math.Floor(math.Log10(min)))
	hi := math.Pow(10, math.Ceil(math.Log10(max)))
	if hi <= lo {
		hi = lo * 10
	}
	return axis{log: true, lo: lo, hi: hi, from: from, to: to, label: label}
}

func (a axis) pos(v float64) float64 {
	f := (v - a.lo) / (a.hi - a.lo)
	if a.log {
		f = math.Log10(math.Max(v, a.lo)/a.lo) / math.Log10(a.hi/a.lo)
	}
	return a.from + f*(a.to-a.from)
}

// ticks returns round values: multiples of a step of 1, 2 or 5 times a
// power of ten on a linear axis, the decades on a log one (and 2 and 5
// times each, over two decades or less).
func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		// Two decades or less get 2 and 5 between the decades too.
		steps := []float64{1}
		if a.hi/a.lo <= 100.0001 {
			steps = []float64{1, 2, 5}
		}
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			for _, m := range steps {
				if m*v <= a.hi*1.0001 {
					out = append(out, m*v)
				}
			}
		}
		return out
	}
	step := niceStep(a.hi / 5)
	for i := 0.0; i*step <= a.hi*1.0001; i++ {
		out = append(out, i*step)
	}
	return out
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is
// at least x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// durLabel labels a duration in milliseconds with 3 significant digits at
// most: 10µs, 265µs, 12.1ms, 2.5s.
func durLabel(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return sig3(ms*1000) + "µs"
	case ms < 1000:
		return sig3(ms) + "ms"
	}
	return sig3(ms/1000) + "s"
}

// sig3 prints v with 3 significant digits, and no trailing zeros.
func sig3(v float64) string {
	if v <= 0 {
		return trimNum(v)
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(v))))
	s := fmt.Sprintf("%.*f", decimals, v)
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// pctLabel labels a share given in percent: 100%, 1%, 0.01%.
func pctLabel(p float64) string { return trimNum(p) + "%" }

// trimNum prints v with no more digits than it needs; large values get
// thousands separators.
func trimNum(v float64) string {
	if v >= 1000 && v == math.Trunc(v) {
		s := fmt.Sprintf("%.0f", v)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
