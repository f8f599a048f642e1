package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/table"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
)

func (e *Engine) targetTable(s *sql.Stmt, refs *ast.TableRefsClause) (*tableObj, error) {
	if refs == nil || refs.TableRefs == nil {
		return nil, s.ErrorAtPos(s.Pos, "missing table")
	}
	j := refs.TableRefs
	if j.Right != nil {
		return nil, s.ErrorAtPos(s.Pos, "statements over several tables are not supported")
	}
	ts, ok := j.Left.(*ast.TableSource)
	if !ok {
		return nil, s.ErrorAtPos(s.Pos, "unsupported target")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, s.ErrorAtPos(s.Pos, "unsupported target")
	}
	name := tn.Name.O
	t, ok := e.tables[strings.ToLower(name)]
	if !ok {
		if _, isView := e.views[strings.ToLower(name)]; isView {
			return nil, s.ErrorAt(name, "cannot write to materialized view %s", name)
		}
		if _, isView := e.logical[strings.ToLower(name)]; isView {
			return nil, s.ErrorAt(name, "cannot write to view %s: a view stores no rows; write to the tables it reads", name)
		}
		if _, ok := e.Relation(name); ok || tn.Schema.L == "system" {
			return nil, s.ErrorAt(name, "cannot write to system table %s", strings.TrimPrefix(tn.Schema.L+"."+name, "."))
		}
		_, err := e.binder(context.Background(), s, nil).BindQuery(&ast.SelectStmt{Fields: &ast.FieldList{}, From: refs})
		if err == nil {
			err = s.ErrorAt(name, "table %s not found", name)
		}
		return nil, err
	}
	return t, nil
}

// refuseModifiers refuses MySQL's IGNORE, priority and QUICK modifiers of a write, which
// the parser accepts: each would change what the statement does (INSERT IGNORE keeps the old
// row where streamsql's INSERT replaces it), so none is silently dropped.
func refuseModifiers(s *sql.Stmt, verb string, ignore bool, prio mysql.PriorityEnum, quick bool) error {
	switch {
	case ignore && verb == "INSERT":
		return s.ErrorAtPos(s.KeywordPos("IGNORE"), "INSERT IGNORE is not supported: an INSERT into a PRIMARY KEY table replaces the row with the same key")
	case ignore:
		return s.ErrorAtPos(s.KeywordPos("IGNORE"), "%s IGNORE is not supported", verb)
	case prio != mysql.NoPriority:
		return s.ErrorAtPos(s.KeywordPos("LOW_PRIORITY", "HIGH_PRIORITY", "DELAYED"), "%s %s is not supported", verb, mysql.Priority2Str[prio])
	case quick:
		return s.ErrorAtPos(s.KeywordPos("QUICK"), "DELETE QUICK is not supported")
	}
	return nil
}

func (e *Engine) insertStmt(ctx context.Context, s *sql.Stmt, n *ast.InsertStmt, args []any) (*Result, error) {
	t, err := e.targetTable(s, n.Table)
	if err != nil {
		return nil, err
	}
	if err := refuseModifiers(s, "INSERT", n.IgnoreErr, n.Priority, false); err != nil {
		return nil, err
	}
	if n.IsReplace || len(n.OnDuplicate) > 0 || n.Setlist {
		return nil, s.ErrorAtPos(s.Pos, "only INSERT INTO t [(columns)] VALUES ... | SELECT ... is supported")
	}
	names := make([]string, len(n.Columns))
	for i, c := range n.Columns {
		names[i] = c.Name.O
	}
	target, err := t.targetColumns(s, names)
	if err != nil {
		return nil, err
	}
	var b *exec.Batch
	if n.Select != nil {
		b, err = e.insertSelect(ctx, s, t, target, n.Select, args)
	} else {
		b, err = e.insertValues(ctx, s, t, target, n.Lists, args)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // cancelled before anything was stored
	}
	if err := e.insertBatch(t, b); err != nil {
		return nil, nullAt(s, err, func(row, col int) (sql.Pos, bool) {
			for k, c := range target {
				if c == col && n.Lists != nil && row < len(n.Lists) {
					return s.PosOf(n.Lists[row][k]), true
				}
			}
			return sql.Pos{}, false
		})
	}
	return &Result{RowsAffected: int64(b.N)}, nil
}

