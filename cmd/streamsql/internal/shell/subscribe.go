package shell

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// redrawEvery bounds how often .mode live redraws the view.
var redrawEvery = 100 * time.Millisecond

// subscribe runs a SUBSCRIBE and prints each change as it arrives until the
// stream ends or ctx is cancelled: a row per line (`op │ col1 │ ...`), or
// CSV lines, or JSON objects one per line; in .mode live on a terminal the
// view's current contents are kept and redrawn in place.
func (s *Shell) subscribe(ctx context.Context, stmt string, args []any) error {
	rows, err := s.conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	res, err := header(rows)
	if err != nil {
		return err
	}
	o := s.renderOpts()
	if s.mode == "live" && o.tty {
		return s.live(rows, res, o)
	}
	var cw *csv.Writer
	widths := make([]int, len(res.cols))
	switch s.mode {
	case "csv":
		cw = csv.NewWriter(s.out)
		if s.headers {
			cw.Write(res.cols)
			cw.Flush()
		}
	case "json":
	default:
		cells := make([]string, len(res.cols))
		for j, c := range res.cols {
			widths[j] = max(displayWidth(c), 2, typeWidth(res.types[j]))
			cells[j] = pad(c, widths[j], 'l')
		}
		if s.headers {
			fmt.Fprintf(s.out, "%s\n", strings.TrimRight(strings.Join(cells, " │ "), " "))
			for j, w := range widths {
				cells[j] = strings.Repeat("─", w)
			}
			fmt.Fprintf(s.out, "%s\n", strings.Join(cells, "─┼─"))
		}
	}
	for rows.Next() {
		r, err := scanRow(rows, len(res.cols))
		if err != nil {
			return err
		}
		switch {
		case cw != nil:
			rec := make([]string, len(r))
			for j, v := range r {
				if v != nil {
					rec[j] = cellText(v, res.types[j])
				}
			}
			cw.Write(rec)
			cw.Flush()
		case s.mode == "json":
			var b strings.Builder
			b.WriteByte('{')
			for j, v := range r {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jsonValue(res.cols[j], "") + ":" + jsonValue(v, res.types[j]))
			}
			b.WriteString("}\n")
			io.WriteString(s.out, b.String())
		default:
			cells := make([]string, len(r))
			for j, v := range r {
				t := escapeCell(cellText(v, res.types[j]))
				widths[j] = max(widths[j], displayWidth(t))
				cells[j] = pad(t, widths[j], 'l')
			}
			fmt.Fprintf(s.out, "%s\n", strings.TrimRight(strings.Join(cells, " │ "), " "))
		}
	}
	return rows.Err()
}

// changeSign maps a change kind to +1 (insert, update-after) or -1
// (delete, update-before).
func changeSign(v any) (int, bool) {
	var op string
	switch x := v.(type) {
	case string:
		op = x
	case []byte:
		op = string(x)
	default:
		return 0, false
	}
	switch strings.ToUpper(strings.TrimSpace(op)) {
	case "+I", "+U", "I", "INSERT", "UPDATE_AFTER", "+":
		return 1, true
	case "-U", "-D", "D", "DELETE", "UPDATE_BEFORE", "-":
		return -1, true
	}
	return 0, false
}

// changeColumns finds the columns of a SUBSCRIBE result that describe the
// change rather than the row: the op column (by name, or a first column
// whose first value is a change kind) and a weight column (by name).
func changeColumns(cols []string, first []any) (op, weight int) {
	op, weight = -1, -1
	for j, c := range cols {
		switch strings.ToLower(c) {
		case "op", "_op", "__op", "op_type", "change", "change_type", "kind":
			if op < 0 {
				op = j
			}
		case "weight", "diff", "mz_diff", "_weight", "__weight":
			if weight < 0 {
				weight = j
			}
		}
	}
	if op < 0 && len(first) > 0 {
		if _, ok := changeSign(first[0]); ok {
			op = 0
		}
	}
	return op, weight
}

// live keeps the subscribed view's rows (a multiset keyed by the row's
// values) and redraws them as a box in place, at most every redrawEvery.
func (s *Shell) live(rows *sql.Rows, res *result, o renderOpts) error {
	ch := make(chan []any)
	var scanErr error
	go func() {
		defer close(ch)
		for rows.Next() {
			r, err := scanRow(rows, len(res.cols))
			if err != nil {
				scanErr = err
				return
			}
			ch <- r
		}
		scanErr = rows.Err()
	}()

	type entry struct {
		vals []any
		n    int
	}
	table := map[string]*entry{}
	opCol, wCol := changeColumns(res.cols, nil)
	detected := opCol >= 0
	view := &result{}
	project := func() {
		view.cols, view.types = nil, nil
		for j := range res.cols {
			if j != opCol && j != wCol {
				view.cols = append(view.cols, res.cols[j])
				view.types = append(view.types, res.types[j])
			}
		}
	}
	project()
	changes, drawn := 0, 0
	dirty := true
	draw := func() {
		keys := make([]string, 0, len(table))
		for k := range table {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		view.rows = view.rows[:0]
		for _, k := range keys {
			for range table[k].n {
				view.rows = append(view.rows, table[k].vals)
			}
		}
		content := fmt.Sprintf("live: %d changes · Ctrl-C stops\n", changes) +
			renderGrid(view, renderOpts{mode: "box", headers: s.headers, width: o.width, tty: o.tty}, boxChars)
		if drawn > 0 {
			content = fmt.Sprintf("\x1b[%dA\r\x1b[J", drawn) + content
		}
		drawn = strings.Count(content, "\n")
		io.WriteString(s.out, content)
		dirty = false
	}
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	for {
		select {
		case r, ok := <-ch:
			if !ok {
				if dirty {
					draw()
				}
				return scanErr
			}
			if !detected {
				detected = true
				if opCol, _ = changeColumns(res.cols, r); opCol >= 0 {
					project()
				}
			}
			sign, n := 1, 1
			if opCol >= 0 {
				if sg, ok := changeSign(r[opCol]); ok {
					sign = sg
				}
			}
			if wCol >= 0 {
				if w, ok := r[wCol].(int64); ok {
					n = int(w)
					if w < 0 {
						n, sign = -n, -sign
					}
				}
			}
			var vals []any
			var key strings.Builder
			for j, v := range r {
				if j != opCol && j != wCol {
					vals = append(vals, v)
					if v == nil {
						key.WriteByte(1) // NULL differs from the text "NULL"
					} else {
						key.WriteString(cellText(v, res.types[j]))
					}
					key.WriteByte(0)
				}
			}
			e := table[key.String()]
			if e == nil {
				e = &entry{vals: vals}
				table[key.String()] = e
			}
			e.n += sign * n
			if e.n <= 0 {
				delete(table, key.String())
			}
			changes++
			dirty = true
		case <-tick.C:
			if dirty {
				draw()
			}
		}
	}
}

// typeWidth is the width values of a fixed-width type take (0 for others), so that the
// header of a stream whose rows are not known yet lines up with them.
func typeWidth(dbType string) int {
	switch t := strings.ToUpper(dbType); {
	case strings.HasPrefix(t, "TIMESTAMP"):
		return len("2006-01-02 15:04:05")
	case t == "DATE":
		return len("2006-01-02")
	case t == "BOOLEAN":
		return len("false")
	}
	return 0
}
