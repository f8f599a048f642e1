package shell

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// renderOpts are the display settings a result is rendered with.
type renderOpts struct {
	mode    string // box, table, csv, json, line, markdown (live renders as box)
	headers bool
	width   int  // terminal width; 0: no truncation
	tty     bool // output is a terminal: NULL is dimmed
}

var modes = []string{"box", "table", "csv", "json", "line", "markdown", "live"}

func render(w io.Writer, res *result, o renderOpts) error {
	if len(res.cols) == 0 {
		return nil // a statement without a result set
	}
	var err error
	switch o.mode {
	case "csv":
		err = renderCSV(w, res, o)
	case "json":
		err = renderJSON(w, res)
	case "line":
		err = renderLine(w, res)
	case "markdown":
		err = renderMarkdown(w, res)
	case "table":
		_, err = io.WriteString(w, renderGrid(res, o, asciiChars))
	default:
		_, err = io.WriteString(w, renderGrid(res, o, boxChars))
	}
	return err
}

// gridChars are the characters a grid is drawn with: corners and joints
// top (left, middle, right), separator row, bottom; then the vertical and
// horizontal lines.
type gridChars struct {
	top, mid, bot [3]string
	vert, horiz   string
	box           bool // box style: type line and row-count footer
}

var (
	boxChars = gridChars{
		top: [3]string{"┌", "┬", "┐"}, mid: [3]string{"├", "┼", "┤"}, bot: [3]string{"└", "┴", "┘"},
		vert: "│", horiz: "─", box: true,
	}
	asciiChars = gridChars{
		top: [3]string{"+", "+", "+"}, mid: [3]string{"+", "+", "+"}, bot: [3]string{"+", "+", "+"},
		vert: "|", horiz: "-",
	}
)

const (
	minColumnWidth = 8
	ellipsis       = "…"
)

