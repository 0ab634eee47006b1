package report

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Plot size in pixels: readable full-width on a results page.
const (
	PlotWidth  = 1000
	PlotHeight = 600
)

var (
	white     = color.RGBA{255, 255, 255, 255}
	ink       = color.RGBA{30, 30, 30, 255}
	axisColor = color.RGBA{90, 90, 90, 255}
	gridColor = color.RGBA{228, 228, 228, 255}
	mutedInk  = color.RGBA{110, 110, 110, 255}
)

// SchedulerColor is the colour of a scheduler in every plot (the
// colour-blind-friendly tab10 blue, orange and green; the ceiling, a
// reference rather than a contender, tab10's grey).
func SchedulerColor(scheduler string) color.RGBA {
	switch scheduler {
	case Upstream:
		return color.RGBA{31, 119, 180, 255}
	case Native:
		return color.RGBA{255, 127, 14, 255}
	case Wasm:
		return color.RGBA{44, 160, 44, 255}
	case Ceiling:
		return color.RGBA{127, 127, 127, 255}
	}
	extra := []color.RGBA{{214, 39, 40, 255}, {148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}}
	var h uint32
	for _, c := range scheduler {
		h = h*31 + uint32(c)
	}
	return extra[h%uint32(len(extra))]
}

// Layout of the throughput plot; tests look inside plotArea for line colours.
var (
	throughputArea = image.Rect(80, 56, PlotWidth-220, PlotHeight-64)
	soakHeapArea   = image.Rect(90, 56, PlotWidth-220, 340)
	soakFlightArea = image.Rect(90, 396, PlotWidth-220, PlotHeight-56)
)

// PlotThroughput draws pods/s over the seconds of the measured phase for the
// successful runs of workload, one line per run: a colour per scheduler, the
// first round solid, later rounds dashed and lighter.
func PlotThroughput(w io.Writer, workload string, runs []Run) error {
	rs := plottable(workload, runs)
	if len(rs) == 0 {
		return fmt.Errorf("plot throughput of %q: no successful run with throughput samples", workload)
	}
	slices.SortStableFunc(rs, func(a, b Run) int {
		if a.Scheduler != b.Scheduler {
			if schedulerLess(a.Scheduler, b.Scheduler) {
				return -1
			}
			return 1
		}
		return a.Round - b.Round
	})
	// k is the index of a run among its scheduler's runs: it picks the style.
	ks := make([]int, len(rs))
	maxN, maxY := 1, 0.0
	for i, run := range rs {
		if i > 0 && rs[i-1].Scheduler == run.Scheduler {
			ks[i] = ks[i-1] + 1
		}
		maxN = max(maxN, len(run.Throughput))
		for _, v := range run.Throughput {
			if finite(v) {
				maxY = max(maxY, v)
			}
		}
	}
	if maxY == 0 {
		maxY = 1
	}

	c := newCanvas(PlotWidth, PlotHeight)
	xstep := niceStep(float64(maxN), 10, 1)
	ystep := niceStep(maxY*1.05, 8, 0)
	// y0 slightly below 0 keeps a line at zero clear of the axis.
	ax := axes{area: throughputArea, x0: 0, x1: ceilTo(float64(maxN), xstep), y0: -ystep * 0.05, y1: ceilTo(maxY*1.05, ystep)}
	c.title("Scheduling throughput: " + workload)
	c.frame(ax, xstep, ystep, "second of the measured phase (first second dropped)", "pods scheduled per second")

	// Later rounds first, so the first round of every scheduler stays on top.
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ks[b] - ks[a] })
	for _, i := range order {
		p := roundPen(SchedulerColor(rs[i].Scheduler), ks[i])
		pts := make([]image.Point, 0, len(rs[i].Throughput))
		for j, v := range rs[i].Throughput {
			if finite(v) {
				pts = append(pts, image.Pt(ax.px(float64(j+1)), ax.py(v)))
			}
		}
		c.polyline(ax.area, p, pts, 0)
	}

	// Legend: per scheduler its average, then a swatch per round if they fit.
	lx, ly := throughputArea.Max.X+18, throughputArea.Min.Y
	perRound := len(rs)+3*len(Summarise(rs)) <= throughputArea.Dy()/16
	for _, s := range Summarise(rs) {
		col := SchedulerColor(s.Scheduler)
		c.text(lx, ly, fmt.Sprintf("%s  avg %s/s", s.Scheduler, num(s.Average, 1)), col, 1, false)
		ly += 16
		for i, run := range rs {
			if run.Scheduler != s.Scheduler {
				continue
			}
			if !perRound && ks[i] > 1 {
				continue
			}
			p := roundPen(col, ks[i])
			c.polyline(c.img.Bounds(), p, []image.Point{{lx + 4, ly + 6}, {lx + 34, ly + 6}}, 0)
			label := fmt.Sprintf("round %d", run.Round)
			if !perRound {
				label = map[bool]string{true: "first round", false: "later rounds"}[ks[i] == 0]
			}
			c.text(lx+42, ly, label, ink, 1, false)
			ly += 16
		}
		ly += 8
	}
	return png.Encode(w, c.img)
}

