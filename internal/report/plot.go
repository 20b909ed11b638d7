package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// plotPanel is one bar chart of the SVG: groups of bars (one group per cell, one bar per arm).
type plotPanel struct {
	title  string
	groups []plotGroup
}

type plotGroup struct {
	label string
	bars  []plotBar
}

// plotBar is an arm's median with its spread drawn as a whisker.
type plotBar struct {
	arm            string
	median, lo, hi float64
}

// armColors gives each arm one colour in every panel; TLS and plaintext of the same side share
// a hue.
var armColors = map[string]string{
	ArmNativeTLS:      "#4e79a7",
	ArmBridgedTLS:     "#f28e2b",
	ArmNativePlain:    "#a0cbe8",
	ArmBridgedPlain:   "#ffbe7d",
	ArmTLSConn:        "#4e79a7",
	ArmBridge:         "#f28e2b",
	ArmBridgeCoalesce: "#e15759",
	ArmFloorAESGCM:    "#59a14f",
	ArmFloorTCP:       "#8cd17d",
}

// Plot geometry, in SVG user units (px).
const (
	plotBarW      = 16
	plotGroupGap  = 22
	plotLeft      = 70
	plotRight     = 20
	plotHeight    = 220 // height of a panel's bar area
	plotTitleH    = 40
	plotLabelH    = 60 // room for group labels under the bars
	plotLegendH   = 24
	plotMinWidth  = 640
	plotFontSize  = 11
	plotCharW     = 6.5 // approximate advance of a character at plotFontSize
	plotTickCount = 5
)

// plotPanels turns the report into panels: the driver value cells in client CPU ms/MiB, the
// workload cells relative to native TLS, and the
// transport and floor cells in client CPU ms/MB.
func plotPanels(r *Report) []plotPanel {
	var panels []plotPanel
	var cells, loads []*Cell
	for _, c := range r.CellsOf(GroupDriver) {
		if c.Workload == "" {
			cells = append(cells, c)
		} else { // per MiB of a few bytes would dwarf the value cells: a panel of their own
			loads = append(loads, c)
		}
	}
	if len(cells) > 0 {
		panels = append(panels, plotPanel{title: "Driver: client CPU ms per MiB (median, whisker = spread)", groups: plotGroups(cells, func(a *Arm) stats.Summary { return a.CPUPerMiB })})
	}
	if len(loads) > 0 {
		panels = append(panels, plotPanel{title: "Driver workloads: client CPU per operation over native TLS's median (whisker = spread)", groups: relativeGroups(loads, ArmNativeTLS)})
	}
	cells = append(r.CellsOf(GroupTransport), r.CellsOf(GroupFloor)...)
	if len(cells) > 0 {
		panels = append(panels, plotPanel{title: "Transport only and floor: client CPU ms per MB", groups: plotGroups(cells, func(a *Arm) stats.Summary { return a.CPUPerMB })})
	}
	return panels
}

// plotGroups makes one group per cell with one bar per measured arm.
func plotGroups(cells []*Cell, metric func(*Arm) stats.Summary) []plotGroup {
	var gs []plotGroup
	for _, c := range cells {
		g := plotGroup{label: c.Name}
		for _, a := range c.Arms {
			s := metric(a)
			if s.N == 0 {
				continue
			}
			lo, hi := s.Spread()
			g.bars = append(g.bars, plotBar{arm: a.Name, median: s.Median, lo: lo, hi: hi})
		}
		gs = append(gs, g)
	}
	return gs
}

// relativeGroups makes one group per cell with one bar per measured arm: the arm's CPU per
// operation (median and spread) divided by the median of the cell's base arm; cells without the
// base arm are left out.
func relativeGroups(cells []*Cell, base string) []plotGroup {
	var gs []plotGroup
	for _, c := range cells {
		b := c.Arm(base)
		if b == nil || b.CPU.N == 0 || b.CPU.Median <= 0 {
			continue
		}
		g := plotGroup{label: c.Name}
		for _, a := range c.Arms {
			if a.CPU.N == 0 {
				continue
			}
			lo, hi := a.CPU.Spread()
			m := b.CPU.Median
			g.bars = append(g.bars, plotBar{arm: a.Name, median: a.CPU.Median / m, lo: lo / m, hi: hi / m})
		}
		gs = append(gs, g)
	}
	return gs
}

