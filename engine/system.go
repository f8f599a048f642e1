package engine

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/types"
)

// systemTable is a read-only relation computed from the engine's state.
type systemTable struct {
	name string
	cols []catalog.Column
	rows func(e *Engine) [][]any
}

// lateRow is one entry of system.late_rows, of its view (viewObj.lateRows).
type lateRow struct {
	table                string
	eventTime, watermark int64
	rowJSON              string
}

var systemTables = map[string]systemTable{
	"system.late_rows": {
		name: "system.late_rows",
		cols: []catalog.Column{{Name: "view_name", Type: types.TVarchar}, {Name: "table_name", Type: types.TVarchar},
			{Name: "event_time", Type: types.TTimestamp}, {Name: "watermark", Type: types.TTimestamp}, {Name: "row_json", Type: types.TVarchar}},
		rows: func(e *Engine) [][]any {
			var out [][]any
			for _, v := range e.views {
				for _, l := range v.lateRows {
					out = append(out, []any{v.name, l.table, wmValue(l.eventTime), wmValue(l.watermark), l.rowJSON})
				}
			}
			// By view, each view's in the order they came.
			sort.SliceStable(out, func(i, j int) bool { return out[i][0].(string) < out[j][0].(string) })
			return out
		},
	},
	"system.views": {
		name: "system.views",
		cols: []catalog.Column{{Name: "name", Type: types.TVarchar}, {Name: "row_count", Type: types.TBigInt},
			{Name: "late_rows", Type: types.TBigInt}, {Name: "emit", Type: types.TVarchar}, {Name: "definition", Type: types.TVarchar},
			{Name: "spilled", Type: types.TBool}},
		rows: func(e *Engine) [][]any {
			var out [][]any
			for _, v := range e.views {
				emit := "ON UPDATE"
				if v.emitOnClose {
					emit = "ON WINDOW CLOSE"
				}
				out = append(out, []any{v.name, v.store.count(), v.lateCount, emit, v.entry.SQL, v.store.spill != nil})
			}
			sort.Slice(out, func(i, j int) bool { return out[i][0].(string) < out[j][0].(string) })
			return out
		},
	},
	"system.sources": {
		name: "system.sources",
		cols: []catalog.Column{{Name: "table_name", Type: types.TVarchar}, {Name: "connector", Type: types.TVarchar},
			{Name: "position", Type: types.TBigInt}, {Name: "row_count", Type: types.TBigInt}, {Name: "status", Type: types.TVarchar},
			{Name: "lag", Type: types.TBigInt}},
		rows: func(e *Engine) [][]any {
			var out [][]any
			for _, t := range e.tables {
				if f := t.feeder; f != nil {
					var lag any
					if f.lag >= 0 {
						lag = f.lag
					}
					out = append(out, []any{t.name, t.options["connector"], f.offset, int64(t.data.Rows()), f.status(), lag})
				}
			}
			sort.Slice(out, func(i, j int) bool { return out[i][0].(string) < out[j][0].(string) })
			return out
		},
	},
	"system.bad_records": {
		name: "system.bad_records",
		cols: []catalog.Column{{Name: "table_name", Type: types.TVarchar}, {Name: "source_partition", Type: types.TBigInt},
			{Name: "source_offset", Type: types.TBigInt}, {Name: "error", Type: types.TVarchar}, {Name: "record", Type: types.TVarchar}},
		rows: func(e *Engine) [][]any {
			out := make([][]any, len(e.bad))
			for i, b := range e.bad {
				out[i] = []any{b.table, int64(b.Partition), b.Offset, b.Err, string(b.Value)}
			}
			return out
		},
	},
	"system.checkpoints": {
		name: "system.checkpoints",
		cols: func() []catalog.Column {
			var cs []catalog.Column
			for _, c := range checkpointColumns {
				cs = append(cs, catalog.Column{Name: c.name, Type: c.t})
			}
			return cs
		}(),
		rows: checkpointRows,
	},
	"system.watermarks": {
		name: "system.watermarks",
		cols: []catalog.Column{{Name: "name", Type: types.TVarchar}, {Name: "kind", Type: types.TVarchar}, {Name: "watermark", Type: types.TTimestamp}},
		rows: func(e *Engine) [][]any {
			var out [][]any
			for _, t := range e.tables {
				if t.wmExpr != nil {
					out = append(out, []any{t.name, "table", wmValue(t.wm.W)})
				}
			}
			for _, v := range e.views {
				out = append(out, []any{v.name, "view", wmValue(v.watermark)})
			}
			sort.Slice(out, func(i, j int) bool { return out[i][0].(string) < out[j][0].(string) })
			return out
		},
	},
}

// wmValue is a watermark or event time as a value: NULL for none.
func wmValue(w int64) any {
	if w == exec.NoWatermark {
		return nil
	}
	return w
}

func (e *Engine) systemRelation(name string) (*plan.Relation, bool) {
	st, ok := systemTables[name]
	if !ok {
		return nil, false
	}
	return &plan.Relation{Name: st.name, Cols: st.cols, Handle: st, TimeCol: -1, Untimed: st.name}, true
}

// rowJSON renders a row as a JSON object of column name to value.
func rowJSON(names []string, ts []types.T, row []any) string {
	m := make(map[string]any, len(names))
	for i, n := range names {
		v := row[i]
		if v != nil {
			switch ts[i].Kind {
			case types.Timestamp, types.Date, types.Decimal, types.Interval:
				v = types.Display(v, ts[i])
			}
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nonFiniteJSON(f) // JSON has no NaN or infinity: a string, as PostgreSQL writes them
		}
		m[n] = v
	}
	// Characters as they are (as PostgreSQL and DuckDB write JSON), not HTML-escaped: "<"
	// stays "<", not "\u003c". Encode cannot fail: the values are strings, numbers,
	// booleans and nil.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m)
	return strings.TrimSuffix(b.String(), "\n")
}

// nonFiniteJSON is a NaN or an infinity as PostgreSQL's JSON writes it.
func nonFiniteJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f > 0:
		return "Infinity"
	}
	return "-Infinity"
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}
