package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// A curve is one impl's samples for a distribution chart, sorted.
type curve struct {
	name, color string
	samples     []time.Duration
}

// ccdfChart draws, for each curve, the share of samples at least as long
// as x, with both axes logarithmic: the body of a distribution is at the
// top left, and a long tail is a line that reaches far right before it
// drops. mini marks the chart as not comparable.
func ccdfChart(title, what string, cs []curve, mini bool) string {
	const (
		h                        = 400.0
		left, right, top, bottom = 70.0, 190.0, 50.0, 50.0
	)
	cs = slices.DeleteFunc(slices.Clone(cs), func(c curve) bool { return len(c.samples) == 0 })
	if len(cs) == 0 {
		return ""
	}
	lo, hi, most := math.Inf(1), 0.0, 0
	for _, c := range cs {
		lo = math.Min(lo, math.Max(ms(c.samples[0]), 0.001))
		hi = math.Max(hi, ms(c.samples[len(c.samples)-1]))
		most = max(most, len(c.samples))
	}
	pw, ph := chartWidth-left-right, h-top-bottom
	x := logAxis(lo, math.Max(hi, lo*1.01), left, left+pw, durLabel)
	y := logAxis(math.Max(100/float64(most), 0.001), 100, top+ph, top, pctLabel)

	d := newSVG(chartWidth, h, title, mini)
	for _, v := range x.ticks() {
		d.line(x.pos(v), top, x.pos(v), top+ph, `stroke="#ddd"`)
		d.text(x.pos(v), top+ph+16, "middle", x.label(v))
	}
	for _, v := range y.ticks() {
		d.line(left, y.pos(v), left+pw, y.pos(v), `stroke="#ddd"`)
		d.text(left-6, y.pos(v)+4, "end", y.label(v))
	}
	d.line(left, top+ph, left+pw, top+ph, `stroke="black"`)
	d.line(left, top, left, top+ph, `stroke="black"`)
	d.text(left+pw/2, h-12, "middle", what+" (log scale)")
	d.text(16, top+ph/2, "middle", "share of samples ≥ x (log)", fmt.Sprintf(`transform="rotate(-90 16 %.1f)"`, top+ph/2))
	for k, c := range cs {
		// A step: the share holds until the next sample, then drops.
		var pts []string
		for i, p := range ccdfPoints(c.samples, x) {
			if i > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%s", x.pos(p[0]), strings.Split(pts[len(pts)-1], ",")[1]))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.pos(p[0]), y.pos(p[1])))
		}
		fmt.Fprintf(&d.b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n",
			c.color, strings.Join(pts, " "))
		ly := top + 8 + float64(k)*32
		d.line(left+pw+12, ly, left+pw+32, ly, `stroke="`+c.color+`" stroke-width="3"`)
		d.text(left+pw+38, ly+4, "start", c.name)
		dist := distOf(c.samples)
		d.text(left+pw+38, ly+18, "start", "p50 "+durLabel(dist.P50)+", p99 "+durLabel(dist.P99), `font-size="10" fill="#555"`)
	}
	return d.String()
}

// ccdfPoints returns (x in ms, share in percent) points of the curve: on a
// grid of 300 steps over x's span, and at each of the 50 longest samples,
// so that the tail is drawn sample by sample.
func ccdfPoints(s []time.Duration, x axis) [][2]float64 {
	n := len(s)
	share := func(i int) float64 { return float64(n-i) * 100 / float64(n) }
	var pts [][2]float64
	for g := 0; g <= 300; g++ {
		v := x.lo * math.Pow(x.hi/x.lo, float64(g)/300)
		i, _ := slices.BinarySearch(s, time.Duration(v*float64(time.Millisecond)))
		if i >= n-50 || i >= n {
			break
		}
		pts = append(pts, [2]float64{v, share(i)})
	}
	for i := max(0, n-50); i < n; i++ {
		pts = append(pts, [2]float64{ms(s[i]), share(i)})
	}
	return pts
}

// halo keeps a label readable where a target's line crosses it.
const halo = `paint-order="stroke" stroke="white" stroke-width="3"`

// A bar is one impl's figure in a bar chart. Inner, if positive, is a
// second figure drawn as a thin dark bar inside (user-side utilization).
type bar struct {
	label, text, color string
	value, inner       float64
}

// A barSpec describes a bar chart.
type barSpec struct {
	title string
	bars  []bar
	log   bool                 // a log axis, for figures that span decades
	floor float64              // the axis reaches at least this value (100 for percentages)
	tick  func(float64) string // tick labels
	marks []mark               // targets drawn as dashed lines
	note  string               // a line under the axis
	mini  bool
}

// barChart draws horizontal bars on an axis with round ticks, and the
// targets that apply to this chart as labelled dashed lines. It returns ""
// for fewer than two bars: a single bar compares nothing.
func barChart(s barSpec) string {
	const (
		left, right, top, rowH = 150.0, 150.0, 52.0, 28.0
	)
	bars := slices.DeleteFunc(slices.Clone(s.bars), func(b bar) bool { return b.value <= 0 && s.log })
	if len(bars) < 2 {
		return ""
	}
	pw := chartWidth - left - right
	hi, lo := s.floor, math.Inf(1)
	for _, b := range bars {
		hi, lo = math.Max(hi, b.value), math.Min(lo, b.value)
	}
	for _, m := range s.marks {
		hi, lo = math.Max(hi, m.value), math.Min(lo, m.value)
	}
	a := linearAxis(hi, left, left+pw, s.tick)
	if s.log {
		a = logAxis(lo, hi, left, left+pw, s.tick)
	}
	bottom := top + rowH*float64(len(bars))
	h := bottom + 40 + 16*float64(len(s.marks))
	if s.note != "" {
		h += 16
	}
	d := newSVG(chartWidth, h, s.title, s.mini)
	for _, v := range a.ticks() {
		d.line(a.pos(v), top-4, a.pos(v), bottom, `stroke="#e4e4e4"`)
		d.text(a.pos(v), bottom+16, "middle", a.label(v), `font-size="11"`)
	}
	for i, b := range bars {
		y := top + float64(i)*rowH
		d.rect(left, y, a.pos(b.value)-left, rowH-8, b.color)
		if b.inner > 0 {
			d.rect(left, y+(rowH-8)/2-2, a.pos(b.inner)-left, 4, "#222")
		}
		d.text(left-8, y+rowH/2, "end", b.label)
		d.text(a.pos(b.value)+6, y+rowH/2, "start", b.text, halo)
	}
	d.line(left, top-4, left, bottom, `stroke="black"`)
	d.line(left, bottom, left+pw, bottom, `stroke="black"`)
	y := bottom + 34
	for _, m := range s.marks {
		mx := a.pos(m.value)
		d.line(mx, top-8, mx, bottom, `stroke="#c00" stroke-width="1.5" stroke-dasharray="6,4"`)
		d.text(math.Min(math.Max(mx, left+120), left+pw), y, "middle", "┆ "+m.label, `fill="#c00" font-size="11"`)
		y += 16
	}
	if s.note != "" {
		d.text(left, y, "start", s.note, `font-size="11" fill="#555"`)
	}
	return d.String()
}
