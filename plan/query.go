package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// BindQuery binds a SELECT or set operation into a logical plan.
func (b *Binder) BindQuery(q ast.ResultSetNode) (Node, error) {
	return b.bindQuery(q, &scope{})
}

func (b *Binder) bindQuery(q ast.ResultSetNode, outer *scope) (Node, error) {
	switch n := q.(type) {
	case *ast.SelectStmt:
		return b.bindSelect(n, outer)
	case *ast.SetOprStmt:
		return b.bindSetOpr(n, outer)
	case *ast.SubqueryExpr:
		return b.bindQuery(n.Query, outer)
	}
	return nil, b.errAt(q, "unsupported query")
}

func (b *Binder) pushCTEs(w *ast.WithClause) func() {
	if w == nil {
		return func() {}
	}
	if w.IsRecursive {
		// Recursive CTEs are refused where they are named; binding them as plain ones would be wrong.
		m := map[string]*ast.CommonTableExpression{}
		for _, c := range w.CTEs {
			m[c.Name.L] = nil
		}
		b.ctes = append(b.ctes, m)
	} else {
		m := map[string]*ast.CommonTableExpression{}
		for _, c := range w.CTEs {
			m[c.Name.L] = c
		}
		b.ctes = append(b.ctes, m)
	}
	return func() { b.ctes = b.ctes[:len(b.ctes)-1] }
}

func (b *Binder) lookupCTE(name string) (*ast.CommonTableExpression, bool) {
	for i := len(b.ctes) - 1; i >= 0; i-- {
		if c, ok := b.ctes[i][strings.ToLower(name)]; ok {
			return c, true
		}
	}
	return nil, false
}

func (b *Binder) bindSelect(sel *ast.SelectStmt, outer *scope) (Node, error) {
	defer b.pushCTEs(sel.With)()
	if sel.Kind == ast.SelectStmtKindValues {
		return nil, b.errAt(sel, "VALUES as a query is not supported; use SELECT")
	}
	var input Node
	var in *scope
	var err error
	var where []ast.ExprNode
	if sel.Where != nil {
		where = splitAnd(sel.Where)
	}
	if sel.From != nil {
		from := sel.From.TableRefs
		if b.Streaming {
			from, where = b.semiJoins(from, where)
			from = b.scalarJoins(from, sel, where)
		}
		input, in, where, err = b.bindFrom(from, outer, where)
		if err != nil {
			return nil, err
		}
		for i, c := range in.cols {
			if strings.HasPrefix(c.Table, semiPrefix) {
				in.cols[i].Hidden = true // not in SELECT *
			}
		}
	} else {
		input = &Values{Rows: [][]any{{}}}
		in = &scope{parent: outer}
	}
	for _, c := range where {
		pred, err := b.bindPredicate(c, in)
		if err != nil {
			return nil, err
		}
		input = newFilter(input, pred)
	}

	fields := sel.Fields.Fields
	aggs := collectAggs(sel)
	hasAgg := len(aggs) > 0 || sel.GroupBy != nil
	post := in
	if hasAgg {
		input, post, err = b.bindAggregate(sel, input, in, aggs)
		if err != nil {
			return nil, err
		}
		if sel.Having != nil {
			pred, err := b.bindPredicate(sel.Having.Expr, post)
			if err != nil {
				return nil, err
			}
			input = &Filter{Input: input, Pred: pred}
		}
	} else if sel.Having != nil {
		return nil, b.errAt(sel.Having.Expr, "HAVING needs GROUP BY or an aggregate")
	}

	if wins := collectWindowFuncs(sel); len(wins) > 0 {
		if input, post, err = b.bindWindowFuncs(wins, input, post); err != nil {
			return nil, err
		}
	}

	// Select list.
	var exprs []exec.Expr
	var cols []Col
	var fieldAST []ast.ExprNode
	for _, f := range fields {
		if f.WildCard != nil {
			if hasAgg {
				return nil, b.errAt(sel, "SELECT * is not allowed with GROUP BY or aggregates")
			}
			t := f.WildCard.Table.L
			n := 0
			for i, c := range in.cols {
				if t != "" && !strings.EqualFold(c.Table, t) || t == "" && c.Hidden {
					continue
				}
				exprs = append(exprs, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
				cols = append(cols, c)
				fieldAST = append(fieldAST, nil)
				n++
			}
			if n == 0 && t != "" {
				return nil, b.errName(f.WildCard.Table.O, "unknown table %s in %s.*", f.WildCard.Table.O, f.WildCard.Table.O)
			}
			continue
		}
		x, err := b.bindExpr(f.Expr, post)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, x)
		c := Col{Name: b.fieldName(f), T: x.Type()}
		if cr, ok := f.Expr.(*ast.ColumnNameExpr); ok && f.AsName.L == "" {
			c.Table = strings.ToLower(cr.Name.Table.O)
			if r, ok := x.(*exec.ColRef); ok && r.Idx < len(post.cols) && !hasAgg {
				c.Table = post.cols[r.Idx].Table
			}
		}
		cols = append(cols, c)
		fieldAST = append(fieldAST, f.Expr)
	}
	visible := len(exprs)

	// ORDER BY: select columns by ordinal, alias or equal text; anything else is computed as
	// a hidden column and dropped after the sort.
	var keys []exec.SortKey
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			e, key := orderBy(item)
			idx, err := b.orderColumn(e, fieldAST, cols[:visible], fields)
			if err != nil {
				return nil, err
			}
			if idx < 0 {
				if sel.Distinct {
					return nil, b.errAt(e, "ORDER BY expression must appear in the select list of SELECT DISTINCT")
				}
				x, err := b.bindExpr(e, post)
				if err != nil {
					return nil, err
				}
				idx = len(exprs)
				exprs = append(exprs, x)
				cols = append(cols, Col{Name: restore(e), T: x.Type()})
			}
			key.Col = idx
			keys = append(keys, key)
		}
	}
	var out Node = &Project{Input: input, Exprs: exprs, cols: cols}
	if sel.Distinct {
		out = distinct(out)
	}
	// A view is a set: there ORDER BY only chooses LIMIT's rows (topN); without LIMIT it
	// has no meaning and is ignored.
	if len(keys) > 0 && !b.Streaming {
		out = &Sort{Input: out, Keys: keys}
	}
	if sel.Limit != nil {
		if out, err = b.bindLimit(sel.Limit, out, keys); err != nil {
			return nil, err
		}
	}
	if len(cols) > visible {
		out = prefix(out, visible)
	}
	return out, nil
}