// WriteSVG draws the report's panels (driver value cells, workload cells, transport and floor
// cells; a panel per group that has cells), stacked, as a standalone SVG document, in one Write
// to w.
func WriteSVG(w io.Writer, r *Report) error {
	panels := plotPanels(r)
	width := plotMinWidth
	for _, p := range panels {
		width = max(width, panelWidth(p))
	}
	panelH := plotTitleH + plotHeight + plotLabelH + plotLegendH
	height := max(len(panels), 1)*panelH + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n", width, height, width, height, plotFontSize)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for i, p := range panels {
		drawPanel(&b, p, i*panelH)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">%s</text>`+"\n", plotLeft, height-10, xmlEscape(fmt.Sprintf("tdsbridge bench, %s, %s, %d rounds", r.Date, r.CPUModel, r.Rounds)))
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write SVG: %w", err)
	}
	return nil
}

// panelWidth is the width the panel's groups need.
func panelWidth(p plotPanel) int {
	w := plotLeft + plotRight
	for _, g := range p.groups {
		w += groupWidth(g) + plotGroupGap
	}
	return w
}

// groupWidth is the width of a group: its bars, or its widest label line if that is wider.
func groupWidth(g plotGroup) int {
	w := len(g.bars) * plotBarW
	for _, line := range strings.Split(g.label, ", ") {
		w = max(w, int(plotCharW*float64(len(line))+0.5))
	}
	return w
}

// drawPanel draws one panel with its top edge at y0: title, axis with ticks, bars with
// whiskers, group labels and a legend of the arms it shows.
func drawPanel(b *strings.Builder, p plotPanel, y0 int) {
	top := y0 + plotTitleH
	base := top + plotHeight
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", plotLeft, y0+24, xmlEscape(p.title))
	maxV := 0.0
	for _, g := range p.groups {
		for _, bar := range g.bars {
			maxV = math.Max(maxV, math.Max(bar.hi, bar.median))
		}
	}
	step := niceStep(maxV / plotTickCount)
	top2 := step * math.Ceil(maxV/step)
	if top2 <= 0 {
		top2 = 1
	}
	yOf := func(v float64) float64 { return float64(base) - v/top2*plotHeight }
	right := panelWidth(p) - plotRight
	for v := 0.0; v <= top2+step/2; v += step {
		y := yOf(v)
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, right, y, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, fmtNum(v))
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", plotLeft, plotLeft, top, base)
	var legend []string
	seen := map[string]bool{}
	gx := plotLeft + plotGroupGap/2
	for _, g := range p.groups {
		gw := groupWidth(g)
		x := gx + (gw-len(g.bars)*plotBarW)/2
		for _, bar := range g.bars {
			if !seen[bar.arm] {
				seen[bar.arm] = true
				legend = append(legend, bar.arm)
			}
			y := yOf(bar.median)
			fmt.Fprintf(b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n",
				x, y, plotBarW-2, float64(base)-y, colorOf(bar.arm), xmlEscape(fmt.Sprintf("%s, %s: %s [%s-%s]", g.label, bar.arm, fmtNum(bar.median), fmtNum(bar.lo), fmtNum(bar.hi))))
			cx := float64(x) + float64(plotBarW-2)/2
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#222"/>`+"\n", cx, cx, yOf(bar.lo), yOf(bar.hi))
			x += plotBarW
		}
		mid := float64(gx) + float64(gw)/2
		for i, part := range strings.Split(g.label, ", ") {
			fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", mid, base+16+i*13, xmlEscape(part))
		}
		gx += gw + plotGroupGap
	}
	lx := plotLeft
	ly := base + plotLabelH
	for _, arm := range legend {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", lx, ly, colorOf(arm))
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", lx+16, ly+10, xmlEscape(arm))
		lx += 24 + 7*len(arm)
	}
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten (x <= 0 gives 1).
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// colorOf returns the arm's colour, grey for an unknown arm.
func colorOf(arm string) string {
	if c, ok := armColors[arm]; ok {
		return c
	}
	return "#999"
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// xmlEscape escapes s for SVG text and attribute values.
func xmlEscape(s string) string { return xmlEscaper.Replace(s) }