// targetColumns resolves an INSERT's column list (all columns when empty).
func (t *tableObj) targetColumns(s *sql.Stmt, names []string) ([]int, error) {
	target := make([]int, 0, len(t.cols))
	if len(names) == 0 {
		for i := range t.cols {
			target = append(target, i)
		}
		return target, nil
	}
	seen := map[int]bool{}
	for _, name := range names {
		i := t.colIndex(name)
		if i < 0 {
			return nil, s.ErrorAt(name, "unknown column %s in table %s", name, t.name)
		}
		if seen[i] {
			return nil, s.ErrorAt(name, "column %s is listed twice", name)
		}
		seen[i] = true
		target = append(target, i)
	}
	return target, nil
}

// insertLiterals runs the parser's fast path: INSERT ... VALUES of plain literals.
func (e *Engine) insertLiterals(s *sql.Stmt, args []any) (*Result, error) {
	t, ok := e.tables[strings.ToLower(s.Name)]
	if !ok {
		ref := &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{Source: &ast.TableName{Name: ast.NewCIStr(s.Name)}}}}
		_, err := e.targetTable(s, ref)
		return nil, err
	}
	target, err := t.targetColumns(s, s.Columns)
	if err != nil {
		return nil, err
	}
	builders := make([]*exec.Builder, len(t.cols))
	for i, c := range t.cols {
		builders[i] = exec.NewBuilder(c.Type, len(s.Rows))
	}
	given := make([]bool, len(t.cols))
	for _, i := range target {
		given[i] = true
	}
	param := 0
	for r, row := range s.Rows {
		if len(row) != len(target) {
			return nil, s.ErrorAtPos(s.LitPos(row[0]), "row %d of VALUES has %d values, %d expected", r+1, len(row), len(target))
		}
		for k, l := range row {
			col := target[k]
			if v, ok := directValue(l, t.cols[col].Type); ok {
				builders[col].Append(v)
				continue
			}
			var x exec.Expr
			if l.Kind == sql.LitParam {
				x, err = plan.ParamConst(args[param])
				param++
			} else {
				x, err = plan.LiteralConst(l)
			}
			if err != nil {
				return nil, columnError(s, s.LitPos(l), t.cols[col].Name, err)
			}
			v, err := constValue(x, t.cols[col].Type)
			if err != nil {
				return nil, columnError(s, s.LitPos(l), t.cols[col].Name, err)
			}
			builders[col].Append(v)
		}
		for i := range t.cols {
			if !given[i] {
				builders[i].Append(nil)
			}
		}
	}
	b := &exec.Batch{N: len(s.Rows), Cols: make([]arrow.Array, len(t.cols))}
	for i, bl := range builders {
		b.Cols[i] = bl.Finish()
	}
	if err := e.insertBatch(t, b); err != nil {
		return nil, nullAt(s, err, func(row, col int) (sql.Pos, bool) {
			for k, c := range target {
				if c == col {
					return s.LitPos(s.Rows[row][k]), true
				}
			}
			return sql.Pos{}, false
		})
	}
	return &Result{RowsAffected: int64(b.N)}, nil
}

func (e *Engine) insertValues(ctx context.Context, s *sql.Stmt, t *tableObj, target []int, lists [][]ast.ExprNode, args []any) (*exec.Batch, error) {
	bd := e.binder(ctx, s, args)
	builders := make([]*exec.Builder, len(t.cols))
	for i, c := range t.cols {
		builders[i] = exec.NewBuilder(c.Type, len(lists))
	}
	given := make([]bool, len(t.cols))
	for _, i := range target {
		given[i] = true
	}
	for r, row := range lists {
		if len(row) != len(target) {
			at := s.Pos
			if len(row) > 0 {
				at = s.PosOf(row[0])
			}
			return nil, s.ErrorAtPos(at, "row %d of VALUES has %d values, %d expected", r+1, len(row), len(target))
		}
		for k, ex := range row {
			col := target[k]
			x, err := bd.BindScalar(ex, nil)
			if err != nil {
				return nil, err
			}
			v, err := constValue(x, t.cols[col].Type)
			if err != nil {
				return nil, columnError(s, s.PosOf(ex), t.cols[col].Name, err)
			}
			builders[col].Append(v)
		}
		for i := range t.cols {
			if !given[i] {
				builders[i].Append(nil)
			}
		}
	}
	b := &exec.Batch{N: len(lists), Cols: make([]arrow.Array, len(t.cols))}
	for i, bl := range builders {
		b.Cols[i] = bl.Finish()
	}
	return b, nil
}

