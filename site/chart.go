package site

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/pinfold/pinfold/bench/report"
)

// chart is r as a horizontal bar chart in SVG: one bar per row (the
// median), a whisker to the p90 when there is one, the value written at
// the end of each bar. The picture has its own title and description;
// the page also gives the numbers as a table and the image an alt text.
func chart(r *report.Report) []byte {
	const (
		labelW = 230
		barW   = 380
		rowH   = 30
		top    = 36
		width  = labelW + barW + 110
	)
	max := 0.0
	for _, row := range r.Rows {
		max = math.Max(max, math.Max(row.Median, row.P90))
	}
	if max == 0 {
		max = 1
	}
	height := top + rowH*len(r.Rows) + 16
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="t d">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title id=\"t\">%s</title>\n<desc id=\"d\">%s</desc>\n", esc(r.Title), esc(chartAlt(r)))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	better := "lower is better"
	if r.Better == report.Higher {
		better = "higher is better"
	}
	fmt.Fprintf(&b, `<text x="8" y="22" font-family="sans-serif" font-size="14" fill="#1a1a1a">%s (%s)</text>`+"\n", esc(r.Unit), better)
	for i, row := range r.Rows {
		y := top + i*rowH
		w := row.Median / max * barW
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-family="sans-serif" font-size="13" fill="#1a1a1a" text-anchor="end">%s</text>`+"\n", labelW-8, y+18, esc(row.Name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#1f5fa8"/>`+"\n", labelW, y+5, w, rowH-10)
		end := w
		if row.P90 > row.Median {
			p := row.P90 / max * barW
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#1a1a1a" stroke-width="2"/>`+"\n", labelW+w, y+15, labelW+p, y+15)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#1a1a1a" stroke-width="2"/>`+"\n", labelW+p, y+9, labelW+p, y+21)
			end = p
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-family="sans-serif" font-size="13" fill="#1a1a1a">%s</text>`+"\n", labelW+end+6, y+19, esc(number(row.Median)))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// chartAlt says in words what the chart shows.
func chartAlt(r *report.Report) string {
	parts := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		parts[i] = fmt.Sprintf("%s %s %s", row.Name, number(row.Median), r.Unit)
	}
	return fmt.Sprintf("Bar chart of medians (%s is better): %s.", r.Better, strings.Join(parts, "; "))
}

// number prints a figure with three significant digits at least.
func number(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
