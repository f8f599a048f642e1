package plan

import (
	"math"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// collectWindowFuncs lists the distinct window function calls of a SELECT's list and ORDER BY.
func collectWindowFuncs(sel *ast.SelectStmt) []*ast.WindowFuncExpr {
	var out []*ast.WindowFuncExpr
	seen := map[string]bool{}
	v := &winCollector{fn: func(w *ast.WindowFuncExpr) {
		if t := restore(w); !seen[t] {
			seen[t] = true
			out = append(out, w)
		}
	}}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return out
}

type winCollector struct{ fn func(*ast.WindowFuncExpr) }

func (c *winCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WindowFuncExpr:
		c.fn(x)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (c *winCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

var rankFuncs = map[string]exec.RankFunc{"row_number": exec.RowNumber, "rank": exec.Rank, "dense_rank": exec.DenseRank,
	"lag": exec.Lag, "lead": exec.Lead, "first_value": exec.FirstValue, "last_value": exec.LastValue,
	"count": exec.WinCount, "sum": exec.WinSum, "avg": exec.WinAvg, "min": exec.WinMin, "max": exec.WinMax}

// bindWindowFuncs computes window functions after WHERE, GROUP BY and HAVING: each appends
// its value as a column that the select list and ORDER BY then reference.
func (b *Binder) bindWindowFuncs(wins []*ast.WindowFuncExpr, input Node, post *scope) (Node, *scope, error) {
	s := &scope{cols: append([]Col{}, post.cols...), parent: post.parent, agg: post.agg, win: map[string]int{}}
	for _, w := range wins {
		name := strings.ToLower(w.Name)
		fn, ok := rankFuncs[name]
		if !ok {
			return nil, nil, b.errAt(w, "window function %s is not supported", strings.ToUpper(w.Name))
		}
		if w.Spec.Name.L != "" || w.Spec.Ref.L != "" || w.Distinct {
			return nil, nil, b.errAt(w, "named windows and DISTINCT in window functions are not supported")
		}
		exprs := make([]exec.Expr, 0, len(s.cols)+4)
		for i, c := range s.cols {
			exprs = append(exprs, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
		}
		cols := append([]Col{}, s.cols...)
		add := func(e ast.ExprNode) (int, exec.Expr, error) {
			x, err := b.bindExpr(e, s)
			if err != nil {
				return 0, nil, err
			}
			if r, ok := x.(*exec.ColRef); ok {
				return r.Idx, x, nil
			}
			exprs = append(exprs, x)
			cols = append(cols, Col{Name: restore(e), T: x.Type()})
			return len(exprs) - 1, x, nil
		}
		r := &Rank{Fn: fn, Offset: 1, WindowEnd: -1, Limit: -1, Pos: b.execPos(w)}
		resultT, err := b.windowArgs(w, r, add)
		if err != nil {
			return nil, nil, err
		}
		if w.Spec.PartitionBy != nil {
			for _, it := range w.Spec.PartitionBy.Items {
				i, _, err := add(it.Expr)
				if err != nil {
					return nil, nil, err
				}
				r.PartCols = append(r.PartCols, i)
			}
		}
		if w.Spec.OrderBy != nil {
			for _, it := range w.Spec.OrderBy.Items {
				e, key := orderBy(it)
				i, _, err := add(e)
				if err != nil {
					return nil, nil, err
				}
				key.Col = i
				r.Order = append(r.Order, key)
			}
		}
		if w.Spec.Frame != nil {
			if r.Frame, err = b.frame(w, r.Order, cols); err != nil {
				return nil, nil, err
			}
		}
		// The input with every computed argument, partition and order key (all added now).
		var partSrc Node = input
		if len(exprs) > len(s.cols) {
			partSrc = &Project{Input: input, Exprs: exprs, cols: cols}
		}
		for _, c := range r.PartCols {
			if isWindowEnd(partSrc, c) {
				r.WindowEnd = c
				r.EmitOnClose = b.Stmt != nil && b.Stmt.EmitOnClose
			}
		}
		input = partSrc
		r.Input = input
		r.cols = append(append([]Col{}, cols...), Col{Name: name, T: resultT})
		input = r
		s.cols = r.cols
		s.win[restore(w)] = len(r.cols) - 1
	}
	return input, s, nil
}

// frame binds a window function's explicit frame, ROWS or RANGE BETWEEN start AND end
// (PostgreSQL's rules; GROUPS is not supported). order is the function's ORDER BY over cols.
func (b *Binder) frame(w *ast.WindowFuncExpr, order []exec.SortKey, cols []Col) (*exec.Frame, error) {
	fc := w.Spec.Frame
	if fc.Type == ast.Groups {
		return nil, b.errAt(w, "GROUPS frames are not supported; use ROWS or RANGE")
	}
	f := &exec.Frame{Range: fc.Type == ast.Ranges}
	var keyT types.T
	if f.Range && len(order) == 1 {
		keyT = cols[order[0].Col].T
	}
	bounds := []*exec.Bound{&f.Start, &f.End}
	for i, fb := range []ast.FrameBound{fc.Extent.Start, fc.Extent.End} {
		bd := bounds[i]
		switch {
		case fb.Type == ast.CurrentRow:
			bd.Kind = exec.CurrentRow
		case fb.UnBounded && fb.Type == ast.Preceding:
			bd.Kind = exec.UnboundedPreceding
		case fb.UnBounded:
			bd.Kind = exec.UnboundedFollowing
		default:
			bd.Kind = exec.Following
			if fb.Type == ast.Preceding {
				bd.Kind = exec.Preceding
			}
			off, err := b.frameOffset(w, fb.Expr, f.Range, len(order), keyT)
			if err != nil {
				return nil, err
			}
			bd.Offset = off
		}
	}
	switch {
	case f.Start.Kind == exec.UnboundedFollowing:
		return nil, b.errAt(w, "a frame cannot start at UNBOUNDED FOLLOWING")
	case f.End.Kind == exec.UnboundedPreceding:
		return nil, b.errAt(w, "a frame cannot end at UNBOUNDED PRECEDING")
	case f.Start.Kind == exec.CurrentRow && f.End.Kind == exec.Preceding:
		return nil, b.errAt(w, "a frame starting at the current row cannot end at preceding rows")
	case f.Start.Kind == exec.Following && (f.End.Kind == exec.Preceding || f.End.Kind == exec.CurrentRow):
		return nil, b.errAt(w, "a frame starting at following rows cannot end at preceding rows or the current row")
	}
	return f, nil
}

// frameOffset binds n of a frame's n PRECEDING / n FOLLOWING: a count of rows (ROWS), or a
// distance in the one ORDER BY key's type (RANGE; an INTERVAL for a TIMESTAMP or a DATE), as
// exec.Bound's Offset holds it.
func (b *Binder) frameOffset(w *ast.WindowFuncExpr, e ast.ExprNode, isRange bool, keys int, keyT types.T) (any, error) {
	// Errors stand at an INTERVAL offset, whose place is known; else at the function.
	var at ast.Node = w
	if _, ok := sql.IntervalMillis(e); ok {
		at = e
	}
	if !isRange {
		v, ok := e.(*test_driver.ValueExpr)
		n, isInt := any(nil), false
		if ok {
			n = v.GetValue()
			_, isInt = n.(int64)
			if u, isU := n.(uint64); isU && u <= math.MaxInt64 {
				n, isInt = int64(u), true
			}
		}
		if !isInt || n.(int64) < 0 {
			return nil, b.errAt(at, "a ROWS frame's offset must be a non-negative integer")
		}
		return n, nil
	}
	if keys != 1 {
		return nil, b.errAt(at, "a RANGE frame with an offset needs exactly one ORDER BY column")
	}
	ms, isInterval := sql.IntervalMillis(e)
	switch k := keyT.Kind; {
	case k == types.Timestamp || k == types.Date:
		if !isInterval {
			return nil, b.errAt(at, "a RANGE frame over %s values needs an INTERVAL offset, as in INTERVAL '1' HOUR PRECEDING", keyT)
		}
		if ms < 0 {
			return nil, b.errAt(at, "a RANGE frame's offset must not be negative")
		}
		if k == types.Date {
			if ms%types.MsPerDay != 0 {
				return nil, b.errAt(at, "a RANGE frame over DATE values needs an INTERVAL of whole days")
			}
			return ms / types.MsPerDay, nil
		}
		return ms, nil
	case !keyT.IsNumeric():
		return nil, b.errAt(at, "a RANGE frame with an offset needs a numeric, DATE or TIMESTAMP ORDER BY column, got %s", keyT)
	case isInterval:
		return nil, b.errAt(at, "a RANGE frame over %s values needs a numeric offset, not an INTERVAL", keyT)
	}
	x, err := b.bindExpr(e, &scope{})
	if err != nil {
		return nil, err
	}
	c, isConst := x.(*exec.Const)
	if !isConst || c.V == nil {
		return nil, b.errAt(at, "a RANGE frame's offset must be a constant number")
	}
	if keyT.Phys() == types.PhysFloat64 {
		d, err := exec.Coerce(c, types.TDouble)
		if err != nil {
			return nil, b.wrap(at, err)
		}
		v, err := exec.EvalConst(d)
		if err != nil {
			return nil, b.wrap(at, err)
		}
		if v.(float64) < 0 {
			return nil, b.errAt(at, "a RANGE frame's offset must not be negative")
		}
		return v, nil
	}
	// An exact key (integer or DECIMAL): the offset in the key's unit, however wide — or a
	// Fraction of it, when it has more decimals than the key.
	scale := 0
	switch {
	case c.T.IsInteger():
	case c.T.Kind == types.Decimal:
		scale = int(c.T.Scale)
	default:
		return nil, b.errAt(at, "a RANGE frame over %s values needs an integer or DECIMAL offset, got %s", keyT, c.T)
	}
	v := c.V.(int64)
	if v < 0 {
		return nil, b.errAt(at, "a RANGE frame's offset must not be negative")
	}
	keyScale := 0
	if keyT.Kind == types.Decimal {
		keyScale = int(keyT.Scale)
	}
	if scale > keyScale {
		return exec.Fraction{V: v, Shift: scale - keyScale}, nil
	}
	mul := types.Pow10[keyScale-scale]
	if v > math.MaxInt64/mul {
		return nil, b.errAt(at, "a RANGE frame's offset is out of range")
	}
	return v * mul, nil
}

// windowArgs binds a window function's arguments into r and returns its result type.
func (b *Binder) windowArgs(w *ast.WindowFuncExpr, r *Rank, add func(ast.ExprNode) (int, exec.Expr, error)) (types.T, error) {
	name := strings.ToUpper(w.Name)
	switch r.Fn {
	case exec.RowNumber, exec.Rank, exec.DenseRank:
		if len(w.Args) > 0 {
			return types.T{}, b.errAt(w, "%s takes no arguments", name)
		}
		return types.TBigInt, nil
	}
	if len(w.Args) == 0 {
		return types.T{}, b.errAt(w, "%s needs an argument", name)
	}
	if v, ok := w.Args[0].(*test_driver.ValueExpr); ok && r.Fn == exec.WinCount && v.GetValue() != nil {
		r.Fn = exec.WinCountStar
		return types.TBigInt, nil
	}
	arg, x, err := add(w.Args[0])
	if err != nil {
		return types.T{}, err
	}
	r.Arg = arg
	t := x.Type()
	switch r.Fn {
	case exec.WinCount:
		return types.TBigInt, nil
	case exec.WinAvg:
		if !t.IsNumeric() {
			return types.T{}, b.errAt(w, "AVG needs a numeric argument, got %s", t)
		}
		return types.TDouble, nil
	case exec.WinSum:
		if !t.IsNumeric() {
			return types.T{}, b.errAt(w, "SUM needs a numeric argument, got %s", t)
		}
		return exec.AggSpec{Fn: exec.AggSum, In: t}.ResultType(), nil
	case exec.Lag, exec.Lead:
		if len(w.Args) > 1 {
			o, err := b.bindExpr(w.Args[1], &scope{})
			c, isConst := o.(*exec.Const)
			if err != nil || !isConst {
				return types.T{}, b.errAt(w, "the offset of %s must be a non-negative integer", name)
			}
			off, isInt := c.V.(int64)
			if !isInt || off < 0 {
				return types.T{}, b.errAt(w, "the offset of %s must be a non-negative integer", name)
			}
			r.Offset = off
		}
		if len(w.Args) > 2 {
			d, err := b.bindExpr(w.Args[2], &scope{})
			if err != nil {
				return types.T{}, err
			}
			if d, err = exec.Coerce(d, t); err != nil {
				return types.T{}, b.wrap(w, err)
			}
			if r.Default, err = exec.EvalConst(d); err != nil {
				return types.T{}, b.wrap(w, err)
			}
		}
	}
	return t, nil
}

// isWindowEnd reports whether column col of n is the window_end of a window TVF or the
// window_end key of a windowed aggregate (through filters, projections and other window
// functions): a window whose end the watermark passed takes no more rows.
func isWindowEnd(n Node, col int) bool {
	for {
		n, col = origin(n, col)
		switch x := n.(type) {
		case *Window:
			return col == len(x.Input.Schema())+1 // after window_start
		case *Aggregate:
			return x.Window != nil && col == x.Window.EndKey
		case *Rank:
			if col < 0 || col >= len(x.Input.Schema()) {
				return false
			}
			n = x.Input
		default:
			return false
		}
	}
}