// directValue converts the commonest literal/column pairs of a bulk INSERT without building
// a constant expression; ok is false for everything else.
func directValue(l sql.Literal, t types.T) (any, bool) {
	switch {
	case l.Kind == sql.LitNull:
		return nil, true
	case l.Kind == sql.LitString && t.Kind == types.Varchar:
		return l.Text, true
	case l.Kind == sql.LitTimestamp && t.Kind == types.Timestamp:
		v, err := types.ParseTimestamp(l.Text)
		return v, err == nil
	case l.Kind == sql.LitInt && t.Kind == types.BigInt:
		v, err := strconv.ParseInt(l.Text, 10, 64)
		if l.Neg {
			v = -v
		}
		return v, err == nil
	case l.Kind == sql.LitBool && t.Kind == types.Bool:
		return l.Bool, true
	}
	return nil, false
}

// constValue evaluates a bound constant expression as a value of type t (implicit cast).
func constValue(x exec.Expr, t types.T) (any, error) {
	if c, ok := x.(*exec.Const); ok {
		if c.V == nil {
			return nil, nil
		}
		if c.T == t || (c.T.Phys() == t.Phys() && t.Kind == types.Varchar) {
			return c.V, nil
		}
		if c.T.Kind == types.BigInt {
			v := c.V.(int64)
			switch t.Kind {
			case types.BigInt:
				return v, nil
			case types.Int:
				if v < math.MinInt32 || v > math.MaxInt32 {
					return nil, fmt.Errorf("value %d out of range for INT", v)
				}
				return v, nil
			case types.Double:
				return float64(v), nil
			}
		}
		if c.T.Kind == types.Int && t.Kind == types.BigInt {
			return c.V, nil
		}
		if c.T.Kind == types.Timestamp && t.Kind == types.Date && c.V.(int64)%types.MsPerDay == 0 {
			// A midnight timestamp (a time.Time read from a DATE column) is that date.
			return c.V.(int64) / types.MsPerDay, nil
		}
	}
	ce, err := exec.Coerce(x, t)
	if err != nil {
		return nil, err
	}
	return exec.EvalConst(ce)
}

func (e *Engine) insertSelect(ctx context.Context, s *sql.Stmt, t *tableObj, target []int, q ast.ResultSetNode, args []any) (*exec.Batch, error) {
	node, err := e.binder(ctx, s, args).BindQuery(q)
	if err != nil {
		return nil, err
	}
	ts := make([]types.T, len(target))
	for k, i := range target {
		ts[k] = t.cols[i].Type
	}
	if node, err = plan.CoerceTo(node, ts); err != nil {
		return nil, s.ErrorAtPos(s.PosAfter([]string{"INSERT"}, "SELECT"), "INSERT INTO %s: %s", t.name, err)
	}
	coll, err := e.run(ctx, node)
	if err != nil {
		return nil, placed(s, err)
	}
	rows := coll.Rows()
	full := make([][]any, len(rows))
	for r, row := range rows {
		f := make([]any, len(t.cols))
		for k, i := range target {
			f[i] = row[k]
		}
		full[r] = f
	}
	return exec.RowsToBatch(full, t.types()), nil
}

// batchWriter is the part of a store batch a write may add to.
type batchWriter interface {
	PutMeta(name string, v []byte)
}

// insertBatch validates, stores durably, and then feeds the table's views.
func (e *Engine) insertBatch(t *tableObj, b *exec.Batch) error {
	return e.insertBatchWith(t, b, nil, nil)
}

