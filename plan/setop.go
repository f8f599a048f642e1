package plan

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

func (b *Binder) bindSetOpr(n *ast.SetOprStmt, outer *scope) (Node, error) {
	defer b.pushCTEs(n.With)()
	node, err := b.bindSetList(n.SelectList, outer)
	if err != nil {
		return nil, err
	}
	var keys []exec.SortKey
	if n.OrderBy != nil {
		cols := node.Schema()
		for _, item := range n.OrderBy.Items {
			expr, key := orderBy(item)
			idx := -1
			switch e := expr.(type) {
			case *ast.PositionExpr:
				idx = e.N - 1
			case *ast.ColumnNameExpr:
				for i, c := range cols {
					if strings.EqualFold(c.Name, e.Name.Name.O) {
						idx = i
						break
					}
				}
			}
			if idx < 0 || idx >= len(cols) {
				return nil, b.errAt(expr, "ORDER BY of a set operation must name an output column or position")
			}
			key.Col = idx
			keys = append(keys, key)
		}
		if !b.Streaming { // a view is a set: see bindSelect
			node = &Sort{Input: node, Keys: keys}
		}
	}
	if n.Limit != nil {
		return b.bindLimit(n.Limit, node, keys)
	}
	return node, nil
}

// bindSetList binds a chain of set operations. INTERSECT binds tighter than UNION and
// EXCEPT (as in the SQL standard, MySQL and DuckDB); the rest apply left to right.
func (b *Binder) bindSetList(l *ast.SetOprSelectList, outer *scope) (Node, error) {
	type term struct {
		node Node
		op   ast.SetOprType // how it joins the previous term
		at   ast.Node
	}
	var terms []term
	for i, s := range l.Selects {
		var node Node
		var err error
		var op *ast.SetOprType
		switch x := s.(type) {
		case *ast.SelectStmt:
			node, err = b.bindSelect(x, outer)
			op = x.AfterSetOperator
		case *ast.SetOprSelectList:
			node, err = b.bindSetList(x, outer)
			op = x.AfterSetOperator
		default:
			return nil, b.errAt(l, "unsupported set operation operand")
		}
		if err != nil {
			return nil, err
		}
		t := term{node: node, at: s}
		if i > 0 {
			t.op = *op
		}
		// INTERSECT first: fold into the previous term.
		if i > 0 && (t.op == ast.Intersect || t.op == ast.IntersectAll) {
			prev := &terms[len(terms)-1]
			if prev.node, err = b.setOp(prev.node, node, t.op, s); err != nil {
				return nil, err
			}
			continue
		}
		terms = append(terms, t)
	}
	acc := terms[0].node
	for _, t := range terms[1:] {
		var err error
		if acc, err = b.setOp(acc, t.node, t.op, t.at); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func (b *Binder) setOp(l, r Node, op ast.SetOprType, at ast.Node) (Node, error) {
	lc, rc := l.Schema(), r.Schema()
	if len(lc) != len(rc) {
		return nil, b.Stmt.ErrorAtPos(b.Stmt.PosAfter(nil, strings.Fields(setOpName(op))[0]), "each side of %s must have the same number of columns: %d and %d", setOpName(op), len(lc), len(rc))
	}
	cols := make([]Col, len(lc))
	for i := range lc {
		t, err := exec.CommonType(lc[i].T, rc[i].T)
		if err != nil {
			return nil, b.errAt(at, "column %d of %s: %s", i+1, setOpName(op), err)
		}
		cols[i] = Col{Name: lc[i].Name, T: t}
	}
	lp, err := coerceAll(l, cols)
	if err != nil {
		return nil, b.errAt(at, "%s", err)
	}
	rp, err := coerceAll(r, cols)
	if err != nil {
		return nil, b.errAt(at, "%s", err)
	}
	switch op {
	case ast.UnionAll:
		return &Union{Inputs: []Node{lp, rp}}, nil
	case ast.Union:
		return distinct(&Union{Inputs: []Node{lp, rp}}), nil
	case ast.Intersect, ast.Except, ast.IntersectAll, ast.ExceptAll:
		return b.intersectExcept(lp, rp, cols, op), nil
	}
	return nil, b.errAt(at, "%s is not supported", setOpName(op))
}

// intersectExcept tags each side's rows and counts them per distinct row (l, r). INTERSECT
// keeps the rows with l > 0 and r > 0, EXCEPT those with l > 0 and r = 0; the ALL forms keep
// LEAST(l, r) and l - r copies of each row.
func (b *Binder) intersectExcept(l, r Node, cols []Col, op ast.SetOprType) Node {
	tag := func(n Node, left bool) Node {
		exprs := make([]exec.Expr, 0, len(cols)+2)
		pc := append([]Col{}, cols...)
		for i, c := range cols {
			exprs = append(exprs, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
		}
		one, zero := &exec.Const{V: int64(1), T: types.TBigInt}, &exec.Const{V: int64(0), T: types.TBigInt}
		if left {
			exprs = append(exprs, one, zero)
		} else {
			exprs = append(exprs, zero, one)
		}
		pc = append(pc, Col{Name: "l", T: types.TBigInt}, Col{Name: "r", T: types.TBigInt})
		return &Project{Input: n, Exprs: exprs, cols: pc}
	}
	u := &Union{Inputs: []Node{tag(l, true), tag(r, false)}}
	k := len(cols)
	aggCols := append(append([]Col{}, cols...), Col{Name: "l", T: types.TBigInt}, Col{Name: "r", T: types.TBigInt})
	agg := &Aggregate{Input: u, NumKeys: k, cols: aggCols, Aggs: []exec.AggSpec{
		{Fn: exec.AggSum, Arg: k, In: types.TBigInt}, {Fn: exec.AggSum, Arg: k + 1, In: types.TBigInt}}}
	lc, rc := &exec.ColRef{Idx: k, T: types.TBigInt}, &exec.ColRef{Idx: k + 1, T: types.TBigInt}
	switch op {
	case ast.IntersectAll, ast.ExceptAll:
		count, _ := exec.NewFunc("least", []exec.Expr{lc, rc})
		if op == ast.ExceptAll {
			count, _ = exec.NewBinary("-", lc, rc)
		}
		exprs := make([]exec.Expr, 0, k+1)
		for i, c := range cols {
			exprs = append(exprs, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
		}
		proj := &Project{Input: agg, Exprs: append(exprs, count), cols: append(append([]Col{}, cols...), Col{Name: "n", T: types.TBigInt})}
		return prefix(&Repeat{Input: proj, Col: k}, k)
	}
	zero := &exec.Const{V: int64(0), T: types.TBigInt}
	lpos, _ := exec.NewBinary(">", lc, zero)
	rop := "="
	if op == ast.Intersect {
		rop = ">"
	}
	rcond, _ := exec.NewBinary(rop, rc, zero)
	pred, _ := exec.NewBinary("AND", lpos, rcond)
	return prefix(&Filter{Input: agg, Pred: pred}, k)
}

func coerceAll(n Node, cols []Col) (Node, error) {
	sch := n.Schema()
	same := true
	exprs := make([]exec.Expr, len(cols))
	for i, c := range cols {
		var e exec.Expr = &exec.ColRef{Idx: i, T: sch[i].T, Name: sch[i].Name}
		if sch[i].T != c.T {
			same = false
			var err error
			if e, err = Assignable(e, c.T); err != nil {
				return nil, err
			}
		}
		exprs[i] = e
	}
	if same {
		return n, nil
	}
	out := make([]Col, len(cols))
	for i := range cols {
		out[i] = Col{Name: sch[i].Name, Table: sch[i].Table, T: cols[i].T}
	}
	return &Project{Input: n, Exprs: exprs, cols: out}, nil
}

func setOpName(op ast.SetOprType) string {
	switch op {
	case ast.Union:
		return "UNION"
	case ast.UnionAll:
		return "UNION ALL"
	case ast.Except:
		return "EXCEPT"
	case ast.Intersect:
		return "INTERSECT"
	}
	return "a set operation"
}

// Assignable converts a value to a column's type for INSERT, UPDATE and UNION: implicit
// casts, plus narrowing between numeric types (checked for range per value), as SQL
// assignment does.
func Assignable(x exec.Expr, t types.T) (exec.Expr, error) {
	y, err := exec.Coerce(x, t)
	if err == nil {
		return y, nil
	}
	if x.Type().IsNumeric() && t.IsNumeric() {
		return exec.NewCast(x, t, false)
	}
	return nil, err
}
