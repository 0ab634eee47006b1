package report

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
)

// Curve is one line of a PlotCurves plot: Y over X, points joined in order.
type Curve struct {
	Name   string
	Color  color.RGBA
	Dashed bool
	X, Y   []float64
}

// curveArea is PlotCurves' plot area; the legend is on its right.
var curveArea = image.Rect(90, 56, PlotWidth-240, PlotHeight-64)

// PlotCurves draws curves on shared axes from 0, each point marked, with a
// legend: the scale curve's cost per pod, throughput and heap over the
// number of nodes.
func PlotCurves(w io.Writer, title, xlabel, ylabel string, curves []Curve) error {
	maxX, maxY := 0.0, 0.0
	for _, cv := range curves {
		if len(cv.X) != len(cv.Y) {
			return fmt.Errorf("plot %q: curve %q has %d x and %d y values", title, cv.Name, len(cv.X), len(cv.Y))
		}
		for i := range cv.X {
			if finite(cv.X[i]) && finite(cv.Y[i]) {
				maxX, maxY = max(maxX, cv.X[i]), max(maxY, cv.Y[i])
			}
		}
	}
	if maxX == 0 || maxY == 0 {
		return fmt.Errorf("plot %q: no positive point", title)
	}
	c := newCanvas(PlotWidth, PlotHeight)
	xstep := niceStep(maxX*1.05, 8, 0)
	ystep := niceStep(maxY*1.05, 8, 0)
	ax := axes{area: curveArea, x0: 0, x1: ceilTo(maxX*1.05, xstep), y0: 0, y1: ceilTo(maxY*1.05, ystep)}
	c.title(title)
	c.frame(ax, xstep, ystep, xlabel, ylabel)
	lx, ly := curveArea.Max.X+18, curveArea.Min.Y
	for _, cv := range curves {
		p := &pen{col: cv.Color, width: 2}
		if cv.Dashed {
			p.dash = []int{8, 5}
		}
		var pts []image.Point
		for i := range cv.X {
			if finite(cv.X[i]) && finite(cv.Y[i]) {
				pts = append(pts, image.Pt(ax.px(cv.X[i]), ax.py(cv.Y[i])))
			}
		}
		c.polyline(ax.area, p, pts, 5)
		c.polyline(c.img.Bounds(), p, []image.Point{{lx + 4, ly + 6}, {lx + 34, ly + 6}}, 0)
		c.text(lx+42, ly, cv.Name, cv.Color, 1, false)
		ly += 18
	}
	return png.Encode(w, c.img)
}