// PlotSoak draws the soak: heap in use (MiB) per cycle on top, inflight events
// below; a colour per scheduler, scale phase solid, affinity phase dashed.
func PlotSoak(w io.Writer, samples []SoakSample) error {
	if len(samples) == 0 {
		return fmt.Errorf("plot soak: no samples")
	}
	results := AnalyseSoak(samples)
	minC, maxC := math.MaxInt, math.MinInt
	minH, maxH, maxF := math.Inf(1), math.Inf(-1), 1.0
	for _, s := range samples {
		minC, maxC = min(minC, s.Cycle), max(maxC, s.Cycle)
		if h := mib(s.HeapInuse); finite(h) {
			minH, maxH = min(minH, h), max(maxH, h)
		}
		if finite(s.Inflight) {
			maxF = max(maxF, s.Inflight)
		}
	}
	if math.IsInf(minH, 0) {
		minH, maxH = 0, 1
	}
	if maxH-minH < 4 { // do not magnify noise: show at least 4 MiB
		mid := (maxH + minH) / 2
		minH, maxH = mid-2, mid+2
	}
	pad := (maxH - minH) * 0.05
	minH, maxH = max(0, minH-pad), maxH+pad

	xstep := niceStep(float64(maxC-minC+1), 10, 1)
	x0, x1 := floorTo(float64(minC), xstep), ceilTo(float64(maxC), xstep)
	if x1 <= x0 {
		x1 = x0 + xstep
	}
	hstep := niceStep(maxH-minH, 6, 0)
	heap := axes{area: soakHeapArea, x0: x0, x1: x1, y0: floorTo(minH, hstep), y1: ceilTo(maxH, hstep)}
	fstep := niceStep(maxF, 3, 1)
	flight := axes{area: soakFlightArea, x0: x0, x1: x1, y0: -fstep * 0.08, y1: ceilTo(maxF, fstep)}

	c := newCanvas(PlotWidth, PlotHeight)
	c.title("Memory soak")
	c.frame(heap, xstep, hstep, "", "heap in use, MiB")
	c.frame(flight, xstep, fstep, "cycle", "inflight events")

	markers := len(samples) <= 400
	lx, ly := soakHeapArea.Max.X+18, soakHeapArea.Min.Y
	for _, res := range results {
		var series []SoakSample
		for _, s := range samples {
			if s.Scheduler == res.Scheduler && s.Phase == res.Phase {
				series = append(series, s)
			}
		}
		slices.SortStableFunc(series, func(a, b SoakSample) int { return a.Cycle - b.Cycle })
		col := SchedulerColor(res.Scheduler)
		dash := phaseDash(res.Phase)
		var hp, fp []image.Point
		for _, s := range series {
			if h := mib(s.HeapInuse); finite(h) {
				hp = append(hp, image.Pt(heap.px(float64(s.Cycle)), heap.py(h)))
			}
			if finite(s.Inflight) {
				fp = append(fp, image.Pt(flight.px(float64(s.Cycle)), flight.py(s.Inflight)))
			}
		}
		mark := 0
		if markers {
			mark = 5
		}
		c.polyline(heap.area, &pen{col: col, width: 2, dash: dash}, hp, mark)
		c.polyline(flight.area, &pen{col: col, width: 2, dash: dash}, fp, mark)

		c.polyline(c.img.Bounds(), &pen{col: col, width: 2, dash: dash}, []image.Point{{lx + 4, ly + 6}, {lx + 34, ly + 6}}, 0)
		c.text(lx+42, ly, res.Scheduler+" "+res.Phase, col, 1, false)
		ly += 16
		c.text(lx+42, ly, fmt.Sprintf("%s MiB, flat: %s", signed(mib(res.Growth()), 1), asciiVerdict(res.Flat)), mutedInk, 1, false)
		ly += 16
		c.text(lx+42, ly, fmt.Sprintf("inflight max %g, 0: %s", res.MaxInflight, asciiVerdict(res.InflightZero)), mutedInk, 1, false)
		ly += 24
	}
	return png.Encode(w, c.img)
}

