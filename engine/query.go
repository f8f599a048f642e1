package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
)

// batchRows is the size of the batches a scan produces.
const batchRows = 1 << 16

func (e *Engine) query(ctx context.Context, s *sql.Stmt, q ast.ResultSetNode, args []any) (*Result, error) {
	node, err := e.binder(ctx, s, args).BindQuery(q)
	if err != nil {
		return nil, err
	}
	coll, err := e.run(ctx, node)
	if err != nil {
		return nil, placed(s, err)
	}
	res := &Result{}
	for _, c := range node.Schema() {
		res.Cols = append(res.Cols, Column{Name: c.Name, Type: c.T})
	}
	res.Batches = coll.Batches(batchRows)
	return res, nil
}

// runPlan executes a bounded plan and returns its rows (subqueries, INSERT ... SELECT).
func (e *Engine) runPlan(ctx context.Context, node plan.Node) ([][]any, error) {
	coll, err := e.run(ctx, node)
	if err != nil {
		return nil, err
	}
	return coll.Rows(), nil
}

// buildError is a plan the executor cannot run (a shape the binder accepted); placed gives
// it the statement's position.
type buildError struct{ err error }

func (b buildError) Error() string { return b.err.Error() }

// placed puts a build error that has no position at the statement's start; other errors
// carry their own place.
func placed(s *sql.Stmt, err error) error {
	var be buildError
	if errors.As(err, &be) {
		return buildErrorAt(s, be.err, "")
	}
	return err
}

// buildErrorAt gives a plan.Build error, after prefix, at its own position if it has one,
// else at the statement's start.
func buildErrorAt(s *sql.Stmt, err error, prefix string) *sql.Error {
	var se *sql.Error
	if errors.As(err, &se) {
		return &sql.Error{Line: se.Line, Col: se.Col, Msg: prefix + se.Msg}
	}
	return s.ErrorAtPos(s.Pos, "%s%s", prefix, err)
}

// run executes a bounded plan: each source is scanned and ended, in the order Build gives.
func (e *Engine) run(ctx context.Context, node plan.Node) (*exec.Collector, error) {
	coll := &exec.Collector{Types: plan.Types(node.Schema()), Ordered: true, Ctx: ctx}
	df, err := plan.Build(node, coll, plan.BuildOptions{Batch: true, Ctx: ctx})
	if err != nil {
		return nil, buildError{err}
	}
	for _, src := range df.Sources {
		scan := e.scanSource
		if src.History {
			scan = e.replaySource
		}
		if err := scan(ctx, src); err != nil {
			return nil, err
		}
		if err := src.Out.Emit(exec.Msg{Kind: exec.MsgEnd}); err != nil {
			return nil, err
		}
	}
	return coll, nil
}

// scanSource pushes the current rows of a source's relation.
func (e *Engine) scanSource(ctx context.Context, src *plan.Source) error {
	if src.Rel == nil {
		return src.Out.EmitBatch(exec.RowsToBatch(src.Rows, src.Types))
	}
	return e.scanRelation(ctx, src.Rel, src.Bounds, func(b *exec.Batch) error { return src.Out.EmitBatch(b) })
}

// replaySource pushes a source's stored changes, in acceptance order, each followed by its
// table's watermark (Source.History). Only a table keeps its changes (the binder takes no
// other versioned side); anything else gives its current rows.
func (e *Engine) replaySource(ctx context.Context, src *plan.Source) error {
	var t *tableObj
	if src.Rel != nil {
		t, _ = src.Rel.Handle.(*tableObj)
	}
	if t == nil {
		return e.scanSource(ctx, src)
	}
	r, err := t.data.Replay(0)
	if err != nil {
		return err
	}
	return e.replayMerged([]*replayCursor{{t: t, r: r, gen: watermark.New(), emit: func(b *exec.Batch, w int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := src.Out.EmitBatch(b); err != nil {
			return err
		}
		return src.Out.Emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: w})
	}}})
}

// scanRelation pushes a relation's current rows to fn; a table's segments that bounds
// exclude are skipped (the filters they came from still run over what is pushed).
func (e *Engine) scanRelation(ctx context.Context, rel *plan.Relation, bounds []exec.ValueBound, fn func(*exec.Batch) error) error {
	switch h := rel.Handle.(type) {
	case *tableObj:
		return h.data.ScanWhere(batchRows, bounds, func(b *exec.Batch) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(b)
		})
	case *viewObj:
		bs := h.store.batches(batchRows)
		if err := h.store.takeErr(); err != nil {
			return err
		}
		for _, b := range bs {
			if err := fn(b); err != nil {
				return err
			}
		}
		return nil
	case systemTable:
		rows := h.rows(e)
		if len(rows) == 0 {
			return nil
		}
		ts := make([]types.T, len(rel.Cols))
		for i, c := range rel.Cols {
			ts[i] = c.Type
		}
		return fn(exec.RowsToBatch(rows, ts))
	}
	return fmt.Errorf("internal error: relation %s has no data", rel.Name)
}