// prefix projects the first n columns of in.
func prefix(in Node, n int) Node {
	sch := in.Schema()
	exprs := make([]exec.Expr, n)
	for i := 0; i < n; i++ {
		exprs[i] = &exec.ColRef{Idx: i, T: sch[i].T, Name: sch[i].Name}
	}
	return &Project{Input: in, Exprs: exprs, cols: sch[:n]}
}

// distinct groups by every column.
func distinct(in Node) Node {
	return &Aggregate{Input: in, NumKeys: len(in.Schema()), cols: in.Schema()}
}

// bindLimit binds LIMIT l over in, whose rows a batch query has sorted by keys (none: no
// ORDER BY); in a materialized view it is a Top-N over keys (topN).
func (b *Binder) bindLimit(l *ast.Limit, in Node, keys []exec.SortKey) (Node, error) {
	get := func(e ast.ExprNode) (int64, error) {
		if e == nil {
			return -1, nil
		}
		x, err := b.bindExpr(e, &scope{})
		if err != nil {
			return 0, err
		}
		c, ok := x.(*exec.Const)
		v, isInt := c.V.(int64)
		if !ok || !isInt || v < 0 {
			return 0, b.errAt(e, "LIMIT and OFFSET take a non-negative integer")
		}
		return v, nil
	}
	count, err := get(l.Count)
	if err != nil {
		return nil, err
	}
	off, err := get(l.Offset)
	if err != nil {
		return nil, err
	}
	off = max(off, 0)
	if b.Streaming {
		if len(keys) == 0 {
			return nil, b.Stmt.ErrorAtPos(b.Stmt.KeywordPos("LIMIT", "FETCH", "OFFSET"), "LIMIT in a materialized view needs ORDER BY: it keeps the first rows of an order")
		}
		return topN(in, keys, count, off), nil
	}
	return &Limit{Input: in, Count: count, Offset: off}, nil
}

// topN is ORDER BY keys LIMIT count (-1: none) OFFSET off in a materialized view, as Flink
// plans it: the rows of in numbered off+1 .. off+count by ROW_NUMBER() OVER (ORDER BY keys),
// a Rank without partitions that emits only those (From, Limit), so its changes retract the
// rows that leave the range and insert those that enter it. Its columns are in's (the number
// is dropped: NumberHidden). Its rows are the batch query's as a set when the keys have no
// ties at the range's ends; with ties there it keeps as many of the tied rows as the batch
// query, not necessarily the same ones.
func topN(in Node, keys []exec.SortKey, count, off int64) Node {
	limited := count >= 0 && count <= math.MaxInt64-off // OFFSET alone is LIMIT MaxInt64 OFFSET off
	if off == 0 && !limited {                           // every row
		return in
	}
	sch := in.Schema()
	rank := &Rank{Input: in, Fn: exec.RowNumber, Order: keys, Offset: 1, WindowEnd: -1, Limit: -1, NumberHidden: true,
		From: off, cols: append(slices.Clone(sch), Col{Name: "row_number", T: types.TBigInt})}
	if limited {
		rank.Limit = off + count
	}
	return prefix(rank, len(sch))
}

func (b *Binder) orderColumn(e ast.ExprNode, fieldAST []ast.ExprNode, cols []Col, fields []*ast.SelectField) (int, error) {
	if p, ok := e.(*ast.PositionExpr); ok {
		n := p.N
		if n < 1 || n > len(cols) {
			return 0, b.Stmt.ErrorAtPos(b.Stmt.PosAfter([]string{"ORDER", "BY"}, fmt.Sprint(n)), "ORDER BY position %d is not in the select list (1..%d)", n, len(cols))
		}
		return n - 1, nil
	}
	if v, ok := e.(*test_driver.ValueExpr); ok {
		if n, ok := v.GetValue().(int64); ok {
			if n < 1 || int(n) > len(cols) {
				return 0, b.Stmt.ErrorAtPos(b.Stmt.PosAfter([]string{"ORDER", "BY"}, fmt.Sprint(n)), "ORDER BY position %d is not in the select list (1..%d)", n, len(cols))
			}
			return int(n) - 1, nil
		}
	}
	if cn, ok := e.(*ast.ColumnNameExpr); ok && cn.Name.Table.L == "" {
		for i, f := range fields {
			if f.AsName.L != "" && f.AsName.L == cn.Name.Name.L {
				return b.fieldIndex(i, fields), nil
			}
		}
	}
	text := restore(e)
	for i, f := range fieldAST {
		if f != nil && restore(f) == text {
			return i, nil
		}
	}
	return -1, nil
}

// fieldIndex maps a select field number to its column (no wildcards precede aliased fields
// in the cases it is used for; wildcard expansion shifts positions otherwise).
func (b *Binder) fieldIndex(i int, fields []*ast.SelectField) int { return i }

