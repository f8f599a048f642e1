package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// A correlated subquery names columns of the query around it. It is bound once, with each
// outer column as a parameter (outerRef), and evaluated per distinct combination of outer
// values: the plan runs with the parameters set to that row's values (results memoised).

// correlation collects the outer references of one subquery being bound.
type correlation struct {
	outer *scope
	cols  []int // outer column of each parameter
	ts    []types.T
	vals  []any // current parameter values while the subquery runs
}

// outerRef is a parameter of a correlated subquery.
type outerRef struct {
	c    *correlation
	i    int
	name string
}

var _ exec.Expr = (*outerRef)(nil)

func (o *outerRef) Type() types.T { return o.c.ts[o.i] }
func (o *outerRef) Eval(b *exec.Batch) (arrow.Array, error) {
	return exec.ConstArray(o.c.ts[o.i], o.c.vals[o.i], b.N), nil
}
func (o *outerRef) String() string { return "outer." + o.name }

// outerRef binds a column found in an enclosing scope p at index j.
func (b *Binder) outerRef(p *scope, j int, n *ast.ColumnNameExpr) (exec.Expr, error) {
	name := n.Name.Name.O
	if len(b.corr) == 0 || b.corr[len(b.corr)-1].outer != p {
		return nil, b.errRef(n, "column %s refers to a query more than one level out; only the immediately enclosing query can be referenced", name)
	}
	if p.agg != nil && j >= p.agg.nkeys {
		return nil, b.errRef(n, "a subquery after GROUP BY can only refer to the outer query's grouping columns, and %s is not one", name)
	}
	c := b.corr[len(b.corr)-1]
	for i, col := range c.cols {
		if col == j {
			return &outerRef{c: c, i: i, name: name}, nil
		}
	}
	c.cols = append(c.cols, j)
	c.ts = append(c.ts, p.cols[j].T)
	c.vals = append(c.vals, nil)
	return &outerRef{c: c, i: len(c.cols) - 1, name: name}, nil
}

// subKind is what a subquery expression computes from the subquery's rows.
type subKind uint8

const (
	subScalar subKind = iota
	subExists
	subIn
	subAll // left op ALL (subquery)
	subAny // left op ANY (subquery)
)

// correlatedExpr evaluates a correlated subquery for each row of the outer batch.
type correlatedExpr struct {
	kind subKind
	not  bool
	node Node
	c    *correlation
	left exec.Expr // IN, ALL, ANY: the tested value
	op   string    // ALL, ANY: the comparison
	t    types.T
	run  func(Node) ([][]any, error)
	memo map[string]any
	at   exec.Pos // a scalar subquery's place, for its error of too many rows
}

var _ exec.Expr = (*correlatedExpr)(nil)

func (x *correlatedExpr) Type() types.T  { return x.t }
func (x *correlatedExpr) String() string { return "(correlated subquery)" }

func (x *correlatedExpr) Eval(b *exec.Batch) (arrow.Array, error) {
	outer := make([]arrow.Array, len(x.c.cols))
	for i, col := range x.c.cols {
		outer[i] = b.Cols[col]
	}
	var left arrow.Array
	if x.left != nil {
		var err error
		if left, err = x.left.Eval(b); err != nil {
			return nil, err
		}
	}
	out := exec.NewBuilder(x.t, b.N)
	var kb []byte
	for i := 0; i < b.N; i++ {
		kb = kb[:0]
		for k, a := range outer {
			x.c.vals[k] = exec.Value(a, i)
			kb = exec.AppendKey(kb, a, i)
		}
		var lv any
		if left != nil {
			lv = exec.Value(left, i)
			kb = exec.AppendKey(kb, left, i)
		}
		v, ok := x.memo[string(kb)]
		if !ok {
			var err error
			if v, err = x.evalRow(lv); err != nil {
				return nil, err
			}
			x.memo[string(kb)] = v
		}
		out.Append(v)
	}
	return out.Finish(), nil
}

func (x *correlatedExpr) evalRow(lv any) (any, error) {
	rows, err := x.run(x.node)
	if err != nil {
		return nil, err
	}
	switch x.kind {
	case subExists:
		return (len(rows) > 0) != x.not, nil
	case subScalar:
		if len(rows) > 1 {
			return nil, &exec.DataError{Err: fmt.Errorf("scalar subquery returned %d rows; expected at most one", len(rows)), Pos: x.at}
		}
		if len(rows) == 0 {
			return nil, nil
		}
		return rows[0][0], nil
	}
	if x.kind == subAll || x.kind == subAny {
		return x.quantified(x.op, x.kind == subAll, lv, rows)
	}
	// IN is = ANY (the two sides compared as their types compare); NOT IN its negation.
	v, err := x.quantified("=", false, lv, rows)
	if v != nil && x.not {
		v = !v.(bool)
	}
	return v, err
}

// bindSubquery binds a subquery used as an expression and reports its outer references: with
// none, the caller runs it once and uses constants; with some, a correlatedExpr.
func (b *Binder) bindSubquery(sub *ast.SubqueryExpr, s *scope) (node Node, c *correlation, err error) {
	if b.Streaming {
		return nil, nil, b.errAt(sub, "subqueries in expressions are not supported in materialized views, but for [NOT] IN and [NOT] EXISTS as WHERE conjuncts, correlated by equalities or not, and uncorrelated global aggregates (joins)")
	}
	q := sub.Query
	c = &correlation{outer: s}
	b.corr = append(b.corr, c)
	defer func() { b.corr = b.corr[:len(b.corr)-1] }()
	node, err = b.bindQuery(q, &scope{parent: s})
	return node, c, err
}

func (b *Binder) correlated(kind subKind, node Node, c *correlation, left exec.Expr, not bool) exec.Expr {
	t := types.TBool
	if kind == subScalar {
		t = node.Schema()[0].T
	}
	return &correlatedExpr{kind: kind, not: not, node: node, c: c, left: left, t: t, run: b.Run, memo: map[string]any{}}
}

// quantified evaluates `lv op ALL|ANY (rows)` with SQL's three-valued logic: ALL is TRUE
// over no rows and FALSE on any FALSE comparison; ANY is FALSE over no rows and TRUE on any
// TRUE comparison; otherwise a NULL comparison makes the result NULL.
func (x *correlatedExpr) quantified(op string, all bool, lv any, rows [][]any) (any, error) {
	if len(rows) == 0 {
		return all, nil
	}
	// One comparison over the rows: the value against each row's, as op compares them.
	lt, rt := x.left.Type(), x.node.Schema()[0].T
	cmp, err := exec.NewBinary(op, &exec.ColRef{Idx: 0, T: lt}, &exec.ColRef{Idx: 1, T: rt})
	if err != nil {
		return nil, err
	}
	vals := exec.NewBuilder(rt, len(rows))
	for _, r := range rows {
		vals.Append(r[0])
	}
	res, err := cmp.Eval(&exec.Batch{N: len(rows), Cols: []arrow.Array{exec.ConstArray(lt, lv, len(rows)), vals.Finish()}})
	if err != nil {
		return nil, err
	}
	b := res.(*array.Boolean)
	unknown := false
	for i := range len(rows) {
		switch {
		case b.IsNull(i):
			unknown = true
		case b.Value(i) != all:
			return !all, nil
		}
	}
	if unknown {
		return nil, nil
	}
	return all, nil
}