func (e *Engine) explain(s *sql.Stmt, n *ast.ExplainStmt, args []any) (*Result, error) {
	// The statement's first word (the text starts at its first token): DESC(SELECT ...)
	// is DESCRIBE too.
	word := strings.TrimLeftFunc(s.Text, unicode.IsSpace)
	if i := strings.IndexFunc(word, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		word = word[:i]
	}
	describe := strings.EqualFold(word, "DESC") || strings.EqualFold(word, "DESCRIBE")
	q, ok := n.Stmt.(ast.ResultSetNode)
	if !ok {
		if describe {
			return nil, s.ErrorAtPos(s.Pos, "DESCRIBE supports tables, views and queries only")
		}
		return nil, s.ErrorAtPos(s.Pos, "EXPLAIN supports queries only")
	}
	if n.Analyze {
		return nil, s.ErrorAtPos(s.Pos, "EXPLAIN ANALYZE is not supported: EXPLAIN shows the plan")
	}
	if sel, ok := q.(*ast.SelectStmt); ok && describe && sel.Kind == ast.SelectStmtKindTable && sel.From != nil && sel.With == nil {
		// DESCRIBE TABLE t is DESCRIBE t (with a WITH clause, t may name a CTE: a query).
		if src, ok := sel.From.TableRefs.Left.(*ast.TableSource); ok && sel.From.TableRefs.Right == nil {
			if tn, ok := src.Source.(*ast.TableName); ok {
				return e.show(s, &ast.ShowStmt{Tp: ast.ShowColumns, Table: tn})
			}
		}
	}
	node, err := e.binder(context.Background(), s, args).BindQuery(q)
	if err != nil {
		return nil, err
	}
	if describe {
		// DESCRIBE query lists the query's result columns, as DuckDB does.
		var rows [][]any
		for _, c := range node.Schema() {
			if !c.Hidden {
				rows = append(rows, []any{c.Name, c.T.String(), "YES", nil, nil})
			}
		}
		return rowsResult(describeColumns, rows), nil
	}
	return explainResult(node), nil
}

// explainResult renders a plan one line per row.
func explainResult(node plan.Node) *Result {
	var rows [][]any
	for _, line := range strings.Split(strings.TrimRight(plan.Explain(node), "\n"), "\n") {
		rows = append(rows, []any{line})
	}
	return rowsResult([]Column{{Name: "plan", Type: types.TVarchar}}, rows)
}

func (e *Engine) show(s *sql.Stmt, n *ast.ShowStmt) (*Result, error) {
	switch {
	case n.Pattern != nil || n.Where != nil:
		return nil, s.ErrorAtPos(s.KeywordPos("LIKE", "ILIKE", "WHERE"), "SHOW ... LIKE and SHOW ... WHERE are not supported; SHOW lists everything")
	case n.Full:
		return nil, s.ErrorAtPos(s.KeywordPos("FULL"), "SHOW FULL is not supported")
	case n.DBName != "":
		return nil, s.ErrorAtPos(s.KeywordPos("FROM", "IN"), "SHOW ... FROM %s is not supported: there is one schema of tables (system's are read with SELECT ... FROM system.name)", n.DBName)
	}
	switch n.Tp {
	case ast.ShowTables:
		var names []string
		for _, t := range e.tables {
			names = append(names, t.name)
		}
		for _, v := range e.views {
			names = append(names, v.name)
		}
		for _, v := range e.logical {
			names = append(names, v.name)
		}
		return namesResult(sortStrings(names)), nil
	case ast.ShowColumns:
		name := n.Table.Name.O
		if n.Table.Schema.L == "system" {
			name = "system." + n.Table.Name.L
		}
		rel, ok := e.Relation(name)
		if !ok {
			return nil, s.ErrorAt(n.Table.Name.O, "table %s does not exist", name)
		}
		return e.describe(rel), nil
	}
	return nil, s.ErrorAtPos(s.Pos, "this SHOW statement is not supported")
}

// showCreate is SHOW CREATE {TABLE | [MATERIALIZED] VIEW | SINK} name: the statement that
// made it, as it was written (one row: name, create_statement). VIEW names a view of either
// kind, as DROP VIEW does.
func (e *Engine) showCreate(s *sql.Stmt) (*Result, error) {
	kinds := map[string][]catalog.Kind{
		"TABLE": {catalog.KindTable}, "VIEW": {catalog.KindView, catalog.KindLogicalView},
		"MATERIALIZED VIEW": {catalog.KindView}, "SINK": {catalog.KindSink},
	}[s.From]
	ent, ok := e.cat.Lookup(s.Name)
	if !ok || !slices.Contains(kinds, ent.Kind) {
		return nil, s.ErrorAt(s.Name, "%s %s does not exist", strings.ToLower(s.From), s.Name)
	}
	cols := []Column{{Name: "name", Type: types.TVarchar}, {Name: "create_statement", Type: types.TVarchar}}
	return rowsResult(cols, [][]any{{ent.Name, ent.SQL}}), nil
}

// describeColumns are the columns of DESCRIBE's result.
var describeColumns = []Column{{"column_name", types.TVarchar}, {"column_type", types.TVarchar}, {"null", types.TVarchar}, {"key", types.TVarchar}, {"extra", types.TVarchar}}

func (e *Engine) describe(rel *plan.Relation) *Result {
	var rows [][]any
	t, _ := rel.Handle.(*tableObj)
	for i, c := range rel.Cols {
		null := "YES"
		if c.NotNull {
			null = "NO"
		}
		var key, extra any
		if t != nil {
			for _, k := range t.data.PK {
				if k == i {
					key = "PRI"
				}
			}
			if i == t.wmCol {
				extra = "WATERMARK AS " + t.wmText
			}
		}
		rows = append(rows, []any{c.Name, c.Type.String(), null, key, extra})
	}
	return rowsResult(describeColumns, rows)
}