// orderBy returns an ORDER BY item's expression and its sort key (Col unset). NULLS FIRST and
// NULLS LAST arrive from the front pass as a carrier call around the expression.
func orderBy(it *ast.ByItem) (ast.ExprNode, exec.SortKey) {
	k := exec.SortKey{Desc: it.Desc}
	e, first, ok := sql.NullsOrder(it.Expr)
	if !ok {
		return e, k
	}
	k.Nulls = exec.NullsLast
	if first {
		k.Nulls = exec.NullsFirst
	}
	// The parser turns a bare integer item into a position; inside the carrier it is a literal.
	if v, lit := e.(*test_driver.ValueExpr); lit {
		if n, isInt := v.GetValue().(int64); isInt {
			e = &ast.PositionExpr{N: int(n)}
		}
	}
	return e, k
}

// fieldName names a select field: its alias, its column, or its text as the user wrote it.
func (b *Binder) fieldName(f *ast.SelectField) string {
	if f.AsName.L != "" {
		return f.AsName.O
	}
	if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return c.Name.Name.O
	}
	// The user's text, not the carrier's (the front pass rewrites some constructs).
	if u := b.Stmt.UserText(f.Offset, len(f.Text())); u != "" {
		return strings.Join(strings.Fields(u), " ")
	}
	if t := strings.TrimSpace(f.Text()); t != "" && !strings.Contains(t, "__sx_") {
		return t
	}
	return restore(f.Expr)
}

// splitAnd splits a predicate into its AND-ed conjuncts.
// semiPrefix names the derived tables semiJoins adds.
const semiPrefix = "__sx_semi_"

// semiJoins turns each WHERE conjunct `e [NOT] IN (SELECT c FROM ...)` and `[NOT] EXISTS
// (SELECT ...)` of a streaming query into a join with the subquery's distinct values, as
// Flink does: `JOIN (SELECT DISTINCT c, k ...) s ON e = s.c AND o = s.k` for a subquery whose
// WHERE correlates it by equalities `inner k = outer o` (the other conjuncts its own), a
// LEFT JOIN kept where no value matched for NOT (notInRules adds NOT IN's NULL rules). A
// view keeps the join current as either side changes (its state grows with both). A NULL
// matches nothing, as IN and the equalities give no TRUE then. The subquery's columns are
// hidden from SELECT *. Other subqueries (scalar, correlated otherwise) stay refused.
func (b *Binder) semiJoins(from *ast.Join, where []ast.ExprNode) (*ast.Join, []ast.ExprNode) {
	for i := 0; i < len(where); i++ {
		c := where[i]
		var q *ast.SelectStmt
		var in ast.ExprNode // IN's left side
		anti := false       // NOT EXISTS, NOT IN
		switch x := c.(type) {
		case *ast.PatternInExpr:
			if x.Sel == nil {
				continue
			}
			q, in, anti = subSelect(x.Sel), x.Expr, x.Not
		case *ast.ExistsSubqueryExpr:
			q, anti = subSelect(x.Sel), x.Not
		case *ast.UnaryOperationExpr:
			v := x.V
			for p, ok := v.(*ast.ParenthesesExpr); ok; p, ok = v.(*ast.ParenthesesExpr) {
				v = p.Expr
			}
			switch e := v.(type) {
			case *ast.ExistsSubqueryExpr:
				if x.Op == opcode.Not {
					q, anti = subSelect(e.Sel), !e.Not
				}
			case *ast.PatternInExpr:
				if x.Op == opcode.Not && e.Sel != nil {
					q, in, anti = subSelect(e.Sel), e.Expr, !e.Not
				}
			}
		}
		if q == nil || q.From == nil || q.GroupBy != nil || q.Having != nil || q.Limit != nil || q.OrderBy != nil || len(collectAggs(q)) > 0 {
			continue
		}
		if in != nil && (len(q.Fields.Fields) != 1 || q.Fields.Fields[0].WildCard != nil || hasSubquery(in)) {
			continue // (IN's left side goes into a join's condition, out of scalarJoins's reach)
		}
		keys, own, ok := b.correlation(q)
		if !ok {
			continue // correlated otherwise, or wrong: refused, or reported, where it stands
		}
		alias := fmt.Sprintf("%s%d", semiPrefix, b.semis)
		b.semis++
		var fields []*ast.SelectField
		var eqs []ast.ExprNode
		key := func(outer, inner ast.ExprNode) {
			name := fmt.Sprintf("%s_%d", alias, len(fields)) // plain in EXPLAIN too
			fields = append(fields, &ast.SelectField{Expr: inner, AsName: ast.NewCIStr(name)})
			eqs = append(eqs, &ast.BinaryOperationExpr{Op: opcode.EQ, L: outer, R: column(alias, name)})
		}
		if in != nil {
			key(in, q.Fields.Fields[0].Expr)
		}
		for _, k := range keys {
			key(k[0], k[1])
		}
		if len(fields) == 0 { // uncorrelated EXISTS: whether the subquery has a row at all
			one := ast.NewValueExpr(int64(1), "", "")
			key(ast.NewValueExpr(int64(1), "", ""), one)
		}
		// A copy: the statement's own tree stays as written (it may be bound again).
		semi := *q
		semi.Distinct, semi.Fields, semi.Where = true, &ast.FieldList{Fields: fields}, andOf(own)
		right := &ast.TableSource{Source: &semi, AsName: ast.NewCIStr(alias)}
		if anti {
			from = &ast.Join{Left: from, Right: right, Tp: ast.LeftJoin, On: &ast.OnCondition{Expr: andOf(eqs)}}
			unmatched := ast.ExprNode(&ast.IsNullExpr{Expr: column(alias, alias+"_0")})
			if in != nil { // NOT IN: NULL rules too
				from, unmatched = notInRules(from, unmatched, in, q, keys, own, alias+"_n")
			}
			where[i] = unmatched
			continue
		}
		from = &ast.Join{Left: from, Right: right, Tp: ast.CrossJoin}
		where[i] = eqs[0]
		where = append(where, eqs[1:]...)
	}
	return from, where
}

