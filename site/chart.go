package site

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pinfold/pinfold/bench/report"
)

// chart is r as a horizontal bar chart in SVG: one bar per row (the
// median) with its name above it, so that names of any length fit, a
// whisker to the p90 when there is one, the value written at the end of
// each bar. The picture is narrow (420 units) so that its text stays
// legible when a phone scales it down. It has its own title and
// description; the page also gives the numbers as a table and the image
// an alt text.
func chart(r *report.Report) []byte {
	const (
		left  = 8
		barW  = 330
		rowH  = 46
		top   = 34
		width = left + barW + 82
		text  = `font-family="sans-serif" font-size="14" fill="#1a1a1a"`
	)
	max := 0.0
	for _, row := range r.Rows {
		max = math.Max(max, math.Max(row.Median, row.P90))
	}
	if max == 0 {
		max = 1
	}
	height := top + rowH*len(r.Rows) + 8
	var b strings.Builder
	esc := svgText
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="t d">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title id=\"t\">%s</title>\n<desc id=\"d\">%s</desc>\n", esc(r.Title), esc(chartAlt(r)))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	better := "lower is better"
	if r.Better == report.Higher {
		better = "higher is better"
	}
	fmt.Fprintf(&b, `<text x="%d" y="20" %s font-weight="bold">%s (%s)</text>`+"\n", left, text, esc(r.Unit), better)
	for i, row := range r.Rows {
		y := top + i*rowH
		w := row.Median / max * barW
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%s</text>`+"\n", left, y+14, text, esc(row.Name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="18" fill="#1f5fa8"/>`+"\n", left, y+20, w)
		end := w
		if row.P90 > row.Median {
			p := row.P90 / max * barW
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#1a1a1a" stroke-width="2"/>`+"\n", left+w, y+29, left+p, y+29)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#1a1a1a" stroke-width="2"/>`+"\n", left+p, y+22, left+p, y+36)
			end = p
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s>%s</text>`+"\n", left+end+6, y+34, text, esc(number(row.Median)))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// svgText is s escaped for the SVG's text: html.EscapeString leaves
// control characters, and one of them makes the whole picture invalid
// XML, so each control character, each code point XML 1.0 forbids
// (U+FFFE, U+FFFF) and each byte that is not UTF-8 becomes U+FFFD.
func svgText(s string) string {
	return html.EscapeString(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF {
			return utf8.RuneError
		}
		return r // strings.Map writes bytes that are not UTF-8 as U+FFFD
	}, s))
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