// renderGrid draws a result as a table, DuckDB-like: column names centred,
// (box) a second header line of types, numbers right-aligned, and (box) a
// footer counting rows. When the table would be wider than o.width, wide
// columns are shortened first and then middle columns are left out.
func renderGrid(res *result, o renderOpts, ch gridChars) string {
	ncol := len(res.cols)
	cells := make([][]string, len(res.rows))
	natural := make([]int, ncol)
	showTypes := ch.box && o.headers
	if showTypes {
		showTypes = false
		for _, t := range res.types {
			showTypes = showTypes || t != ""
		}
	}
	for j, c := range res.cols {
		if o.headers {
			natural[j] = displayWidth(escapeCell(c))
		}
		if showTypes {
			natural[j] = max(natural[j], displayWidth(res.types[j]))
		}
	}
	for i, r := range res.rows {
		cells[i] = make([]string, ncol)
		for j, v := range r {
			s := escapeCell(cellText(v, res.types[j]))
			cells[i][j] = s
			natural[j] = max(natural[j], displayWidth(s))
		}
	}
	for j := range natural {
		natural[j] = max(natural[j], 1)
	}
	shown, gap, widths := fitColumns(natural, o.width)

	// Columns to draw: index into res, or -1 for the ellipsis column.
	var layout []int
	var lw []int
	for k, j := range shown {
		if k == gap {
			layout, lw = append(layout, -1), append(lw, 1)
		}
		layout, lw = append(layout, j), append(lw, widths[k])
	}
	if gap == len(shown) {
		layout, lw = append(layout, -1), append(lw, 1)
	}
	align := make([]byte, ncol)
	for j := range align {
		align[j] = 'l'
		if rightAligned(res, j) {
			align[j] = 'r'
		}
	}

	var b strings.Builder
	rule := func(c [3]string) {
		b.WriteString(c[0])
		for k, w := range lw {
			if k > 0 {
				b.WriteString(c[1])
			}
			b.WriteString(strings.Repeat(ch.horiz, w+2))
		}
		b.WriteString(c[2])
		b.WriteByte('\n')
	}
	line := func(cell func(j, w int) string) {
		for k, j := range layout {
			b.WriteString(ch.vert)
			b.WriteByte(' ')
			if j < 0 {
				b.WriteString(ellipsis)
			} else {
				b.WriteString(cell(j, lw[k]))
			}
			b.WriteByte(' ')
		}
		b.WriteString(ch.vert)
		b.WriteByte('\n')
	}
	rule(ch.top)
	if o.headers {
		line(func(j, w int) string { return pad(truncate(escapeCell(res.cols[j]), w), w, 'c') })
		if showTypes {
			line(func(j, w int) string { return pad(truncate(res.types[j], w), w, 'c') })
		}
		if len(res.rows) > 0 {
			rule(ch.mid)
		}
	}
	for i, r := range cells {
		line(func(j, w int) string {
			s := truncate(r[j], w)
			if res.rows[i][j] == nil && o.tty {
				return strings.Replace(pad(s, w, align[j]), s, "\x1b[2m"+s+"\x1b[0m", 1)
			}
			return pad(s, w, align[j])
		})
	}
	rule(ch.bot)
	if ch.box {
		b.WriteString(rowCount(len(res.rows)))
		if len(shown) < ncol {
			fmt.Fprintf(&b, ", %d columns (%d shown)", ncol, len(shown))
		}
		for k, j := range shown {
			if widths[k] < natural[j] {
				b.WriteString(", wide values shortened to fit")
				break
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// fitColumns chooses which columns to show and how wide, so that a grid
// fits in width (0: no limit). It returns the shown column indexes, the
// position among them before which an ellipsis column stands (-1: none),
// and their widths. Middle columns are dropped until the narrowest
// acceptable widths fit; then the widest columns are shortened.
func fitColumns(natural []int, width int) (shown []int, gap int, widths []int) {
	for j := range natural {
		shown = append(shown, j)
	}
	gap = -1
	minW := func(j int) int { return min(natural[j], minColumnWidth) }
	total := func(ws func(int) int) int { // 1 + (w+3) per column
		t := 1
		for _, j := range shown {
			t += ws(j) + 3
		}
		if gap >= 0 {
			t += 4
		}
		return t
	}
	if width > 0 {
		for len(shown) > 1 && total(minW) > width {
			mid := len(shown) / 2
			shown = append(shown[:mid:mid], shown[mid+1:]...)
			gap = len(shown) // the dropped columns follow the last shown
			if shown[0] != 0 {
				gap = 0
			}
			for k := 1; k < len(shown); k++ {
				if shown[k] != shown[k-1]+1 {
					gap = k
				}
			}
		}
	}
	w := make(map[int]int, len(shown))
	for _, j := range shown {
		w[j] = natural[j]
	}
	if width > 0 {
		for total(func(j int) int { return w[j] }) > width {
			widest := -1
			for _, j := range shown {
				if w[j] > minW(j) && (widest < 0 || w[j] > w[widest]) {
					widest = j
				}
			}
			if widest < 0 {
				break
			}
			w[widest]--
		}
	}
	for _, j := range shown {
		widths = append(widths, w[j])
	}
	return shown, gap, widths
}

func renderCSV(w io.Writer, res *result, o renderOpts) error {
	cw := csv.NewWriter(w)
	if o.headers {
		if err := cw.Write(res.cols); err != nil {
			return err
		}
	}
	rec := make([]string, len(res.cols))
	for _, r := range res.rows {
		for j, v := range r {
			rec[j] = ""
			if v != nil {
				rec[j] = cellText(v, res.types[j])
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// renderJSON writes an array of objects, one per line, keys in column
// order (as sqlite's json mode does); an empty result is [].
func renderJSON(w io.Writer, res *result) error {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range res.rows {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteByte('{')
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonValue(res.cols[j], ""))
			b.WriteByte(':')
			b.WriteString(jsonValue(v, res.types[j]))
		}
		b.WriteByte('}')
	}
	b.WriteString("]\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// renderLine writes one `name = value` line per column, names
// right-aligned, with a blank line between rows.
func renderLine(w io.Writer, res *result) error {
	nw := 0
	for _, c := range res.cols {
		nw = max(nw, displayWidth(c))
	}
	var b strings.Builder
	for i, r := range res.rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, v := range r {
			fmt.Fprintf(&b, "%s = %s\n", pad(res.cols[j], nw, 'r'), cellText(v, res.types[j]))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderMarkdown writes a GitHub-flavoured table; numeric columns are
// right-aligned (`--:`). It always has a header, as markdown requires.
func renderMarkdown(w io.Writer, res *result) error {
	esc := func(s string) string { return strings.ReplaceAll(escapeCell(s), "|", `\|`) }
	widths := make([]int, len(res.cols))
	cells := make([][]string, len(res.rows))
	for j, c := range res.cols {
		widths[j] = max(3, displayWidth(esc(c)))
	}
	for i, r := range res.rows {
		cells[i] = make([]string, len(r))
		for j, v := range r {
			cells[i][j] = esc(cellText(v, res.types[j]))
			widths[j] = max(widths[j], displayWidth(cells[i][j]))
		}
	}
	right := make([]bool, len(res.cols))
	header := make([]string, len(res.cols))
	for j, c := range res.cols {
		right[j] = rightAligned(res, j)
		header[j] = esc(c)
	}
	var b strings.Builder
	row := func(vals []string, align func(int) byte) {
		b.WriteByte('|')
		for j, v := range vals {
			b.WriteString(" " + pad(v, widths[j], align(j)) + " |")
		}
		b.WriteByte('\n')
	}
	row(header, func(int) byte { return 'l' })
	b.WriteByte('|')
	for j, wd := range widths {
		if right[j] {
			b.WriteString(strings.Repeat("-", wd+1) + ":|")
		} else {
			b.WriteString(strings.Repeat("-", wd+2) + "|")
		}
	}
	b.WriteByte('\n')
	for _, r := range cells {
		row(r, func(j int) byte {
			if right[j] {
				return 'r'
			}
			return 'l'
		})
	}
	_, err := io.WriteString(w, b.String())
	return err
}