// notInRules adds to the anti join of `x NOT IN (SELECT c ...)` SQL's NULL rules: NOT IN is
// TRUE where the subquery (for the row's correlation keys) has no row, and otherwise only
// when x is not NULL, no value matched it (unmatched) and no value is NULL. A derived table
// alias counts the subquery's rows and NULL values per correlation key (one global row when
// uncorrelated), joined to the query; it returns the new FROM and the condition.
func notInRules(from *ast.Join, unmatched, x ast.ExprNode, q *ast.SelectStmt, keys [][2]ast.ExprNode, own []ast.ExprNode, alias string) (*ast.Join, ast.ExprNode) {
	c := q.Fields.Fields[0].Expr
	one := func() ast.ExprNode { return ast.NewValueExpr(int64(1), "", "") }
	field := func(e ast.ExprNode, name string) *ast.SelectField {
		return &ast.SelectField{Expr: e, AsName: ast.NewCIStr(name)}
	}
	counts := *q
	counts.Distinct, counts.Where, counts.OrderBy = false, andOf(own), nil
	var fields []*ast.SelectField
	var by []*ast.ByItem
	var on []ast.ExprNode
	for i, k := range keys {
		name := fmt.Sprintf("%s_%d", alias, i)
		fields = append(fields, field(k[1], name))
		by = append(by, &ast.ByItem{Expr: k[1]})
		on = append(on, &ast.BinaryOperationExpr{Op: opcode.EQ, L: k[0], R: column(alias, name)})
	}
	fields = append(fields, field(&ast.AggregateFuncExpr{F: "count", Args: []ast.ExprNode{one()}}, alias+"_rows"),
		field(&ast.AggregateFuncExpr{F: "count", Args: []ast.ExprNode{&ast.CaseExpr{
			WhenClauses: []*ast.WhenClause{{Expr: &ast.IsNullExpr{Expr: c}, Result: one()}}}}}, alias+"_nulls"))
	counts.Fields = &ast.FieldList{Fields: fields}
	right := &ast.TableSource{Source: &counts, AsName: ast.NewCIStr(alias)}
	if len(keys) > 0 {
		counts.GroupBy = &ast.GroupByClause{Items: by}
		from = &ast.Join{Left: from, Right: right, Tp: ast.LeftJoin, On: &ast.OnCondition{Expr: andOf(on)}}
	} else {
		from = &ast.Join{Left: from, Right: right, Tp: ast.CrossJoin} // a global count: one row
	}
	rows := column(alias, alias+"_rows")
	empty := &ast.BinaryOperationExpr{Op: opcode.LogicOr, L: &ast.IsNullExpr{Expr: rows},
		R: &ast.BinaryOperationExpr{Op: opcode.EQ, L: rows, R: ast.NewValueExpr(int64(0), "", "")}}
	clean := andOf([]ast.ExprNode{unmatched, &ast.IsNullExpr{Expr: x, Not: true},
		&ast.BinaryOperationExpr{Op: opcode.EQ, L: column(alias, alias+"_nulls"), R: ast.NewValueExpr(int64(0), "", "")}})
	return from, &ast.BinaryOperationExpr{Op: opcode.LogicOr, L: &ast.ParenthesesExpr{Expr: empty}, R: &ast.ParenthesesExpr{Expr: clean}}
}

// column is the column reference table.name.
func column(table, name string) *ast.ColumnNameExpr {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(table), Name: ast.NewCIStr(name)}}
}

// scalarJoins makes each uncorrelated scalar subquery that is a global aggregate (one row,
// always: `v > (SELECT AVG(v) FROM t)`) in a streaming query's WHERE, or in its select list
// when the query does not aggregate, a table cross-joined to the query's FROM, as Flink
// does; bindScalarSubquery then reads its column (b.scalars). The view keeps the result
// current as the aggregate changes. Other scalar subqueries stay refused.
func (b *Binder) scalarJoins(from *ast.Join, sel *ast.SelectStmt, where []ast.ExprNode) *ast.Join {
	var exprs []ast.ExprNode
	exprs = append(exprs, where...)
	if len(collectAggs(sel)) == 0 && sel.GroupBy == nil {
		for _, f := range sel.Fields.Fields {
			if f.Expr != nil {
				exprs = append(exprs, f.Expr)
			}
		}
	}
	for _, e := range exprs {
		e.Accept(&scalarCollector{fn: func(sub *ast.SubqueryExpr) {
			q := subSelect(sub)
			if q == nil || q.GroupBy != nil || q.Having != nil || q.Limit != nil || len(q.Fields.Fields) != 1 || len(collectAggs(q)) == 0 {
				return // not one row always
			}
			if _, err := b.bindQuery(q, &scope{}); err != nil {
				return // correlated, or wrong: refused, or reported, where it stands
			}
			alias := fmt.Sprintf("%s%d", semiPrefix, b.semis)
			b.semis++
			one := *q // a copy: the statement's own tree stays as written
			one.Fields = &ast.FieldList{Fields: []*ast.SelectField{{Expr: q.Fields.Fields[0].Expr, AsName: ast.NewCIStr(alias + "_0")}}}
			from = &ast.Join{Left: from, Right: &ast.TableSource{Source: &one, AsName: ast.NewCIStr(alias)}, Tp: ast.CrossJoin}
			if b.scalars == nil {
				b.scalars = map[*ast.SubqueryExpr]string{}
			}
			b.scalars[sub] = alias
		}})
	}
	return from
}

// scalarCollector finds the scalar subqueries of an expression (not those of IN or EXISTS,
// nor any inside another subquery).
type scalarCollector struct{ fn func(*ast.SubqueryExpr) }

func (c *scalarCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		c.fn(x)
		return n, true
	case *ast.ExistsSubqueryExpr:
		return n, true
	case *ast.PatternInExpr:
		if x.Sel != nil {
			x.Expr.Accept(c)
			return n, true
		}
	case *ast.CompareSubqueryExpr: // ANY, ALL
		x.L.Accept(c)
		return n, true
	}
	return n, false
}

