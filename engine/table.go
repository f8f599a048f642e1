package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/table"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
)

// tableObj is a live table: its definition, rows, watermark and the views it feeds.
type tableObj struct {
	entry   *catalog.Entry
	name    string
	cols    []catalog.Column
	data    *table.Table
	options map[string]string
	// wmCol is the event-time column (-1 without a WATERMARK); wmExpr computes the
	// watermark value of a row.
	wmCol  int
	wmExpr exec.Expr
	wmText string
	wm     *watermark.Generator
	// parts combines the watermarks of a partitioned connector's partitions (nil until the
	// connector knows them); idle and drift are its 'watermark.idle_timeout' and
	// 'watermark.max_drift' (0: off).
	parts     *watermark.Partitions
	idle      time.Duration
	drift     int64
	listeners []*listener
	rel       *plan.Relation
	feeder    *feeder
}

// listener is a dataflow input fed with a relation's changes.
type listener struct {
	// outs are the view's inputs reading the table or view (several: a self-join or union).
	outs []exec.Output
	view *viewObj
	// timeCol is the table's event-time column (-1: none, or a view), by which deliver cuts;
	// sent is the last watermark the inputs all got.
	timeCol int
	sent    int64
}

func (t *tableObj) types() []types.T {
	ts := make([]types.T, len(t.cols))
	for i, c := range t.cols {
		ts[i] = c.Type
	}
	return ts
}

// nameTaken reports whether a CREATE's name is already a table, view or sink; then err is
// nil with IF NOT EXISTS (nothing to do), else it says so at the name.
func (e *Engine) nameTaken(s *sql.Stmt, name string, ifNotExists bool) (taken bool, err error) {
	ent, ok := e.cat.Lookup(name)
	if !ok {
		return false, nil
	}
	if ifNotExists {
		return true, nil
	}
	what := string(ent.Kind)
	switch ent.Kind {
	case catalog.KindView:
		what = "materialized view"
	case catalog.KindLogicalView:
		what = "view"
	}
	return true, s.ErrorAt(name, "%s %s already exists", what, name)
}

func (e *Engine) createTable(s *sql.Stmt) (*Result, error) {
	n := s.Node.(*ast.CreateTableStmt)
	name := n.Table.Name.O
	if n.Table.Schema.L != "" { // system (checkSchemas refuses the others)
		return nil, s.ErrorAt(n.Table.Schema.O, "cannot create table %s.%s: the system schema is read-only", n.Table.Schema.O, name)
	}
	if taken, err := e.nameTaken(s, name, n.IfNotExists); err != nil {
		return nil, err
	} else if taken {
		return &Result{}, nil
	}
	if n.Select != nil || n.ReferTable != nil {
		return nil, s.ErrorAt(name, "CREATE TABLE ... AS / LIKE is not supported")
	}
	switch {
	case n.TemporaryKeyword != ast.TemporaryNone:
		return nil, s.ErrorAtPos(s.KeywordPos("TEMPORARY"), "CREATE TEMPORARY TABLE is not supported: tables are stored")
	case n.Partition != nil:
		return nil, s.ErrorAtPos(s.KeywordPos("PARTITION"), "PARTITION BY is not supported: a table is partitioned by its connector (Kafka's partitions)")
	case len(n.Options) > 0:
		return nil, s.ErrorAtPos(s.KeywordPos("ENGINE", "DEFAULT", "CHARSET", "CHARACTER", "COLLATE", "AUTO_INCREMENT", "COMMENT"), "table options (ENGINE, COMMENT, ...) are not supported; a connector's options go in WITH (...)")
	}
	wb := e.store.NewBatch()
	ent := e.cat.Add(wb, catalog.KindTable, name, s.Text)
	var src tableSource
	made := false
	defer func() {
		// A refusal, a failed commit or a bug's panic leaves no trace of the table.
		if !made {
			src.close()
			e.cat.Forget(name)
			delete(e.tables, strings.ToLower(name))
		}
	}()
	t, err := e.defineTable(s, ent)
	if err != nil {
		wb.Discard()
		return nil, err
	}
	if _, ok := t.options["connector"]; ok {
		if src, err = e.openSource(t); err == nil {
			if k, ok := src.log.(*kafka.Source); ok {
				// The start position (each partition's start, or end for 'latest-offset') is
				// committed with the table, so a restart before any record resumes from it.
				if err = checkKafka(k.Check); err == nil {
					wb.PutMeta(offsetKey(t), k.Position())
				}
			}
		}
		if err != nil {
			wb.Discard()
			return nil, optionError(s, err)
		}
	}
	if err := e.store.Commit(wb); err != nil {
		return nil, err
	}
	made = true
	if src.gen != nil || src.log != nil {
		e.startFeeder(t, src)
	}
	return &Result{}, nil
}

// maxWatermarkOptionMillis bounds 'watermark.idle_timeout' and 'watermark.max_drift', as
// connectors bound their millisecond options.
const maxWatermarkOptionMillis = 1 << 40