// insertBatchWith is insertBatch for a connector: parts gives each row's partition (nil:
// rows of a statement), and extra adds writes (the source's position) to the same commit.
// Rows from partitions advance the table's watermark through t.parts; since that depends on
// more than the rows, the watermarks before each row are stored with them (wmRunsKey) for
// replays to reuse.
func (e *Engine) insertBatchWith(t *tableObj, b *exec.Batch, parts []int32, extra func(batchWriter)) error {
	if b.N == 0 {
		return nil
	}
	if err := t.validate(b); err != nil {
		return err
	}
	var before []int64
	after := t.wm.W
	shifted := false
	if col, d, ok := exec.ColumnShift(t.wmExpr); ok && (parts == nil || t.parts == nil) && b.Cols[col].NullN() == 0 {
		before, after, shifted = t.wm.AdvanceShifted(exec.Int64s(b.Cols[col]), d)
	}
	if t.wmExpr != nil && !shifted {
		vals, err := t.wmValues(b)
		if err != nil {
			return err
		}
		if parts != nil && t.parts != nil {
			before, after = t.parts.Advance(parts, vals, t.wm.W)
			runs := watermark.EncodeRuns(before, after)
			marks := &exec.StateWriter{}
			marks.Int(int64(len(t.parts.Marks())))
			for _, m := range t.parts.Marks() {
				marks.Int(m)
			}
			outer := extra
			extra = func(wb batchWriter) {
				wb.PutMeta(wmRunsKey(t, e.seq.Last()), runs)
				wb.PutMeta(wmPartsKey(t), marks.Buf)
				if outer != nil {
					outer(wb)
				}
			}
		} else {
			before, after = t.wm.Advance(vals)
		}
	}
	ch, err := t.data.Insert(b)
	if err != nil {
		return err
	}
	if err := e.commit(ch, extra); err != nil {
		return err
	}
	prevW := t.wm.W
	t.wm.Set(after)
	// Views see every version in acceptance order: the rows replaced (stored versions, and
	// rows of this statement superseded by a later one with the same key) are retracted and
	// all rows inserted, so a temporal join keeps each as a version while aggregates net
	// them out.
	e.feed(t, ch.Deleted, &exec.Batch{Cols: b.Cols, N: b.N, WM: before}, prevW)
	return nil
}

// wmRunsKey names the stored watermarks of a table's segment seq (see insertBatchWith).
func wmRunsKey(t *tableObj, seq uint64) string {
	return fmt.Sprintf("wmruns/%d/%020d", t.entry.ID, seq)
}