// asciiVerdict is for plots: basicfont has no check marks.
func asciiVerdict(v Verdict) string {
	switch v {
	case Met:
		return "yes"
	case Missed:
		return "NO"
	}
	return "n/a"
}

func phaseDash(phase string) []int {
	switch phase {
	case "scale":
		return nil
	case "affinity":
		return []int{9, 5}
	}
	return []int{3, 4}
}

// roundPen styles the k-th round (0-based) of a scheduler.
func roundPen(base color.RGBA, k int) *pen {
	if k == 0 {
		return &pen{col: base, width: 2}
	}
	dashes := [][]int{{10, 6}, {4, 4}, {12, 4, 3, 4}}
	return &pen{col: lighten(base, min(0.25+0.1*float64(k-1), 0.6)), width: 2, dash: dashes[(k-1)%len(dashes)]}
}

func lighten(c color.RGBA, f float64) color.RGBA {
	l := func(v uint8) uint8 { return uint8(math.Round(float64(v) + (255-float64(v))*f)) }
	return color.RGBA{l(c.R), l(c.G), l(c.B), 255}
}

// axes maps data coordinates into a pixel rectangle.
type axes struct {
	area           image.Rectangle
	x0, x1, y0, y1 float64
}

func (a axes) px(x float64) int {
	return a.area.Min.X + int(math.Round((x-a.x0)/(a.x1-a.x0)*float64(a.area.Dx()-1)))
}

func (a axes) py(y float64) int {
	return a.area.Max.Y - 1 - int(math.Round((y-a.y0)/(a.y1-a.y0)*float64(a.area.Dy()-1)))
}

// niceStep picks a tick step of 1, 2 or 5 times a power of ten giving about
// target ticks over span, and at least minStep.
func niceStep(span float64, target int, minStep float64) float64 {
	if !(span > 0) {
		span = 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return max(step, minStep)
}

func ceilTo(v, step float64) float64  { return math.Ceil(v/step-1e-9) * step }
func floorTo(v, step float64) float64 { return math.Floor(v/step+1e-9) * step }

func tickLabel(v, step float64) string {
	if v == 0 {
		v = 0 // no "-0"
	}
	d := 0
	for d < 6 && math.Abs(step*math.Pow(10, float64(d))-math.Round(step*math.Pow(10, float64(d)))) > 1e-6 {
		d++
	}
	return fmt.Sprintf("%.*f", d, v)
}

// canvas is an RGBA image with the few primitives the plots need.
type canvas struct{ img *image.RGBA }

func newCanvas(w, h int) *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
	c.fill(c.img.Bounds(), white)
	return c
}

func (c *canvas) fill(r image.Rectangle, col color.RGBA) {
	r = r.Intersect(c.img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c.img.SetRGBA(x, y, col)
		}
	}
}

// pen draws lines width pixels thick; dash alternates on and off lengths in
// pixel steps, carried across the segments of a polyline so dashes stay even.
type pen struct {
	col   color.RGBA
	width int
	dash  []int
	pos   int
}

func (p *pen) on() bool {
	if len(p.dash) == 0 {
		return true
	}
	total := 0
	for _, d := range p.dash {
		total += d
	}
	at := p.pos % total
	p.pos++
	for i, d := range p.dash {
		if at < d {
			return i%2 == 0
		}
		at -= d
	}
	return true
}

