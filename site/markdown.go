package site

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// markdown renders the subset of Markdown SECURITY.md uses — ATX
// headings, paragraphs, "-" and "1." lists whose items continue on
// indented lines, pipe tables, `code` and **strong** — as HTML. Anything
// else is text: every byte of the source is escaped, so the file cannot
// put markup or script in the page. The first heading is dropped (the
// page has its own h1) and the others move down a level under it.
func markdown(src string) string {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	first := true
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			i++
		case strings.HasPrefix(line, "#"):
			level := len(line) - len(strings.TrimLeft(line, "#"))
			text := strings.TrimSpace(line[level:])
			i++
			if first {
				first = false
				continue
			}
			level = min(level+1, 6)
			if level < 2 {
				level = 2
			}
			tag := "h" + string(rune('0'+level))
			b.WriteString("<" + tag + ` id="` + slug(text) + `">` + inline(text) + "</" + tag + ">\n")
		case strings.HasPrefix(line, "|"):
			var rows []string
			for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				rows = append(rows, lines[i])
			}
			b.WriteString(table(rows))
		case listItem().MatchString(line):
			ordered := orderedItem().MatchString(line)
			tag := "ul"
			if ordered {
				tag = "ol"
			}
			b.WriteString("<" + tag + ">\n")
			same := func(l string) bool { return listItem().MatchString(l) && orderedItem().MatchString(l) == ordered }
			for i < len(lines) && same(lines[i]) {
				item := listItem().ReplaceAllString(lines[i], "")
				for i++; i < len(lines) && strings.HasPrefix(lines[i], "  ") && strings.TrimSpace(lines[i]) != ""; i++ {
					item += " " + strings.TrimSpace(lines[i])
				}
				b.WriteString("<li>" + inline(item) + "</li>\n")
				for i < len(lines) && strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && same(lines[i+1]) {
					i++
				}
			}
			b.WriteString("</" + tag + ">\n")
		default:
			var para []string
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && !strings.HasPrefix(lines[i], "#") && !strings.HasPrefix(lines[i], "|") && !listItem().MatchString(lines[i]); i++ {
				para = append(para, strings.TrimSpace(lines[i]))
			}
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
		}
	}
	return b.String()
}

var (
	listItem    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(- |\d+\. )`) })
	orderedItem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+\. `) })
	codeSpan    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
	strong      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([^*]+)\*\*`) })
	registerID  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bS[RD]-\d\d\b`) })
)

// inline escapes text, then marks up code spans, strong text and
// register ids (links to their entries). Code spans are set aside first
// so that nothing inside them is marked up.
func inline(text string) string {
	var codes []string
	text = strings.ReplaceAll(text, "\x00", "")
	text = codeSpan().ReplaceAllStringFunc(text, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(m[1:len(m)-1])+"</code>")
		return "\x00" + strconv.Itoa(len(codes)-1) + "\x00"
	})
	text = html.EscapeString(text)
	text = strong().ReplaceAllString(text, "<strong>$1</strong>")
	text = registerID().ReplaceAllString(text, `<a href="risks.html#$0">$0</a>`)
	for i, c := range codes {
		text = strings.Replace(text, "\x00"+strconv.Itoa(i)+"\x00", c, 1)
	}
	return text
}

// table renders pipe-table rows; the second row is the header rule.
func table(rows []string) string {
	cells := func(row string) []string {
		row = strings.TrimSpace(row)
		row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
		parts := strings.Split(row, "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	var b strings.Builder
	b.WriteString(`<div class="table"><table>` + "\n")
	for i, row := range rows {
		if i == 1 && strings.Trim(row, "|-: ") == "" {
			continue
		}
		tag := "td"
		if i == 0 {
			tag = "th"
			b.WriteString("<thead>")
		}
		b.WriteString("<tr>")
		for _, c := range cells(row) {
			if tag == "th" {
				b.WriteString(`<th scope="col">` + inline(c) + "</th>")
			} else {
				b.WriteString("<td>" + inline(c) + "</td>")
			}
		}
		b.WriteString("</tr>")
		if i == 0 {
			b.WriteString("</thead><tbody>")
		}
		b.WriteString("\n")
	}
	b.WriteString("</tbody></table></div>\n")
	return b.String()
}

// slug is a heading's id: lower-case letters and digits joined by "-".
func slug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