// defineTable builds the live table of a CREATE TABLE statement.
func (e *Engine) defineTable(s *sql.Stmt, ent *catalog.Entry) (*tableObj, error) {
	n := s.Node.(*ast.CreateTableStmt)
	t := &tableObj{entry: ent, name: n.Table.Name.O, wmCol: -1, options: map[string]string{}, wm: watermark.New()}
	seen := map[string]bool{}
	var pk []int
	for i, c := range n.Cols {
		ty, err := plan.FieldType(c.Tp)
		if err != nil {
			return nil, s.ErrorAt(c.Name.Name.O, "column %s: %s", c.Name.Name.O, err)
		}
		l := c.Name.Name.L
		if seen[l] {
			return nil, s.ErrorAtPos(s.PosOfNthName(c.Name.Name.O, nthColumn(n, i)), "duplicate column %s", c.Name.Name.O)
		}
		seen[l] = true
		col := catalog.Column{Name: c.Name.Name.O, Type: ty}
		for _, o := range c.Options {
			switch o.Tp {
			case ast.ColumnOptionNotNull:
				col.NotNull = true
			case ast.ColumnOptionPrimaryKey:
				if len(pk) > 0 {
					return nil, s.ErrorAtPos(s.PosOfNthName(c.Name.Name.O, nthColumn(n, i)), "table %s has more than one PRIMARY KEY: name the key's columns in one PRIMARY KEY (a, b)", t.name)
				}
				col.NotNull = true
				pk = append(pk, i)
			case ast.ColumnOptionNull, ast.ColumnOptionComment:
			default:
				return nil, s.ErrorAt(c.Name.Name.O, "column %s: this column option is not supported", c.Name.Name.O)
			}
		}
		t.cols = append(t.cols, col)
	}
	if len(t.cols) == 0 {
		return nil, s.ErrorAt(t.name, "table %s needs at least one column", t.name)
	}
	for _, con := range n.Constraints {
		if con.Tp != ast.ConstraintPrimaryKey {
			return nil, s.ErrorAt(t.name, "only PRIMARY KEY constraints are supported")
		}
		if len(pk) > 0 {
			return nil, s.ErrorAt(t.name, "table %s has more than one PRIMARY KEY", t.name)
		}
		for _, k := range con.Keys {
			idx := t.colIndex(k.Column.Name.O)
			if idx < 0 {
				return nil, s.ErrorAt(k.Column.Name.O, "PRIMARY KEY column %s does not exist", k.Column.Name.O)
			}
			if slices.Contains(pk, idx) {
				return nil, s.ErrorAtPos(s.KeywordPos("PRIMARY"), "PRIMARY KEY names column %s twice", k.Column.Name.O)
			}
			t.cols[idx].NotNull = true
			pk = append(pk, idx)
		}
	}
	for _, o := range s.Options {
		switch o.Key {
		case "watermark.idle_timeout", "watermark.max_drift":
			// Per-partition watermark settings (see package watermark); a table fed by
			// INSERT or a generator has one partition, so there they only validate.
			ms, err := parseDuration(o.Value) // 0: off, the default
			if err != nil {
				return nil, s.ErrorAtPos(o.Pos, "%s: %s", o.Key, err)
			}
			if ms > maxWatermarkOptionMillis { // past it, a time.Duration or W + drift overflows
				return nil, s.ErrorAtPos(o.Pos, "%s: '%s' is more than 2^40 milliseconds (about 34 years)", o.Key, o.Value)
			}
			if o.Key == "watermark.idle_timeout" {
				t.idle = time.Duration(ms) * time.Millisecond
			} else {
				t.drift = ms
			}
			continue
		}
		t.options[o.Key] = o.Value
	}
	if _, ok := t.options["connector"]; !ok && len(t.options) > 0 {
		for _, o := range s.Options {
			if _, ok := t.options[o.Key]; ok {
				return nil, s.ErrorAtPos(o.Pos, "table option '%s' needs a connector (WITH (connector = 'kafka' | 'file' | 'nexmark' | 'datagen', ...))", o.Key)
			}
		}
	}
	if w := s.Watermark; w != nil {
		idx := t.colIndex(w.Column)
		colPos := s.PosAfter([]string{"WATERMARK", "FOR"}, "") // the column's name
		if idx < 0 {
			return nil, s.ErrorAtPos(colPos, "WATERMARK FOR %s: no such column", w.Column)
		}
		if t.cols[idx].Type.Kind != types.Timestamp {
			return nil, s.ErrorAtPos(colPos, "WATERMARK FOR %s: the event-time column must be TIMESTAMP(3), it is %s", w.Column, t.cols[idx].Type)
		}
		if q := plan.FirstSubquery(w.Expr); q != nil {
			return nil, w.Stmt.ErrorAtPos(w.Stmt.PosOf(q), "a WATERMARK expression cannot contain a subquery")
		}
		b := &plan.Binder{Cat: e, Stmt: w.Stmt}
		expr, err := b.BindScalar(w.Expr, t.schema())
		if err != nil {
			return nil, err
		}
		if expr.Type().Kind != types.Timestamp {
			return nil, s.ErrorAtPos(w.Pos, "WATERMARK expression must be a TIMESTAMP, it is %s", expr.Type())
		}
		t.wmCol, t.wmExpr, t.wmText = idx, expr, expr.String()
		t.cols[idx].NotNull = true
	}
	t.data = table.New(ent.ID, t.names(), t.types(), pk, &e.seq, e.store, e.cacheSize())
	t.rel = &plan.Relation{Name: t.name, Cols: t.cols, Handle: t, PK: pk, TimeCol: t.wmCol}
	if t.wmCol < 0 {
		t.rel.Untimed = t.name
	}
	e.tables[strings.ToLower(t.name)] = t
	return t, nil
}