// commitMeta commits writes that touch no table (a position past bad records, a
// watermark).
func (e *Engine) commitMeta(extra func(batchWriter)) error {
	wb := e.store.NewBatch()
	extra(wb)
	if err := e.store.Commit(wb); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (e *Engine) commit(ch *table.Change, extra func(batchWriter)) error {
	from := e.seq.Last()
	wb := e.store.NewBatch()
	apply, err := ch.Write(wb)
	if err != nil {
		wb.Discard()
		return err
	}
	if extra != nil {
		extra(wb)
	}
	if err := e.store.Commit(wb); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	e.dirty, e.commitFrom = true, from
	apply()
	return nil
}

// validate checks NOT NULL columns; a NULL event time refuses the statement (SPEC.md §3).
// The error is a *nullError, which an INSERT places at the value (nullAt).
func (t *tableObj) validate(b *exec.Batch) error {
	for i, c := range t.cols {
		if a := b.Cols[i]; c.NotNull && a.NullN() > 0 {
			row := 0
			for a.IsValid(row) {
				row++
			}
			msg := fmt.Sprintf("column %s of %s is NOT NULL: NULL given in row %d", c.Name, t.name, row+1)
			if i == t.wmCol {
				msg = fmt.Sprintf("event-time column %s of %s is NULL in row %d: the statement is refused and applies nothing", c.Name, t.name, row+1)
			}
			return &nullError{row: row, col: i, msg: msg}
		}
	}
	return nil
}

// nullError is a NULL in a NOT NULL column: row and col of the batch.
type nullError struct {
	row, col int
	msg      string
}

func (e *nullError) Error() string { return e.msg }

// nullAt places a *nullError of an INSERT at the row's value for the column (pos gives it,
// ok false when the column was not given), else at the statement.
func nullAt(s *sql.Stmt, err error, pos func(row, col int) (sql.Pos, bool)) error {
	var ne *nullError
	if !errors.As(err, &ne) {
		return err
	}
	p, ok := pos(ne.row, ne.col)
	if !ok {
		p = s.Pos
	}
	return s.ErrorAtPos(p, "%s", ne.msg)
}

// change builds the one batch a table change reaches views as: the removed rows as
// retractions (judged against prevW, the watermark before the statement) and the added rows
// with the watermark before each; in an upsert table each replaced version sits right before
// its replacement. One batch keeps an upsert's -old/+new together (an update for
// subscribers, a new version for temporal joins).
func (t *tableObj) change(removed, added *exec.Batch, prevW int64) *exec.Batch {
	if removed != nil && removed.N > 0 {
		w := make([]int64, removed.N)
		for i := range w {
			w[i] = -1
		}
		r := &exec.Batch{Cols: removed.Cols, N: removed.N, W: w}
		if t.wmExpr != nil {
			r.WM = make([]int64, removed.N)
			for i := range r.WM {
				r.WM[i] = prevW
			}
		}
		removed = r
	}
	change := exec.ConcatChanges(removed, added)
	if len(t.data.PK) == 0 || removed == nil || removed.N == 0 || added == nil || added.N == 0 {
		return change
	}
	// In an upsert table, put each replaced version right before the version replacing it,
	// so subscribers see the pair as an update (-U, +U), and judge it against the watermark
	// before that version, as if the rows came one by one. A key's versions are its stored
	// one (if any) and its rows of the statement, in order; all but the last are removed —
	// the stored one first (table.Insert) — so the m-th removed replaces the row after it.
	removedOf, addedOf := map[string][]int32{}, map[string][]int32{}
	for i := 0; i < removed.N; i++ {
		k := t.data.KeyOf(removed, i)
		removedOf[k] = append(removedOf[k], int32(i))
	}
	for i := 0; i < added.N; i++ {
		k := t.data.KeyOf(added, i)
		addedOf[k] = append(addedOf[k], int32(i))
	}
	matched := make([]bool, removed.N)
	pairOf := make([]int32, added.N)
	for i := range pairOf {
		pairOf[i] = -1
	}
	for k, as := range addedOf {
		rs := removedOf[k]
		first := len(as) - len(rs) // 1: the key had no stored version
		for m, i := range as {
			if r := m - first; first >= 0 && r >= 0 && r < len(rs) {
				pairOf[i] = rs[r]
				matched[rs[r]] = true
				if change.WM != nil && added.WM != nil {
					change.WM[rs[r]] = added.WM[i]
				}
			}
		}
	}
	idx := make([]int32, 0, change.N)
	for i, m := range matched {
		if !m {
			idx = append(idx, int32(i))
		}
	}
	for i, r := range pairOf {
		if r >= 0 {
			idx = append(idx, r)
		}
		idx = append(idx, int32(removed.N+i))
	}
	out := exec.Take(change, idx, t.types())
	out.Updates = true
	return out
}

// feed queues a table change for every view reading the table (see ingest.go).
func (e *Engine) feed(t *tableObj, removed, added *exec.Batch, prevW int64) {
	e.enqueue(t, t.change(removed, added, prevW), removed == nil || removed.N == 0, prevW, e.commitFrom)
}

// splitBatch cuts an insert-only change into batches of random sizes (the metamorphic test
// hook: a view's result must not depend on where batches begin and end).
func (e *Engine) splitBatch(b *exec.Batch, ts []types.T) []*exec.Batch {
	sizes := []int{1, 2, 3, 7, 64}
	var out []*exec.Batch
	for start := 0; start < b.N; {
		n := min(sizes[e.split.Intn(len(sizes))], b.N-start)
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(start + i)
		}
		out = append(out, exec.Take(b, idx, ts))
		start += n
	}
	return out
}