// line is Bresenham's algorithm stamping a width×width square per step,
// clipped to clip.
func (c *canvas) line(clip image.Rectangle, p *pen, x0, y0, x1, y1 int) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		if p.on() {
			off := (p.width - 1) / 2
			c.fill(image.Rect(x0-off, y0-off, x0-off+p.width, y0-off+p.width).Intersect(clip), p.col)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func (c *canvas) polyline(clip image.Rectangle, p *pen, pts []image.Point, marker int) {
	if len(pts) == 1 && marker == 0 {
		marker = 4
	}
	for i := 1; i < len(pts); i++ {
		c.line(clip, p, pts[i-1].X, pts[i-1].Y, pts[i].X, pts[i].Y)
	}
	if marker > 0 {
		for _, pt := range pts {
			h := marker / 2
			c.fill(image.Rect(pt.X-h, pt.Y-h, pt.X-h+marker, pt.Y-h+marker).Intersect(clip), p.col)
		}
	}
}

var face = basicfont.Face7x13

func textWidth(s string, scale int) int { return font.MeasureString(face, s).Ceil() * scale }

const textHeight = 13

// text draws s with its box's top-left corner at (x, y), magnified scale
// times; vertical text reads bottom to top.
func (c *canvas) text(x, y int, s string, col color.RGBA, scale int, vertical bool) {
	w := font.MeasureString(face, s).Ceil()
	if w == 0 {
		return
	}
	mask := image.NewAlpha(image.Rect(0, 0, w, textHeight))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString(s)
	for my := range textHeight {
		for mx := range w {
			if mask.AlphaAt(mx, my).A < 0x80 {
				continue
			}
			px, py := x+mx*scale, y+my*scale
			if vertical {
				px, py = x+my*scale, y+(w-1-mx)*scale
			}
			c.fill(image.Rect(px, py, px+scale, py+scale), col)
		}
	}
}

func (c *canvas) title(s string) {
	c.text((PlotWidth-textWidth(s, 2))/2, 14, s, ink, 2, false)
}

// frame draws grid, axes, ticks, tick labels and axis labels around ax.area.
func (c *canvas) frame(ax axes, xstep, ystep float64, xlabel, ylabel string) {
	a := ax.area
	solid := func(col color.RGBA) *pen { return &pen{col: col, width: 1} }
	var xt, yt []float64
	for i := 0; ; i++ {
		v := ceilTo(ax.x0, xstep) + float64(i)*xstep
		if v > ax.x1+xstep*1e-6 {
			break
		}
		xt = append(xt, v)
	}
	for i := 0; ; i++ {
		v := ceilTo(ax.y0, ystep) + float64(i)*ystep
		if v > ax.y1+ystep*1e-6 {
			break
		}
		yt = append(yt, v)
	}
	bounds := c.img.Bounds()
	for _, v := range xt {
		x := ax.px(v)
		c.line(bounds, solid(gridColor), x, a.Min.Y, x, a.Max.Y-1)
	}
	for _, v := range yt {
		y := ax.py(v)
		c.line(bounds, solid(gridColor), a.Min.X, y, a.Max.X-1, y)
	}
	c.line(bounds, &pen{col: axisColor, width: 2}, a.Min.X-1, a.Max.Y, a.Max.X-1, a.Max.Y)
	c.line(bounds, &pen{col: axisColor, width: 2}, a.Min.X-1, a.Min.Y, a.Min.X-1, a.Max.Y)
	for _, v := range xt {
		x := ax.px(v)
		c.line(bounds, solid(axisColor), x, a.Max.Y+1, x, a.Max.Y+5)
		l := tickLabel(v, xstep)
		c.text(x-textWidth(l, 1)/2, a.Max.Y+8, l, ink, 1, false)
	}
	maxLabel := 0
	for _, v := range yt {
		y := ax.py(v)
		c.line(bounds, solid(axisColor), a.Min.X-6, y, a.Min.X-2, y)
		l := tickLabel(v, ystep)
		maxLabel = max(maxLabel, textWidth(l, 1))
		c.text(a.Min.X-10-textWidth(l, 1), y-textHeight/2, l, ink, 1, false)
	}
	if xlabel != "" {
		c.text(a.Min.X+(a.Dx()-textWidth(xlabel, 1))/2, a.Max.Y+26, xlabel, ink, 1, false)
	}
	if ylabel != "" {
		c.text(a.Min.X-maxLabel-16-textHeight, a.Min.Y+(a.Dy()-textWidth(ylabel, 1))/2, ylabel, ink, 1, true)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