func (c *scalarCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// hasSubquery reports whether e holds a subquery.
func hasSubquery(e ast.ExprNode) bool { return FirstSubquery(e) != nil }

// FirstSubquery returns the first subquery e holds (nil: none), for an error placed at it.
func FirstSubquery(e ast.ExprNode) ast.ExprNode {
	var first ast.ExprNode
	e.Accept(&colVisitor{fn: func(*ast.ColumnName) {}, sub: func(q ast.ExprNode) {
		if first == nil {
			first = q
		}
	}})
	return first
}

// subSelect is the SELECT of a subquery expression, or nil.
func subSelect(e ast.ExprNode) *ast.SelectStmt {
	if sub, ok := e.(*ast.SubqueryExpr); ok {
		if q, ok := sub.Query.(*ast.SelectStmt); ok {
			return q
		}
	}
	return nil
}

// correlation splits a subquery's WHERE into the equalities `inner = outer` that correlate it
// with the query around it (each as [outer, inner]) and its own conjuncts; ok is false when
// a conjunct names the outer query otherwise, or the subquery does not bind on its own.
func (b *Binder) correlation(q *ast.SelectStmt) (keys [][2]ast.ExprNode, own []ast.ExprNode, ok bool) {
	defer b.pushCTEs(q.With)()
	_, inner, _, err := b.bindFrom(q.From.TableRefs, &scope{}, nil)
	if err != nil {
		return nil, nil, false
	}
	// side reports whether e names inner columns, outer ones (not the subquery's), or both.
	side := func(e ast.ExprNode) (innerCols, outerCols bool) {
		e.Accept(&colVisitor{fn: func(c *ast.ColumnName) {
			if _, err := inner.resolve(c.Table.O, c.Name.O); err == errNotFound {
				outerCols = true
			} else {
				innerCols = true
			}
		}, sub: func(ast.ExprNode) { innerCols, outerCols = true, true }})
		return innerCols, outerCols
	}
	for _, f := range q.Fields.Fields {
		if f.Expr != nil {
			if _, outer := side(f.Expr); outer {
				return nil, nil, false
			}
		}
	}
	var conds []ast.ExprNode
	if q.Where != nil {
		conds = splitAnd(q.Where)
	}
	for _, c := range conds {
		if _, outer := side(c); !outer {
			own = append(own, c)
			continue
		}
		eq, isEq := c.(*ast.BinaryOperationExpr)
		if !isEq || eq.Op != opcode.EQ {
			return nil, nil, false
		}
		li, lo := side(eq.L)
		ri, ro := side(eq.R)
		switch {
		case lo && !li && ri && !ro:
			keys = append(keys, [2]ast.ExprNode{eq.L, eq.R})
		case ro && !ri && li && !lo:
			keys = append(keys, [2]ast.ExprNode{eq.R, eq.L})
		default:
			return nil, nil, false
		}
	}
	// The subquery must bind on its own once its correlations are taken out.
	probe := *q
	probe.Where = andOf(own)
	if _, err := b.bindQuery(&probe, &scope{}); err != nil {
		return nil, nil, false
	}
	return keys, own, true
}

// andOf joins conditions with AND (nil for none).
func andOf(cs []ast.ExprNode) ast.ExprNode {
	var out ast.ExprNode
	for _, c := range cs {
		if out == nil {
			out = c
		} else {
			out = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: out, R: c}
		}
	}
	return out
}

func splitAnd(e ast.ExprNode) []ast.ExprNode {
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return splitAnd(p.Expr)
	}
	if bin, ok := e.(*ast.BinaryOperationExpr); ok && bin.Op == opcode.LogicAnd {
		return append(splitAnd(bin.L), splitAnd(bin.R)...)
	}
	return []ast.ExprNode{e}
}

func (b *Binder) bindPredicate(e ast.ExprNode, s *scope) (exec.Expr, error) {
	x, err := b.bindExpr(e, s)
	if err != nil {
		return nil, err
	}
	switch k := x.Type().Kind; {
	case k == types.Null:
		return &exec.Const{T: types.TBool}, nil // WHERE NULL: no row passes
	case k != types.Bool:
		return nil, b.errAt(e, "condition must be BOOLEAN, got %s", x.Type())
	}
	return x, nil
}

// collectAggs lists the distinct aggregate calls of a SELECT's list, HAVING and ORDER BY.
func collectAggs(sel *ast.SelectStmt) []*ast.AggregateFuncExpr {
	var out []*ast.AggregateFuncExpr
	seen := map[string]bool{}
	v := &aggCollector{fn: func(a *ast.AggregateFuncExpr) {
		t := restore(a)
		if !seen[t] {
			seen[t] = true
			out = append(out, a)
		}
	}}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return out
}

type aggCollector struct{ fn func(*ast.AggregateFuncExpr) }