// deliver sends the listener's view each step's batch, then the watermark after it. A view
// reading the table more than once (a self-join, a self-union) gets each batch cut before
// every row that is late by its own watermark when that rose past the last one sent to the
// inputs, each piece sent to every input after the least watermark of the rows from the cut
// on: an operator with two of the inputs then judges the row — and records it late —
// against the same watermark on both sides, whatever the batching: its own, unless a later
// row of the batch carries an older one. Other rows need no cut: by either watermark they
// are not late; a batch with no cut goes to each input in turn, with the watermark after it.
func (l *listener) deliver(steps []step) error {
	for _, s := range steps {
		ps := l.pieces(s.b)
		if len(ps) == 1 && ps[0].wm == exec.NoWatermark {
			// Nothing to cut: each input gets the batch and the watermark after it in turn.
			for _, o := range l.outs {
				if err := o.EmitBatch(s.b); err != nil {
					return err
				}
				if s.wm != exec.NoWatermark {
					if err := o.Emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: s.wm}); err != nil {
						return err
					}
				}
			}
			l.sent = max(l.sent, s.wm)
			continue
		}
		for _, p := range ps {
			if p.wm != exec.NoWatermark {
				if err := l.emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: p.wm}); err != nil {
					return err
				}
			}
			for _, o := range l.outs {
				if err := o.EmitBatch(p.b); err != nil {
					return err
				}
			}
		}
		if s.wm != exec.NoWatermark {
			if err := l.emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: s.wm}); err != nil {
				return err
			}
		}
	}
	return nil
}

// pieces cuts b for the listener (see deliver): each piece with the watermark to send before
// it (exec.NoWatermark: none).
func (l *listener) pieces(b *exec.Batch) []step {
	if b == nil || b.N == 0 || len(l.outs) < 2 || l.timeCol < 0 || b.WM == nil {
		return []step{{b, exec.NoWatermark}}
	}
	times := b.Cols[l.timeCol]
	ts := exec.Int64s(times)
	// A watermark sent mid-batch must not pass a later row's (an upsert's retraction carries
	// the one before the statement): a cut before row i sends the least from i on.
	low := make([]int64, b.N)
	low[b.N-1] = b.WM[b.N-1]
	for i := b.N - 2; i >= 0; i-- {
		low[i] = min(b.WM[i], low[i+1])
	}
	var out []step
	start, wm, base := 0, exec.NoWatermark, l.sent
	for i := 0; i < b.N; i++ {
		if w := low[i]; w > base && times.IsValid(i) && ts[i] <= b.WM[i] {
			if i > start {
				out = append(out, step{b.Slice(start, i), wm})
				start = i
			}
			wm, base = w, w
		}
	}
	return append(out, step{b.Slice(start, b.N), wm})
}

