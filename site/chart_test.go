package site

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/bench/report"
)

// A chart is well-formed XML whatever its text holds: control characters,
// U+FFFE, bytes that are not UTF-8, markup. Each such character reads
// U+FFFD; the rest of the text is kept.
func TestChartValidXML(t *testing.T) {
names:
	for _, name := range []string{
		"plain <b>&amp;</b>", // control: valid before the fix too
		"a\x1b[31m\x00b\rc\td",
		"del\x7f and c1\u0085",
		"not utf-8 \xff\xfe, nonchar \ufffe\uffff",
	} {
		r := &report.Report{Bench: "b", Title: "t " + name, Unit: "ms" + name, Better: report.Lower,
			Rows: []report.Row{{Name: name, Median: 1, P90: 2, Runs: 3}}}
		svg := chart(r)
		dec := xml.NewDecoder(bytes.NewReader(svg))
		var text strings.Builder
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%q: not XML: %v\n%q", name, err, svg)
				continue names
			}
			if cd, ok := tok.(xml.CharData); ok {
				text.Write(cd)
			}
		}
		want := strings.NewReplacer("\x1b", "\ufffd", "\x00", "\ufffd", "\r", "\ufffd", "\t", "\ufffd", "\x7f", "\ufffd",
			"\u0085", "\ufffd", "\xff", "\ufffd", "\xfe", "\ufffd", "\ufffe", "\ufffd", "\uffff", "\ufffd").Replace(name)
		if !strings.Contains(text.String(), want) {
			t.Errorf("%q: the chart's text lacks %q:\n%s", name, want, text.String())
		}
	}
}