func (c *aggCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		c.fn(x)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (c *aggCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

var aggFuncs = map[string]exec.AggFunc{"count": exec.AggCount, "sum": exec.AggSum, "avg": exec.AggAvg, "min": exec.AggMin, "max": exec.AggMax,
	"var_pop": exec.AggVarPop, "var_samp": exec.AggVarSamp, "stddev_pop": exec.AggStddevPop, "stddev_samp": exec.AggStddevSamp,
	"bool_and": exec.AggBoolAnd, "every": exec.AggBoolAnd, "bool_or": exec.AggBoolOr, "string_agg": exec.AggStringAgg,
	"listagg": exec.AggStringAgg, "first_value": exec.AggFirstValue, "last_value": exec.AggLastValue, "any_value": exec.AggAnyValue}

// aggArgs checks the number of arguments of aggregate call a: STRING_AGG takes the values
// and a separator, LISTAGG the values and an optional separator, the others one argument.
func (b *Binder) aggArgs(a *ast.AggregateFuncExpr) error {
	name, n := strings.ToUpper(a.F), len(a.Args)
	switch name {
	case "STRING_AGG":
		if n != 2 {
			return b.errAt(a, "STRING_AGG takes two arguments: the values and a separator")
		}
	case "LISTAGG":
		if n != 1 && n != 2 {
			return b.errAt(a, "LISTAGG takes one or two arguments: the values and a separator (',' when omitted)")
		}
	default:
		if n != 1 {
			return b.errAt(a, "%s takes one argument", name)
		}
	}
	return nil
}

// aggSeparator is the separator of STRING_AGG or LISTAGG call a: its second argument, a
// constant string, or ',' when there is none (LISTAGG's default, as in Flink).
func (b *Binder) aggSeparator(a *ast.AggregateFuncExpr, in *scope) (string, error) {
	if len(a.Args) < 2 {
		return ",", nil
	}
	x, err := b.bindExpr(a.Args[1], in)
	if err != nil {
		return "", err
	}
	if c, ok := x.(*exec.Const); ok {
		if sep, ok := c.V.(string); ok {
			return sep, nil
		}
	}
	return "", b.errAt(a.Args[1], "the separator of %s must be a constant string", strings.ToUpper(a.F))
}

// aggInput checks or converts the argument x of aggregate call a of function fn: BOOL_AND
// and BOOL_OR take BOOLEANs, STRING_AGG casts other values to VARCHAR, and an untyped NULL
// takes the type the function reads.
func (b *Binder) aggInput(a *ast.AggregateFuncExpr, fn exec.AggFunc, x exec.Expr) (exec.Expr, error) {
	t := x.Type()
	switch fn {
	case exec.AggBoolAnd, exec.AggBoolOr:
		if t.Kind == types.Null {
			return &exec.Const{T: types.TBool}, nil
		}
		if t.Kind != types.Bool {
			return nil, b.errAt(a, "%s needs a boolean argument, got %s", strings.ToUpper(a.F), t)
		}
	case exec.AggStringAgg:
		if t.Kind == types.Null {
			return &exec.Const{T: types.TVarchar}, nil
		}
		if t.Kind != types.Varchar {
			return b.builtAt(a.Args[0]).expr(exec.NewCast(x, types.TVarchar, false))
		}
	}
	if t.Kind == types.Null {
		return &exec.Const{T: types.TBigInt}, nil
	}
	return x, nil
}

func (b *Binder) bindAggregate(sel *ast.SelectStmt, input Node, in *scope, aggs []*ast.AggregateFuncExpr) (Node, *scope, error) {
	as := &aggScope{input: in}
	var pre []exec.Expr
	var preCols []Col
	var sets [][]int  // GROUPING SETS, ROLLUP, CUBE: each set's GROUP BY items
	var itemKey []int // each GROUP BY item's key
	if sel.GroupBy != nil {
		items := sel.GroupBy.Items
		if n := len(items); n > 0 {
			if ss, ok := sql.GroupingSets(items[n-1].Expr); ok {
				sets, items = ss, items[:n-1]
			}
		}
		for _, item := range items {
			e := item.Expr
			if p, ok := e.(*ast.PositionExpr); ok {
				if p.N < 1 || p.N > len(sel.Fields.Fields) || sel.Fields.Fields[p.N-1].Expr == nil {
					return nil, nil, b.Stmt.ErrorAtPos(b.Stmt.PosAfter([]string{"GROUP", "BY"}, fmt.Sprint(p.N)), "GROUP BY position %d is not in the select list", p.N)
				}
				e = sel.Fields.Fields[p.N-1].Expr
			} else if cn, ok := e.(*ast.ColumnNameExpr); ok && cn.Name.Table.L == "" {
				if _, err := in.resolve("", cn.Name.Name.O); err == errNotFound {
					for _, f := range sel.Fields.Fields {
						if f.AsName.L == cn.Name.Name.L && f.Expr != nil {
							e = f.Expr
						}
					}
				}
			}
			x, err := b.bindExpr(e, in)
			if err != nil {
				return nil, nil, err
			}
			keyCol := -1
			name := restore(e)
			table := ""
			if r, ok := x.(*exec.ColRef); ok {
				keyCol = r.Idx
				name = in.cols[r.Idx].Name
				table = in.cols[r.Idx].Table
			}
			if k := repeatedKey(as, restore(e), keyCol); k >= 0 {
				itemKey = append(itemKey, k)
				continue // GROUP BY a, a groups by a
			}
			itemKey = append(itemKey, len(as.keys))
			as.keys = append(as.keys, e)
			as.keyText = append(as.keyText, restore(e))
			as.keyCols = append(as.keyCols, keyCol)
			pre = append(pre, x)
			preCols = append(preCols, Col{Name: name, Table: table, T: x.Type()})
		}
	}
	if sel.GroupBy != nil && sel.GroupBy.Rollup { // MySQL's GROUP BY a, b WITH ROLLUP: ROLLUP (a, b)
		for n := len(itemKey); n >= 0; n-- {
			set := make([]int, n)
			for i := range set {
				set[i] = i
			}
			sets = append(sets, set)
		}
	}
	as.nkeys = len(pre)
	var specs []exec.AggSpec
	outCols := append([]Col{}, preCols...)
	for _, a := range aggs {
		fn, ok := aggFuncs[strings.ToLower(a.F)]
		if !ok {
			return nil, nil, b.errAt(a, "aggregate function %s is not supported", strings.ToUpper(a.F))
		}
		if err := b.aggArgs(a); err != nil {
			return nil, nil, err
		}
		spec := exec.AggSpec{Fn: fn, Distinct: a.Distinct, Pos: b.execPos(a)}
		if fn == exec.AggStringAgg {
			var err error
			if spec.Sep, err = b.aggSeparator(a, in); err != nil {
				return nil, nil, err
			}
		}
		if fn == exec.AggCount && !a.Distinct {
			if v, ok := a.Args[0].(*test_driver.ValueExpr); ok && v.GetValue() != nil {
				spec.Fn = exec.AggCountStar
			}
		}
		if spec.Fn != exec.AggCountStar {
			if outerOnly(a.Args[0], in) {
				// SQL makes it an aggregate of the outer query, evaluated there.
				return nil, nil, b.errAt(a, "%s of only the outer query's columns in a subquery is not supported: compute it in the outer query", strings.ToUpper(a.F))
			}
			x, err := b.bindExpr(a.Args[0], in)
			if err != nil {
				return nil, nil, err
			}
			t := x.Type()
			moment := fn == exec.AggVarPop || fn == exec.AggVarSamp || fn == exec.AggStddevPop || fn == exec.AggStddevSamp
			if (fn == exec.AggSum || fn == exec.AggAvg || moment) && !t.IsNumeric() && t.Kind != types.Null && (t.Kind != types.Interval || moment) {
				return nil, nil, b.errAt(a, "%s needs a numeric argument, got %s", strings.ToUpper(a.F), t)
			}
			if moment && a.Distinct {
				return nil, nil, b.errAt(a, "%s(DISTINCT ...) is not supported", strings.ToUpper(a.F))
			}
			if x, err = b.aggInput(a, fn, x); err != nil {
				return nil, nil, err
			}
			t = x.Type()
			spec.Arg = len(pre)
			spec.In = t
			pre = append(pre, x)
			preCols = append(preCols, Col{Name: restore(a.Args[0]), T: t})
		}
		specs = append(specs, spec)
		as.aggText = append(as.aggText, restore(a))
		outCols = append(outCols, Col{Name: restore(a), T: spec.ResultType()})
	}
	proj := &Project{Input: input, Exprs: pre, cols: preCols}
	window := b.windowInfo(input, pre[:as.nkeys])
	if sets == nil {
		agg := &Aggregate{Input: proj, NumKeys: as.nkeys, Aggs: specs, cols: outCols, Window: window}
		return agg, &scope{cols: outCols, parent: in.parent, agg: as}, nil
	}
	// Grouping sets: each row once per set (Expand), grouped by the keys and the set's
	// number, which the projection on top drops.
	keySets := make([][]int, len(sets))
	for s, set := range sets {
		for _, item := range set {
			if item < 0 || item >= len(itemKey) {
				return nil, nil, fmt.Errorf("internal error: grouping set item %d of %d", item, len(itemKey))
			}
			keySets[s] = append(keySets[s], itemKey[item])
		}
		slices.Sort(keySets[s])
		keySets[s] = slices.Compact(keySets[s])
		if window != nil && (!slices.Contains(keySets[s], window.StartKey) || !slices.Contains(keySets[s], window.EndKey)) {
			return nil, nil, b.errAt(sel.GroupBy.Items[0].Expr, "every grouping set of a window aggregate must include window_start and window_end")
		}
	}
	shifted := slices.Clone(specs)
	for i := range shifted {
		shifted[i].Arg++ // past the set's number
	}
	aggCols := append(append(append([]Col{}, outCols[:as.nkeys]...), Col{Name: "grouping_set", T: types.TBigInt}), outCols[as.nkeys:]...)
	agg := &Aggregate{Input: &Expand{Input: proj, NumKeys: as.nkeys, Sets: keySets}, NumKeys: as.nkeys + 1, Aggs: shifted, cols: aggCols, Window: window}
	// The set's number moves last, hidden: GROUPING() reads it.
	moved := make([]exec.Expr, 0, len(aggCols))
	for i, c := range aggCols {
		if i != as.nkeys {
			moved = append(moved, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
		}
	}
	moved = append(moved, &exec.ColRef{Idx: as.nkeys, T: types.TBigInt, Name: "grouping_set"})
	cols := append(slices.Clone(outCols), Col{Name: "grouping_set", T: types.TBigInt, Hidden: true})
	as.sets, as.setCol = keySets, len(outCols)
	return &Project{Input: agg, Exprs: moved, cols: cols}, &scope{cols: cols, parent: in.parent, agg: as}, nil
}

// repeatedKey returns the index of a GROUP BY key, of text text (and input column keyCol, -1
// if not a column), among the keys, or -1.
func repeatedKey(as *aggScope, text string, keyCol int) int {
	for i, t := range as.keyText {
		if t == text || keyCol >= 0 && as.keyCols[i] == keyCol {
			return i
		}
	}
	return -1
}

// outerOnly reports whether e names columns and all of them are an enclosing query's.
func outerOnly(e ast.ExprNode, in *scope) bool {
	local, outer := 0, 0
	e.Accept(&colVisitor{fn: func(c *ast.ColumnName) {
		if _, err := in.resolve(c.Table.O, c.Name.O); err != errNotFound {
			local++
			return
		}
		for p := in.parent; p != nil; p = p.parent {
			if _, err := p.resolve(c.Table.O, c.Name.O); err != errNotFound {
				outer++
				return
			}
			if p.agg != nil {
				if _, err := p.agg.input.resolve(c.Table.O, c.Name.O); err != errNotFound {
					outer++
					return
				}
			}
		}
	}})
	return outer > 0 && local == 0
}

// bindAggRef binds e after GROUP BY when it is a group key or an aggregate; ok is false when
// e is neither and must be bound structurally.
func (b *Binder) bindAggRef(e ast.ExprNode, s *scope) (exec.Expr, bool, error) {
	as := s.agg
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return b.bindAggRef(p.Expr, s)
	}
	text := restore(e)
	for i, t := range as.keyText {
		if t == text {
			return &exec.ColRef{Idx: i, T: s.cols[i].T, Name: s.cols[i].Name}, true, nil
		}
	}
	switch n := e.(type) {
	case *ast.AggregateFuncExpr:
		for j, t := range as.aggText {
			if t == text {
				i := as.nkeys + j
				return &exec.ColRef{Idx: i, T: s.cols[i].T, Name: s.cols[i].Name}, true, nil
			}
		}
		return nil, true, b.errAt(n, "aggregate %s is not allowed here", text)
	case *ast.ColumnNameExpr:
		idx, err := as.input.resolve(n.Name.Table.O, n.Name.Name.O)
		if err != nil {
			x, err := b.bindColumn(n, as.input)
			return x, true, err
		}
		for i, k := range as.keyCols {
			if k == idx {
				return &exec.ColRef{Idx: i, T: s.cols[i].T, Name: s.cols[i].Name}, true, nil
			}
		}
		return nil, true, b.errRef(n, "column %s must appear in the GROUP BY clause or be used in an aggregate function", n.Name.Name.O)
	}
	return nil, false, nil
}

// scanOf builds the scan of a relation under an alias.
func scanOf(rel *Relation, alias string) *Scan {
	q := strings.ToLower(alias)
	cols := make([]Col, len(rel.Cols))
	for i, c := range rel.Cols {
		cols[i] = Col{Name: c.Name, Table: q, T: c.Type}
	}
	return &Scan{Rel: rel, Alias: alias, cols: cols}
}

// relation resolves a name of the catalog, the error placed at the name's first occurrence
// in the statement.
func (b *Binder) relation(name string) (*Relation, error) {
	return b.relationAt(name, b.Stmt.PosOfName(name))
}

// relationAt resolves a name of the catalog written at pos.
func (b *Binder) relationAt(name string, pos sql.Pos) (*Relation, error) {
	rel, ok := b.Cat.Relation(name)
	if !ok {
		msg := fmt.Sprintf("table %s not found", name)
		if sim := catalog.Similar(name, b.Cat.RelationNames()); sim != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", sim)
		}
		return nil, b.Stmt.ErrorAtPos(pos, "%s", msg)
	}
	b.refs = append(b.refs, rel)
	return rel, nil
}

// expandView binds the query of logical view rel where the statement names it (at ref), as
// a derived table under alias: with the view's own statement (its names, windows, column
// lists), none of the naming query's CTEs or columns, and the naming statement's mode
// (streaming or not) and EMIT. Errors in it, at bind or run time, are placed at ref: the
// user's statement names the view there (the outermost one, for a view over a view).
func (b *Binder) expandView(rel *Relation, alias string, ref sql.Pos) (Node, []Col, error) {
	def := *rel.View
	def.EmitOnClose = b.Stmt.EmitOnClose
	at := exec.Pos{Line: ref.Line, Col: ref.Col}
	if b.at != nil {
		at = *b.at
	}
	if len(def.Windows) > 0 {
		// A window's own place (plan.Build's errors about it) is the view's too.
		ws := make(map[string]*sql.WindowTVF, len(def.Windows))
		for k, w := range def.Windows {
			c := *w
			c.Pos = sql.Pos{Line: at.Line, Col: at.Col}
			ws[k] = &c
		}
		def.Windows = ws
	}
	vb := &Binder{Cat: b.Cat, Stmt: &def, Run: b.Run, Streaming: b.Streaming, at: &at}
	node, err := vb.bindQuery(def.Node.(ast.ResultSetNode), &scope{})
	if err != nil {
		msg := err.Error()
		var se *sql.Error
		if errors.As(err, &se) {
			msg = se.Msg
		}
		return nil, nil, &sql.Error{Line: at.Line, Col: at.Col, Msg: fmt.Sprintf("view %s: %s", rel.Name, msg)}
	}
	return requalify(node, alias, nil)
}

// windowOf returns the window TVF node under filters and projections (a subquery or CTE
// over the TVF), or nil.
func windowOf(n Node) *Window {
	for {
		switch x := n.(type) {
		case *Window:
			return x
		case *Filter:
			n = x.Input
		case *Project:
			n = x.Input
		case *Expand:
			n = x.Input
		default:
			return nil
		}
	}
}

// windowInfo makes an aggregate over a window TVF (input, or under its filters and
// projections) windowed when its keys include the TVF's window_start and window_end, passed
// on unchanged.
func (b *Binder) windowInfo(input Node, keys []exec.Expr) *WindowInfo {
	w := windowOf(input)
	if w == nil {
		return nil
	}
	ws := len(w.Input.Schema())
	start, end := -1, -1
	for i, k := range keys {
		r, ok := k.(*exec.ColRef)
		if !ok {
			continue
		}
		if n, col := origin(input, r.Idx); n == Node(w) {
			switch col {
			case ws:
				start = i
			case ws + 1:
				end = i
			}
		}
	}
	if start < 0 || end < 0 {
		return nil
	}
	return &WindowInfo{TVF: w.TVF, EmitOnClose: b.Stmt.EmitOnClose, StartKey: start, EndKey: end}
}

// CoerceTo casts a plan's columns to the given types (INSERT ... SELECT).
func CoerceTo(n Node, ts []types.T) (Node, error) {
	sch := n.Schema()
	if len(sch) != len(ts) {
		return nil, fmt.Errorf("query returns %d columns, %d expected", len(sch), len(ts))
	}
	cols := make([]Col, len(ts))
	for i, t := range ts {
		cols[i] = Col{Name: sch[i].Name, T: t}
	}
	return coerceAll(n, cols)
}

// BindPredicate binds a boolean condition over the given columns.
func (b *Binder) BindPredicate(e ast.ExprNode, cols []Col) (exec.Expr, error) {
	return b.bindPredicate(e, &scope{cols: cols})
}