// emit sends a message to each of the view's inputs reading the table.
func (l *listener) emit(m exec.Msg) error {
	if m.Kind == exec.MsgWatermark {
		l.sent = max(l.sent, m.Watermark)
	}
	for _, o := range l.outs {
		if err := o.Emit(m); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) deleteStmt(ctx context.Context, s *sql.Stmt, n *ast.DeleteStmt, args []any) (*Result, error) {
	if err := refuseModifiers(s, "DELETE", n.IgnoreErr, n.Priority, n.Quick); err != nil {
		return nil, err
	}
	if n.IsMultiTable || n.Limit != nil || n.Order != nil {
		return nil, s.ErrorAtPos(s.Pos, "only DELETE FROM t [WHERE ...] is supported")
	}
	t, err := e.targetTable(s, n.TableRefs)
	if err != nil {
		return nil, err
	}
	ch, err := e.deleteWhere(ctx, s, t, n.Where, args)
	if err != nil || ch.Deleted == nil {
		return &Result{}, err
	}
	if err := e.commit(ch, nil); err != nil {
		return nil, err
	}
	e.feed(t, ch.Deleted, nil, t.wm.W)
	return &Result{RowsAffected: int64(ch.Deleted.N)}, nil
}

// deleteWhere prepares the removal of the current rows of t matching where (all when nil).
func (e *Engine) deleteWhere(ctx context.Context, s *sql.Stmt, t *tableObj, where ast.ExprNode, args []any) (*table.Change, error) {
	pred, err := e.rowPredicate(ctx, s, t, where, args)
	if err != nil {
		return nil, err
	}
	return t.data.Delete(pred)
}

// rowPredicate binds a WHERE over a table and returns the per-segment row selector.
func (e *Engine) rowPredicate(ctx context.Context, s *sql.Stmt, t *tableObj, where ast.ExprNode, args []any) (func(*exec.Batch) ([]bool, error), error) {
	if where == nil {
		return func(b *exec.Batch) ([]bool, error) {
			m := make([]bool, b.N)
			for i := range m {
				m[i] = true
			}
			return m, nil
		}, nil
	}
	bd := e.binder(ctx, s, args)
	pred, err := bd.BindPredicate(where, t.schema())
	if err != nil {
		return nil, err
	}
	return func(b *exec.Batch) ([]bool, error) {
		a, err := pred.Eval(b)
		if err != nil {
			return nil, err
		}
		m := make([]bool, b.N)
		for _, i := range exec.SelectTrue(a) {
			m[i] = true
		}
		return m, nil
	}, nil
}

func (e *Engine) updateStmt(ctx context.Context, s *sql.Stmt, n *ast.UpdateStmt, args []any) (*Result, error) {
	if err := refuseModifiers(s, "UPDATE", n.IgnoreErr, n.Priority, false); err != nil {
		return nil, err
	}
	if n.MultipleTable || n.Limit != nil || n.Order != nil {
		return nil, s.ErrorAtPos(s.Pos, "only UPDATE t SET ... [WHERE ...] is supported")
	}
	t, err := e.targetTable(s, n.TableRefs)
	if err != nil {
		return nil, err
	}
	bd := e.binder(ctx, s, args)
	exprs := make([]exec.Expr, len(t.cols))
	for i, c := range t.cols {
		exprs[i] = &exec.ColRef{Idx: i, T: c.Type, Name: c.Name}
	}
	for _, a := range n.List {
		i := t.colIndex(a.Column.Name.O)
		if i < 0 {
			return nil, s.ErrorAt(a.Column.Name.O, "unknown column %s in table %s", a.Column.Name.O, t.name)
		}
		for _, k := range t.data.PK {
			if k == i {
				return nil, s.ErrorAt(a.Column.Name.O, "cannot UPDATE primary key column %s; DELETE and INSERT instead", a.Column.Name.O)
			}
		}
		x, err := bd.BindScalar(a.Expr, t.schema())
		if err != nil {
			return nil, err
		}
		if x, err = plan.Assignable(x, t.cols[i].Type); err != nil {
			return nil, s.ErrorAtPos(s.PosOf(a.Expr), "column %s: %s", t.cols[i].Name, err)
		}
		exprs[i] = x
	}
	ch, err := e.deleteWhere(ctx, s, t, n.Where, args)
	if err != nil || ch.Deleted == nil {
		return &Result{}, err
	}
	old := ch.Deleted
	nb := &exec.Batch{N: old.N, Cols: make([]arrow.Array, len(exprs))}
	for i, x := range exprs {
		if nb.Cols[i], err = x.Eval(old); err != nil {
			return nil, err
		}
	}
	if err := t.validate(nb); err != nil {
		return nil, nullAt(s, err, func(_, col int) (sql.Pos, bool) {
			for _, a := range n.List {
				if t.colIndex(a.Column.Name.O) == col {
					return s.PosOf(a.Expr), true
				}
			}
			return sql.Pos{}, false
		})
	}
	var before []int64
	after := t.wm.W
	if t.wmExpr != nil {
		vals, err := t.wmValues(nb)
		if err != nil {
			return nil, err
		}
		before, after = t.wm.Advance(vals)
	}
	ch.Replace(nb)
	if err := e.commit(ch, nil); err != nil {
		return nil, err
	}
	prevW := t.wm.W
	t.wm.Set(after)
	e.feed(t, old, &exec.Batch{Cols: nb.Cols, N: nb.N, WM: before}, prevW)
	return &Result{RowsAffected: int64(old.N)}, nil
}

// columnError reports err, met computing a value of column col at p; a data error raised
// inside the expression (division by zero) names its own place.
func columnError(s *sql.Stmt, p sql.Pos, col string, err error) error {
	var de *exec.DataError
	if errors.As(err, &de) {
		p, err = sql.Pos{Line: de.Pos.Line, Col: de.Pos.Col}, de.Err
	}
	return s.ErrorAtPos(p, "column %s: %s", col, err)
}