// partitioned reports whether the table is fed by a partitioned connector (Kafka), whose
// watermark is combined over partitions (tableObj.parts).
func (t *tableObj) partitioned() bool {
	return strings.EqualFold(strings.TrimSpace(t.options["connector"]), "kafka")
}

func (t *tableObj) colIndex(name string) int {
	for i, c := range t.cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func (t *tableObj) names() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.Name
	}
	return out
}

func (t *tableObj) schema() []plan.Col {
	out := make([]plan.Col, len(t.cols))
	for i, c := range t.cols {
		out[i] = plan.Col{Name: c.Name, Table: strings.ToLower(t.name), T: c.Type}
	}
	return out
}

// nthColumn is how many times column i's name occurs before its definition in the text of
// CREATE TABLE n: as the table's name, and as earlier columns' (for Stmt.PosOfNthName).
func nthColumn(n *ast.CreateTableStmt, i int) int {
	name, k := n.Cols[i].Name.Name.L, 0
	if n.Table.Name.L == name {
		k++
	}
	for _, c := range n.Cols[:i] {
		if c.Name.Name.L == name {
			k++
		}
	}
	return k
}

// wmError is a failure of a table's WATERMARK expression on some row. A data error's place is
// in the table's definition, not in the statement that wrote the row.
type wmError struct {
	table string
	err   error
}

func (e wmError) Error() string {
	var de *exec.DataError
	if errors.As(e.err, &de) {
		return fmt.Sprintf("WATERMARK expression: %v (in the definition of table %s: line %d, column %d)", de.Err, e.table, de.Pos.Line, de.Pos.Col)
	}
	return fmt.Sprintf("WATERMARK expression of table %s: %v", e.table, e.err)
}

func (e wmError) Unwrap() error { return e.err }

// wmValues evaluates the WATERMARK expression over a batch of the table's rows.
func (t *tableObj) wmValues(b *exec.Batch) ([]int64, error) {
	a, err := t.wmExpr.Eval(b)
	if err != nil {
		return nil, wmError{t.name, err}
	}
	vals := exec.Int64s(a)
	if a.NullN() > 0 {
		out := make([]int64, len(vals))
		for i := range vals {
			out[i] = vals[i]
			if a.IsNull(i) {
				out[i] = exec.NoWatermark
			}
		}
		return out, nil
	}
	return vals, nil
}

func (e *Engine) dropTables(s *sql.Stmt, n *ast.DropTableStmt) (*Result, error) {
	for _, tn := range n.Tables {
		if tn.Schema.L != "" { // system (checkSchemas refuses the others)
			return nil, s.ErrorAt(tn.Schema.O, "cannot drop system table %s.%s", tn.Schema.O, tn.Name.O)
		}
	}
	if n.IsView {
		var names []string
		for _, tn := range n.Tables {
			names = append(names, tn.Name.O)
		}
		return e.dropViews(names, n.IfExists, false, s)
	}
	// Every name is checked before any table is dropped: a refused statement drops nothing.
	var drop []*tableObj
	for _, tn := range n.Tables {
		name := tn.Name.O
		t, ok := e.tables[strings.ToLower(name)]
		if !ok {
			if n.IfExists {
				continue
			}
			if _, isView := e.views[strings.ToLower(name)]; isView {
				return nil, s.ErrorAt(name, "%s is a materialized view; use DROP MATERIALIZED VIEW", name)
			}
			if _, isView := e.logical[strings.ToLower(name)]; isView {
				return nil, s.ErrorAt(name, "%s is a view; use DROP VIEW", name)
			}
			return nil, s.ErrorAt(name, "table %s does not exist", name)
		}
		if rs := e.readers(name); len(rs) > 0 {
			return nil, rs[0].refusal(s, name, "table "+name)
		}
		if !slices.Contains(drop, t) {
			drop = append(drop, t)
		}
	}
	for _, t := range drop {
		name := t.name
		if t.feeder != nil {
			e.mu.Unlock()
			t.feeder.stop()
			e.mu.Lock()
		}
		wb := e.store.NewBatch()
		e.cat.Remove(wb, name)
		t.data.Drop(wb)
		e.dropTableMeta(wb, t)
		if err := e.store.Commit(wb); err != nil {
			e.cat.Restore(t.entry)
			return nil, err
		}
		delete(e.tables, strings.ToLower(name))
	}
	return &Result{}, nil
}
