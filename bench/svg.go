package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Charts are written by hand as plain SVG 1.1: no dependency, and they
// render in any browser and on GitHub.

var palette = []string{"#1b9e77", "#d95f02", "#e7a31b", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#666666"}

type series struct {
	Name  string
	Color string
	Hist  []int
}

type svgDoc struct{ b strings.Builder }

func newSVG(w, h int) *svgDoc {
	d := &svgDoc{}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&d.b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	return d
}

func (d *svgDoc) text(x, y float64, anchor, s string, extra ...string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n",
		x, y, anchor, strings.Join(extra, " "), html.EscapeString(s))
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, style string) {
	fmt.Fprintf(&d.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`+"\n", x1, y1, x2, y2, style)
}

func (d *svgDoc) String() string { return d.b.String() + "</svg>\n" }

// distChart draws one line per series: the share of samples in each
// logarithmic histogram bucket (see histEdge).
func distChart(title, what string, ss []series) string {
	const (
		w, h                     = 760, 380
		left, right, top, bottom = 60.0, 170.0, 40.0, 50.0
	)
	pw, ph := w-left-right, h-top-bottom
	ymax := 0.0
	for _, s := range ss {
		for _, n := range s.Hist {
			ymax = max(ymax, pct(n, s.Hist))
		}
	}
	ymax = max(10, math.Ceil(ymax/10)*10)
	x := func(i float64) float64 { return left + i*pw/histBuckets }
	y := func(v float64) float64 { return top + ph - v/ymax*ph }

	d := newSVG(w, h)
	d.text(w/2, 22, "middle", title, `font-size="15" font-weight="bold"`)
	for v := 0.0; v <= ymax; v += ymax / 5 {
		d.line(left, y(v), left+pw, y(v), `stroke="#ddd"`)
		d.text(left-6, y(v)+4, "end", fmt.Sprintf("%.0f%%", v))
	}
	labels := []string{"10µs", "100µs", "1ms", "10ms", "100ms", "1s", "10s"}
	for i, l := range labels {
		xi := x(float64(i * histPerDecade))
		d.line(xi, top, xi, top+ph, `stroke="#ddd"`)
		d.text(xi, top+ph+18, "middle", l)
	}
	d.line(left, top+ph, left+pw, top+ph, `stroke="black"`)
	d.line(left, top, left, top+ph, `stroke="black"`)
	d.text(left+pw/2, h-10, "middle", what+" (log scale); y: share of samples per bucket")
	for k, s := range ss {
		var pts []string
		for i, n := range s.Hist {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(i)+0.5), y(pct(n, s.Hist))))
		}
		fmt.Fprintf(&d.b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n",
			s.Color, strings.Join(pts, " "))
		ly := top + 10 + float64(k)*20
		d.line(left+pw+15, ly, left+pw+35, ly, `stroke="`+s.Color+`" stroke-width="3"`)
		d.text(left+pw+40, ly+4, "start", s.Name)
	}
	return d.String()
}

func pct(n int, all []int) float64 {
	total := 0
	for _, v := range all {
		total += v
	}
	if total == 0 {
		return 0
	}
	return float64(n) * 100 / float64(total)
}

type bar struct {
	Label string
	Value float64
	Text  string // shown after the bar
	Color string
}

// barChart draws horizontal bars scaled to limit (the largest value when
// limit is 0), with an optional dashed marker line at mark.
func barChart(title string, bars []bar, limit, mark float64, markLabel string) string {
	const (
		w           = 760
		left, right = 150.0, 150.0
		top, rowH   = 44.0, 30.0
	)
	h := int(top + rowH*float64(len(bars)) + 30)
	pw := w - left - right
	for _, b := range bars {
		limit = max(limit, b.Value)
	}
	if limit <= 0 {
		limit = 1
	}
	d := newSVG(w, h)
	d.text(w/2, 22, "middle", title, `font-size="15" font-weight="bold"`)
	for i, b := range bars {
		y := top + float64(i)*rowH
		bw := b.Value / limit * pw
		fmt.Fprintf(&d.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			left, y, bw, rowH-8, b.Color)
		d.text(left-8, y+rowH/2, "end", b.Label)
		d.text(left+bw+6, y+rowH/2, "start", b.Text)
	}
	bottom := top + rowH*float64(len(bars))
	d.line(left, top-4, left, bottom, `stroke="black"`)
	if mark > 0 {
		mx := left + mark/limit*pw
		d.line(mx, top-8, mx, bottom, `stroke="#c00" stroke-dasharray="5,4"`)
		d.text(mx, bottom+16, "middle", markLabel, `fill="#c00"`)
	}
	return d.String()
}
