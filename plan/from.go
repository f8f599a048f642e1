package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// leaf is one input of an inner-join tree.
type leaf struct {
	node Node
	cols []Col
}

// bindFrom binds a FROM clause. Inner and cross joins are flattened into leaves and
// conjuncts (their ON conditions plus the WHERE's): a conjunct over one leaf filters that
// leaf before the join (predicate pushdown), an equality between two sides becomes a hash
// join key, and the rest filter the join where all their columns are available. It returns
// the conjuncts it could not place (those naming no leaf, or unknown columns) for the
// caller to bind above the join.
func (b *Binder) bindFrom(ref ast.ResultSetNode, outer *scope, where []ast.ExprNode) (Node, *scope, []ast.ExprNode, error) {
	var refs []ast.ResultSetNode
	conds := append([]ast.ExprNode{}, where...)
	flattenInner(ref, &refs, &conds)
	leaves := make([]leaf, len(refs))
	for i, r := range refs {
		n, cols, err := b.bindTableRef(r, outer)
		if err != nil {
			return nil, nil, nil, err
		}
		leaves[i] = leaf{node: n, cols: cols}
	}
	if len(leaves) == 1 {
		s := &scope{cols: leaves[0].cols, parent: outer}
		used := make([]bool, len(conds))
		if err := b.pushBelowWindow(leaves[0].node, conds, used, outer); err != nil {
			return nil, nil, nil, err
		}
		var rest []ast.ExprNode
		for i, c := range conds {
			if !used[i] {
				rest = append(rest, c)
			}
		}
		return leaves[0].node, s, rest, nil
	}
	// Which leaves does each conjunct name? (-1 entries: a name no leaf has.)
	refsOf := make([][]int, len(conds))
	for i, c := range conds {
		refsOf[i] = b.leavesOf(c, leaves)
	}
	used := make([]bool, len(conds))
	// Push single-leaf conjuncts into their leaf (under its window when they can go there).
	for k, l := range leaves {
		var mine []ast.ExprNode
		var at []int
		for i, c := range conds {
			if len(refsOf[i]) == 1 && refsOf[i][0] == k {
				mine, at = append(mine, c), append(at, i)
			}
		}
		pushed := make([]bool, len(mine))
		if err := b.pushBelowWindow(l.node, mine, pushed, outer); err != nil {
			return nil, nil, nil, err
		}
		for j, ok := range pushed {
			used[at[j]] = ok
		}
	}
	for i, c := range conds {
		if !used[i] && len(refsOf[i]) == 1 && refsOf[i][0] >= 0 {
			l := &leaves[refsOf[i][0]]
			pred, err := b.bindPredicate(c, &scope{cols: l.cols, parent: outer})
			if err != nil {
				return nil, nil, nil, err
			}
			l.node = newFilter(l.node, pred)
			used[i] = true
		}
	}
	// Join leaves left to right, preferring a next leaf that has an equi-key with those
	// joined so far; restore the written column order afterwards.
	joined := []int{0}
	in := map[int]bool{0: true}
	cur := leaves[0].node
	curCols := leaves[0].cols
	for len(joined) < len(leaves) {
		next := -1
		for k := range leaves {
			if in[k] {
				continue
			}
			if next < 0 {
				next = k
			}
			if b.hasEquiKey(conds, refsOf, used, in, k) {
				next = k
				break
			}
		}
		right := leaves[next]
		j := &Join{Left: cur, Right: right.node, Kind: exec.JoinInner}
		both := append(append([]Col{}, curCols...), right.cols...)
		var residual []exec.Expr
		var residualAST []ast.ExprNode
		for i, c := range conds {
			if used[i] || !covered(refsOf[i], in, next) {
				continue
			}
			used[i] = true
			residualAST = append(residualAST, c)
			if l, r, ok := b.equiKey(c, curCols, right.cols, outer); ok {
				j.LeftKeys = append(j.LeftKeys, l)
				j.RightKeys = append(j.RightKeys, r)
				continue
			}
			pred, err := b.bindPredicate(c, &scope{cols: both, parent: outer})
			if err != nil {
				return nil, nil, nil, err
			}
			residual = append(residual, pred)
		}
		cond, err := andAll(residual)
		if err != nil {
			return nil, nil, nil, err
		}
		j.Cond = cond
		if b.Streaming {
			j.Interval = b.intervalSpec(residualAST, curCols, right.cols)
			j.Maintained, j.TTL = true, b.StateTTL
		}
		cur, curCols = j, both
		joined = append(joined, next)
		in[next] = true
	}
	var rest []ast.ExprNode
	for i, c := range conds {
		if !used[i] {
			rest = append(rest, c)
		}
	}
	// Restore the FROM order of columns if the joins were reordered.
	ordered := true
	for i, k := range joined {
		ordered = ordered && i == k
	}
	if !ordered {
		offset := map[int]int{}
		o := 0
		for _, k := range joined {
			offset[k] = o
			o += len(leaves[k].cols)
		}
		var exprs []exec.Expr
		var cols []Col
		for k, l := range leaves {
			for c, col := range l.cols {
				exprs = append(exprs, &exec.ColRef{Idx: offset[k] + c, T: col.T, Name: col.Name})
				cols = append(cols, col)
			}
		}
		cur, curCols = &Project{Input: cur, Exprs: exprs, cols: cols}, cols
	}
	return cur, &scope{cols: curCols, parent: outer}, rest, nil
}

func andAll(preds []exec.Expr) (exec.Expr, error) {
	var out exec.Expr
	for _, p := range preds {
		if out == nil {
			out = p
			continue
		}
		var err error
		if out, err = exec.NewBinary("AND", out, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// covered reports whether every leaf a conjunct names is joined or is next.
func covered(refs []int, in map[int]bool, next int) bool {
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		if r < 0 || (!in[r] && r != next) {
			return false
		}
	}
	return true
}

func (b *Binder) hasEquiKey(conds []ast.ExprNode, refsOf [][]int, used []bool, in map[int]bool, k int) bool {
	for i, c := range conds {
		if used[i] || !covered(refsOf[i], in, k) {
			continue
		}
		if bin, ok := c.(*ast.BinaryOperationExpr); ok && bin.Op == opcode.EQ {
			return true
		}
	}
	return false
}

// equiKey recognises `left column = right column` with join-compatible types.
func (b *Binder) equiKey(c ast.ExprNode, lcols, rcols []Col, outer *scope) (int, int, bool) {
	bin, ok := c.(*ast.BinaryOperationExpr)
	if !ok || bin.Op != opcode.EQ {
		return 0, 0, false
	}
	l, lok := bin.L.(*ast.ColumnNameExpr)
	r, rok := bin.R.(*ast.ColumnNameExpr)
	if !lok || !rok {
		return 0, 0, false
	}
	ls, rs := &scope{cols: lcols}, &scope{cols: rcols}
	li, err1 := ls.resolve(l.Name.Table.O, l.Name.Name.O)
	ri, err2 := rs.resolve(r.Name.Table.O, r.Name.Name.O)
	if err1 != nil || err2 != nil {
		li, err1 = ls.resolve(r.Name.Table.O, r.Name.Name.O)
		ri, err2 = rs.resolve(l.Name.Table.O, l.Name.Name.O)
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
	}
	if !keyCompatible(lcols[li].T, rcols[ri].T) {
		return 0, 0, false
	}
	return li, ri, true
}

// keyCompatible reports whether equal values of the two types encode equally.
func keyCompatible(a, b types.T) bool {
	if a == b {
		return true
	}
	return a.IsInteger() && b.IsInteger()
}

// leavesOf lists the leaves whose columns a conjunct names; -1 marks a name found in no
// leaf (an outer reference or an error, reported when the conjunct is bound) and a subquery,
// which may name columns of any leaf (correlated): such a conjunct is bound above the join.
func (b *Binder) leavesOf(e ast.ExprNode, leaves []leaf) []int {
	seen := map[int]bool{}
	var out []int
	add := func(k int) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	v := &colVisitor{fn: func(c *ast.ColumnName) {
		found := -1
		for k, l := range leaves {
			s := &scope{cols: l.cols}
			if _, err := s.resolve(c.Table.O, c.Name.O); err == nil {
				if found >= 0 {
					found = -1 // ambiguous: bind above the join to report it
					break
				}
				found = k
			}
		}
		add(found)
	}, sub: func(ast.ExprNode) { add(-1) }}
	e.Accept(v)
	return out
}

// colVisitor calls fn for each column an expression names outside subqueries, and sub (if
// set) for each subquery (every form — IN, EXISTS, ANY/ALL — holds a SubqueryExpr).
type colVisitor struct {
	fn  func(*ast.ColumnName)
	sub func(ast.ExprNode)
}

func (v *colVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.ColumnNameExpr:
		v.fn(x.Name)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		if v.sub != nil {
			v.sub(n.(ast.ExprNode))
		}
		return n, true
	}
	return n, false
}

func (v *colVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// flattenInner collects the leaves of a tree of inner/cross joins and their ON conjuncts.
func flattenInner(r ast.ResultSetNode, leaves *[]ast.ResultSetNode, conds *[]ast.ExprNode) {
	if j, ok := r.(*ast.Join); ok {
		if j.Right == nil {
			flattenInner(j.Left, leaves, conds)
			return
		}
		if j.Tp == ast.CrossJoin && !j.StraightJoin && !j.NaturalJoin && len(j.Using) == 0 && !isTemporal(j.Right) {
			flattenInner(j.Left, leaves, conds)
			flattenInner(j.Right, leaves, conds)
			if j.On != nil {
				*conds = append(*conds, splitAnd(j.On.Expr)...)
			}
			return
		}
	}
	if ts, ok := r.(*ast.TableSource); ok {
		if j, ok := ts.Source.(*ast.Join); ok && ts.AsName.L == "" {
			flattenInner(j, leaves, conds)
			return
		}
	}
	*leaves = append(*leaves, r)
}

// bindTableRef binds one FROM item: a table, view, CTE, subquery, window TVF or outer join.
func (b *Binder) bindTableRef(r ast.ResultSetNode, outer *scope) (Node, []Col, error) {
	switch n := r.(type) {
	case *ast.TableSource:
		alias := n.AsName.O
		switch src := n.Source.(type) {
		case *ast.TableName:
			return b.bindTableName(src, alias, outer)
		case *ast.SelectStmt, *ast.SetOprStmt:
			node, err := b.bindQuery(src, &scope{parent: outer})
			if err != nil {
				return nil, nil, err
			}
			names := b.Stmt.ColumnLists[n.AsName.L]
			if len(names) > len(node.Schema()) {
				if n.AsName.L == sql.ViewColumns {
					return nil, nil, b.errName(b.Stmt.Name, "the query of view %s has %d columns but its column list names %d", b.Stmt.Name, len(node.Schema()), len(names))
				}
				return nil, nil, b.errName(alias, "%s has %d columns but its column list names %d", alias, len(node.Schema()), len(names))
			}
			return requalify(node, alias, names)
		case *ast.Join:
			node, cols, _, err := b.bindFrom(src, outer, nil)
			if err != nil {
				return nil, nil, err
			}
			return node, cols.cols, nil
		}
	case *ast.Join:
		return b.bindOuterJoin(n, outer)
	}
	return nil, nil, b.errAt(r, "unsupported FROM item")
}

// requalify renames a derived table's columns under its alias.
func requalify(node Node, alias string, names []string) (Node, []Col, error) {
	sch := node.Schema()
	cols := make([]Col, len(sch))
	exprs := make([]exec.Expr, len(sch))
	for i, c := range sch {
		name := c.Name
		if i < len(names) {
			name = names[i]
		}
		cols[i] = Col{Name: name, Table: strings.ToLower(alias), T: c.T}
		exprs[i] = &exec.ColRef{Idx: i, T: c.T, Name: c.Name}
	}
	return &Project{Input: node, Exprs: exprs, cols: cols}, cols, nil
}

func (b *Binder) bindTableName(t *ast.TableName, alias string, outer *scope) (Node, []Col, error) {
	name := t.Name.O
	if t.Schema.L != "" && t.Schema.L != "system" {
		return nil, nil, b.errName(t.Schema.O, "unknown schema %s", t.Schema.O)
	}
	if t.Schema.L == "system" {
		name = "system." + t.Name.L
	}
	if alias == "" {
		alias = t.Name.O
	}
	if w, ok := b.Stmt.Windows[t.Name.O]; ok {
		return b.bindWindowTVF(w, alias, outer)
	}
	if t.Schema.L == "" {
		if cte, ok := b.lookupCTE(name); ok {
			return b.bindCTE(cte, alias, b.Stmt.PosOfName(name), outer)
		}
	}
	if t.AsOf != nil {
		return nil, nil, b.errName(name, "FOR SYSTEM_TIME AS OF is only supported on the right side of a JOIN")
	}
	return b.bindNamed(name, alias, b.Stmt.PosOfName(name))
}

// bindNamed binds a name of the catalog written at pos under alias: the scan of a table or
// materialized view, or a logical view's query.
func (b *Binder) bindNamed(name, alias string, pos sql.Pos) (Node, []Col, error) {
	rel, err := b.relationAt(name, pos)
	if err != nil {
		return nil, nil, err
	}
	if rel.View != nil {
		return b.expandView(rel, alias, pos)
	}
	s := scanOf(rel, alias)
	return s, s.cols, nil
}

// bindCTE binds a CTE's query where it is named (at pos) under alias, its columns named by
// the CTE's column list.
func (b *Binder) bindCTE(cte *ast.CommonTableExpression, alias string, pos sql.Pos, outer *scope) (Node, []Col, error) {
	if cte == nil {
		return nil, nil, b.Stmt.ErrorAtPos(pos, "recursive CTEs are not supported")
	}
	// Its own name inside its query names what it would without it (a table, an enclosing
	// query's CTE), as a WITH that is not RECURSIVE means: it is out of scope meanwhile.
	for _, m := range b.ctes {
		if m[cte.Name.L] == cte {
			delete(m, cte.Name.L)
			defer func() { m[cte.Name.L] = cte }()
		}
	}
	node, err := b.bindQuery(cte.Query.Query, &scope{parent: outer})
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, c := range cte.ColNameList {
		names = append(names, c.O)
	}
	return requalify(node, alias, names)
}

// bindOuterJoin binds LEFT, RIGHT and FULL joins and joins with USING or NATURAL.
func (b *Binder) bindOuterJoin(j *ast.Join, outer *scope) (Node, []Col, error) {
	if isTemporal(j.Right) {
		return b.bindTemporalJoin(j, outer)
	}
	left, lcols, err := b.bindSide(j.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	right, rcols, err := b.bindSide(j.Right, outer)
	if err != nil {
		return nil, nil, err
	}
	kind := exec.JoinInner
	switch {
	case j.StraightJoin:
		kind = exec.JoinFull
	case j.Tp == ast.LeftJoin:
		kind = exec.JoinLeft
	case j.Tp == ast.RightJoin:
		kind = exec.JoinRight
	}
	node := &Join{Left: left, Right: right, Kind: kind}
	both := append(append([]Col{}, lcols...), rcols...)
	var conds []ast.ExprNode
	if j.On != nil {
		conds = splitAnd(j.On.Expr)
	}
	using := j.Using
	if j.NaturalJoin {
		for _, l := range lcols {
			for _, r := range rcols {
				if strings.EqualFold(l.Name, r.Name) && !l.Hidden && !r.Hidden {
					using = append(using, &ast.ColumnName{Name: ast.NewCIStr(l.Name)})
				}
			}
		}
	}
	var merged [][2]int // the USING columns: left and right index
	for _, u := range using {
		li, err1 := (&scope{cols: lcols}).resolve("", u.Name.O)
		ri, err2 := (&scope{cols: rcols}).resolve("", u.Name.O)
		if err1 != nil || err2 != nil {
			return nil, nil, b.errName(u.Name.O, "column %s of USING must exist on both sides of the join", u.Name.O)
		}
		merged = append(merged, [2]int{li, ri})
		if keyCompatible(lcols[li].T, rcols[ri].T) {
			node.LeftKeys = append(node.LeftKeys, li)
			node.RightKeys = append(node.RightKeys, ri)
			continue
		}
		eq, err := exec.NewBinary("=", &exec.ColRef{Idx: li, T: lcols[li].T}, &exec.ColRef{Idx: len(lcols) + ri, T: rcols[ri].T})
		if err != nil {
			return nil, nil, b.errName(u.Name.O, "%s", err)
		}
		if node.Cond, err = andAll(append(nilOr(node.Cond), eq)); err != nil {
			return nil, nil, err
		}
	}
	residual := nilOr(node.Cond)
	lk, rk, more, err := b.onCondition(conds, lcols, rcols, outer)
	if err != nil {
		return nil, nil, err
	}
	node.LeftKeys, node.RightKeys = append(node.LeftKeys, lk...), append(node.RightKeys, rk...)
	if node.Cond, err = andAll(append(residual, more...)); err != nil {
		return nil, nil, err
	}
	if b.Streaming {
		node.Interval = b.intervalSpec(conds, lcols, rcols)
		node.Maintained, node.TTL = true, b.StateTTL
	}
	if len(merged) > 0 {
		return usingColumns(node, kind, lcols, rcols, merged)
	}
	return node, both, nil
}

// usingColumns puts the columns of a USING (or NATURAL) join in SQL's order: each USING
// column once, unqualified — the left side's value, the right's for a RIGHT join, the first
// not NULL for a FULL join — then both sides' columns, where each side's USING columns stay
// reachable by their qualified names only (Hidden).
func usingColumns(join Node, kind exec.JoinKind, lcols, rcols []Col, merged [][2]int) (Node, []Col, error) {
	var exprs []exec.Expr
	var cols []Col
	hidden := map[int]bool{}
	for _, m := range merged {
		l := &exec.ColRef{Idx: m[0], T: lcols[m[0]].T, Name: lcols[m[0]].Name}
		r := &exec.ColRef{Idx: len(lcols) + m[1], T: rcols[m[1]].T, Name: rcols[m[1]].Name}
		var x exec.Expr = l
		switch kind {
		case exec.JoinRight:
			x = r
		case exec.JoinFull:
			var err error
			if x, err = exec.NewFunc("coalesce", []exec.Expr{l, r}); err != nil {
				return nil, nil, err
			}
		}
		exprs = append(exprs, x)
		cols = append(cols, Col{Name: lcols[m[0]].Name, T: x.Type()})
		hidden[m[0]], hidden[len(lcols)+m[1]] = true, true
	}
	for i, c := range append(append([]Col{}, lcols...), rcols...) {
		exprs = append(exprs, &exec.ColRef{Idx: i, T: c.T, Name: c.Name})
		c.Hidden = c.Hidden || hidden[i]
		cols = append(cols, c)
	}
	return &Project{Input: join, Exprs: exprs, cols: cols}, cols, nil
}

// onCondition splits a join's ON conjuncts into equi-join keys and a residual condition.
func (b *Binder) onCondition(conds []ast.ExprNode, lcols, rcols []Col, outer *scope) (lk, rk []int, residual []exec.Expr, err error) {
	both := append(append([]Col{}, lcols...), rcols...)
	for _, c := range conds {
		if l, r, ok := b.equiKey(c, lcols, rcols, outer); ok {
			lk, rk = append(lk, l), append(rk, r)
			continue
		}
		pred, err := b.bindPredicate(c, &scope{cols: both, parent: outer})
		if err != nil {
			return nil, nil, nil, err
		}
		residual = append(residual, pred)
	}
	return lk, rk, residual, nil
}

func nilOr(e exec.Expr) []exec.Expr {
	if e == nil {
		return nil
	}
	return []exec.Expr{e}
}

func (b *Binder) bindSide(r ast.ResultSetNode, outer *scope) (Node, []Col, error) {
	if j, ok := r.(*ast.Join); ok && j.Right != nil && j.Tp == ast.CrossJoin && !j.StraightJoin && !j.NaturalJoin && len(j.Using) == 0 {
		node, s, rest, err := b.bindFrom(j, outer, nil)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range rest {
			pred, err := b.bindPredicate(c, s)
			if err != nil {
				return nil, nil, err
			}
			node = &Filter{Input: node, Pred: pred}
		}
		return node, s.cols, nil
	}
	if j, ok := r.(*ast.Join); ok && j.Right == nil {
		return b.bindSide(j.Left, outer)
	}
	return b.bindTableRef(r, outer)
}

// bindWindowTVF binds TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE t, DESCRIPTOR(c), ...)): the
// columns of t plus window_start, window_end and window_time. t is a CTE, a logical view
// (their queries, as if written there: rows keep the watermarks they carry through filters
// and projections, so the window judges them as over the table), a table or a materialized
// view.
func (b *Binder) bindWindowTVF(w *sql.WindowTVF, alias string, outer *scope) (Node, []Col, error) {
	var input Node
	var incols []Col
	var err error
	if cte, ok := b.lookupCTE(w.Table); ok {
		input, incols, err = b.bindCTE(cte, alias, w.TablePos, outer)
	} else {
		input, incols, err = b.bindNamed(w.Table, alias, w.TablePos)
	}
	if err != nil {
		return nil, nil, err
	}
	in := &scope{cols: incols}
	tc, err := in.resolve("", w.TimeCol)
	if err != nil {
		return nil, nil, b.errName(w.TimeCol, "DESCRIPTOR column %s does not exist in %s", w.TimeCol, w.Table)
	}
	if incols[tc].T.Kind != types.Timestamp {
		return nil, nil, b.errName(w.TimeCol, "DESCRIPTOR column %s must be TIMESTAMP(3), it is %s", w.TimeCol, incols[tc].T)
	}
	var parts []int
	for _, p := range w.PartitionBy {
		i, err := in.resolve("", p)
		if err != nil {
			return nil, nil, b.errName(p, "PARTITION BY column %s does not exist in %s", p, w.Table)
		}
		parts = append(parts, i)
	}
	q := strings.ToLower(alias)
	cols := append(append([]Col{}, incols...),
		Col{Name: "window_start", Table: q, T: types.TTimestamp},
		Col{Name: "window_end", Table: q, T: types.TTimestamp},
		Col{Name: "window_time", Table: q, T: types.TTimestamp})
	node := &Window{Input: input, TVF: w, TimeCol: tc, PartCols: parts, cols: cols}
	return node, cols, nil
}

// pushBelowWindow moves the conjuncts of conds that read only the windowed table's columns
// (no window column, no subquery) under n when n is a TUMBLE, HOP or CUMULATE window, setting
// used for each: a row such a filter rejects never reaches the window, so it is never judged
// late, as in Flink, where the filter runs before the window. Results are the same either
// way, as a row's windows do not depend on other rows. SESSION keeps them above: the rows a
// filter drops would change how sessions merge.
func (b *Binder) pushBelowWindow(n Node, conds []ast.ExprNode, used []bool, outer *scope) error {
	w, ok := n.(*Window)
	if !ok || w.TVF.Kind == sql.Session {
		return nil
	}
	in := &scope{cols: w.Input.Schema(), parent: outer}
	for i, c := range conds {
		free := true
		c.Accept(&colVisitor{fn: func(name *ast.ColumnName) {
			if _, err := in.resolve(name.Table.O, name.Name.O); err != nil {
				free = false
			}
		}, sub: func(ast.ExprNode) { free = false }})
		if !free {
			continue
		}
		pred, err := b.bindPredicate(c, in)
		if err != nil {
			return err
		}
		w.Input, used[i] = &Filter{Input: w.Input, Pred: pred}, true
	}
	return nil
}

// isTemporal reports whether a join's right side is `t FOR SYSTEM_TIME AS OF ...`.
func isTemporal(r ast.ResultSetNode) bool {
	ts, ok := r.(*ast.TableSource)
	if !ok {
		return false
	}
	tn, ok := ts.Source.(*ast.TableName)
	return ok && tn.AsOf != nil
}

// bindTemporalJoin binds `left [LEFT] JOIN v FOR SYSTEM_TIME AS OF left.ts [AS] a ON ...`.
// v must be a versioned table (a PRIMARY KEY and a WATERMARK) and the ON condition must
// compare all of v's key columns with the left side.
func (b *Binder) bindTemporalJoin(j *ast.Join, outer *scope) (Node, []Col, error) {
	if j.Tp != ast.CrossJoin && j.Tp != ast.LeftJoin || j.StraightJoin || j.NaturalJoin || len(j.Using) > 0 {
		return nil, nil, b.errAt(j, "a temporal join must be [INNER] JOIN or LEFT JOIN ... ON")
	}
	left, lcols, err := b.bindSide(j.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	ts := j.Right.(*ast.TableSource)
	tn := ts.Source.(*ast.TableName)
	alias := ts.AsName.O
	if alias == "" {
		alias = tn.Name.O
	}
	rel, err := b.relation(tn.Name.O)
	if err != nil {
		return nil, nil, err
	}
	name := tn.Name.O
	if rel.View != nil {
		return nil, nil, b.Stmt.ErrorAtBefore(name, "FOR", "FOR SYSTEM_TIME AS OF needs a versioned table: %s is a view", name)
	}
	proc := false
	if fc, ok := tn.AsOf.TsExpr.(*ast.FuncCallExpr); ok && fc.FnName.L == "proctime" {
		proc = true
	}
	if len(rel.PK) == 0 {
		return nil, nil, b.Stmt.ErrorAtBefore(name, "FOR", "FOR SYSTEM_TIME AS OF needs a versioned table: %s has no PRIMARY KEY", name)
	}
	if rel.TimeCol < 0 && !proc {
		return nil, nil, b.Stmt.ErrorAtBefore(name, "FOR", "FOR SYSTEM_TIME AS OF needs a versioned table: %s has no WATERMARK", name)
	}
	right := scanOf(rel, alias)
	rcols := right.cols
	node := &TemporalJoin{Left: left, Right: right, Outer: j.Tp == ast.LeftJoin, RightTime: rel.TimeCol, ProcTime: proc}
	if !proc {
		x, err := b.bindExpr(tn.AsOf.TsExpr, &scope{cols: lcols, parent: outer})
		if err != nil {
			return nil, nil, err
		}
		r, ok := x.(*exec.ColRef)
		if !ok || x.Type().Kind != types.Timestamp {
			return nil, nil, b.errAt(tn.AsOf.TsExpr, "FOR SYSTEM_TIME AS OF takes a TIMESTAMP column of the left side (its event time) or PROCTIME()")
		}
		node.LeftTime = r.Idx
		if b.Streaming && !hasEventTime(left, r.Idx) {
			return nil, nil, b.errAt(tn.AsOf.TsExpr, "FOR SYSTEM_TIME AS OF %s needs the left side's event time: %s", lcols[r.Idx].Name, noEventTime(left, r.Idx))
		}
	}
	both := append(append([]Col{}, lcols...), rcols...)
	if j.On == nil {
		return nil, nil, b.Stmt.ErrorAtBefore(name, "FOR", "a temporal join needs an ON condition on the primary key of %s", name)
	}
	var residual []exec.Expr
	if node.LeftKeys, node.RightKeys, residual, err = b.onCondition(splitAnd(j.On.Expr), lcols, rcols, outer); err != nil {
		return nil, nil, err
	}
	for _, k := range rel.PK {
		found := false
		for _, r := range node.RightKeys {
			found = found || r == k
		}
		if !found {
			return nil, nil, b.Stmt.ErrorAtBefore(name, "FOR", "the ON condition of a temporal join must equate the primary key column %s of %s with the left side", rel.Cols[k].Name, name)
		}
	}
	// Join on exactly the key: other equalities on right columns filter the match instead.
	var lk, rk []int
	for i, r := range node.RightKeys {
		isKey := false
		for _, k := range rel.PK {
			isKey = isKey || k == r
		}
		if isKey {
			lk, rk = append(lk, node.LeftKeys[i]), append(rk, r)
			continue
		}
		eq, err := exec.NewBinary("=", &exec.ColRef{Idx: node.LeftKeys[i], T: lcols[node.LeftKeys[i]].T}, &exec.ColRef{Idx: len(lcols) + r, T: rcols[r].T})
		if err != nil {
			return nil, nil, err
		}
		residual = append(residual, eq)
	}
	node.LeftKeys, node.RightKeys = lk, rk
	if node.Cond, err = andAll(residual); err != nil {
		return nil, nil, err
	}
	return node, both, nil
}

// intervalSpec recognises event-time bounds between the two sides of a join —
// `r.ts BETWEEN l.ts - INTERVAL a AND l.ts + INTERVAL b`, or a pair of >= / <= (also > / <,
// taken as inclusive bounds one millisecond in) comparisons of `col [± INTERVAL]` — and
// returns them as right time - left time in [Lo, Hi], or nil.
func (b *Binder) intervalSpec(conds []ast.ExprNode, lcols, rcols []Col) *exec.IntervalSpec {
	type bound struct {
		lc, rc int
		lo, hi int64
		hasLo  bool
		hasHi  bool
	}
	var cur *bound
	note := func(lc, rc int, lo, hi int64, hasLo, hasHi bool) {
		if cur == nil {
			cur = &bound{lc: lc, rc: rc, lo: lo, hi: hi}
		} else if cur.lc != lc || cur.rc != rc {
			return
		}
		if hasLo && (!cur.hasLo || lo > cur.lo) {
			cur.lo, cur.hasLo = lo, true
		}
		if hasHi && (!cur.hasHi || hi < cur.hi) {
			cur.hi, cur.hasHi = hi, true
		}
	}
	// side resolves `col [± interval]` to (side, column, offset).
	side := func(e ast.ExprNode) (int, int, int64, bool) {
		var off int64
		if p, ok := e.(*ast.ParenthesesExpr); ok {
			e = p.Expr
		}
		if bin, ok := e.(*ast.BinaryOperationExpr); ok && (bin.Op == opcode.Plus || bin.Op == opcode.Minus) {
			ms, ok := sql.IntervalMillis(bin.R)
			if !ok {
				return 0, 0, 0, false
			}
			if bin.Op == opcode.Minus {
				ms = -ms
			}
			off, e = ms, bin.L
		}
		c, ok := e.(*ast.ColumnNameExpr)
		if !ok {
			return 0, 0, 0, false
		}
		if i, err := (&scope{cols: lcols}).resolve(c.Name.Table.O, c.Name.Name.O); err == nil && lcols[i].T.Kind == types.Timestamp {
			return 0, i, off, true
		}
		if i, err := (&scope{cols: rcols}).resolve(c.Name.Table.O, c.Name.Name.O); err == nil && rcols[i].T.Kind == types.Timestamp {
			return 1, i, off, true
		}
		return 0, 0, 0, false
	}
	// cmp records x op y where x and y are time expressions on opposite sides.
	cmp := func(x ast.ExprNode, op opcode.Op, y ast.ExprNode) {
		sx, cx, ox, ok1 := side(x)
		sy, cy, oy, ok2 := side(y)
		if !ok1 || !ok2 || sx == sy {
			return
		}
		// Normalise to r + or  op  l + ol, i.e. r - l op ol - or.
		if sx == 0 {
			sx, cx, ox, sy, cy, oy = sy, cy, oy, sx, cx, ox
			switch op {
			case opcode.GE:
				op = opcode.LE
			case opcode.LE:
				op = opcode.GE
			case opcode.GT:
				op = opcode.LT
			case opcode.LT:
				op = opcode.GT
			}
		}
		d := oy - ox
		switch op {
		case opcode.GE:
			note(cy, cx, d, 0, true, false)
		case opcode.GT:
			note(cy, cx, d+1, 0, true, false)
		case opcode.LE:
			note(cy, cx, 0, d, false, true)
		case opcode.LT:
			note(cy, cx, 0, d-1, false, true)
		}
	}
	for _, c := range conds {
		switch n := c.(type) {
		case *ast.BetweenExpr:
			if !n.Not {
				cmp(n.Expr, opcode.GE, n.Left)
				cmp(n.Expr, opcode.LE, n.Right)
			}
		case *ast.BinaryOperationExpr:
			switch n.Op {
			case opcode.GE, opcode.GT, opcode.LE, opcode.LT:
				cmp(n.L, n.Op, n.R)
			}
		}
	}
	if cur == nil || !cur.hasLo || !cur.hasHi || cur.lo > cur.hi {
		return nil
	}
	return &exec.IntervalSpec{LeftTime: cur.lc, RightTime: cur.rc, Lo: cur.lo, Hi: cur.hi}
}

// EventTimeCol is the first output column of n that is its source's event-time column
// passed through filters and projections, or -1: a view over a table keeps the table's
// event time, so it can be the probe side of a temporal join as the table can.
func EventTimeCol(n Node) int {
	for i := range n.Schema() {
		if hasEventTime(n, i) {
			return i
		}
	}
	return -1
}

// Untimed names a table without a WATERMARK that n reads, directly or through views, or
// returns "" when there is none: an operator with several inputs takes the least of their
// watermarks, so one such input leaves n's watermark unset for good.
func Untimed(n Node) string {
	if s, ok := n.(*Scan); ok {
		return s.Rel.Untimed
	}
	for _, c := range n.Children() {
		if r := Untimed(c); r != "" {
			return r
		}
	}
	return ""
}

// UniqueKey returns the columns of n's output that identify its rows — an aggregate's group
// keys (a window aggregate's window_end, or but for CUMULATE its window_start, may stand for
// both), or a scanned table's primary key, passed on unchanged through filters and
// projections — with ok false when none is known. An aggregate without keys has one row: its
// key is empty.
func UniqueKey(n Node) (key []int, ok bool) {
	base := n
	for {
		if f, isF := base.(*Filter); isF {
			base = f.Input
		} else if p, isP := base.(*Project); isP {
			base = p.Input
		} else {
			break
		}
	}
	var parts []int
	switch x := base.(type) {
	case *Aggregate:
		for i := 0; i < x.NumKeys; i++ {
			parts = append(parts, i)
		}
	case *Scan:
		if len(x.Rel.PK) == 0 {
			return nil, false
		}
		parts = x.Rel.PK
	case *Rank:
		// ROW_NUMBER numbers a partition's rows 1, 2, ...: the partition and the number name
		// one row (as in Flink's Top-N, whose key is the partition and the rank).
		if x.Fn != exec.RowNumber {
			return nil, false
		}
		parts = append(slices.Clone(x.PartCols), len(x.Input.Schema()))
	default:
		return nil, false
	}
	out := func(p int) int {
		for i := range n.Schema() {
			if m, c := origin(n, i); m == base && c == p {
				return i
			}
		}
		return -1
	}
	for _, p := range parts {
		found := out(p)
		if a, ok := base.(*Aggregate); found < 0 && ok && a.Window != nil {
			// A window's end determines its start, and, but for CUMULATE (windows of one
			// start end at each step), its start its end (a key's sessions never overlap):
			// then one of them is enough.
			switch {
			case p == a.Window.StartKey && out(a.Window.EndKey) >= 0:
				continue
			case p == a.Window.EndKey && a.Window.TVF.Kind != sql.Cumulate && out(a.Window.StartKey) >= 0:
				continue
			}
		}
		if found < 0 {
			return nil, false
		}
		key = append(key, found)
	}
	return key, true
}

// hasEventTime reports whether column col of n is the WATERMARK column of the table n
// reads (through filters and column-preserving projections).
// noEventTime says why column col of n is not an event-time column (hasEventTime false).
func noEventTime(n Node, col int) string {
	o, c := origin(n, col)
	scan, ok := o.(*Scan)
	switch {
	case !ok || c < 0:
		return "a column of a table or view with a WATERMARK, read through filters and projections (a window TVF's, a join's or an aggregate's output has none)"
	case scan.Rel.TimeCol < 0:
		return fmt.Sprintf("%s declares no WATERMARK", scan.Rel.Name)
	}
	return fmt.Sprintf("the WATERMARK of %s is on %s", scan.Rel.Name, scan.Schema()[scan.Rel.TimeCol].Name)
}

func hasEventTime(n Node, col int) bool {
	n, col = origin(n, col)
	scan, ok := n.(*Scan)
	return ok && col >= 0 && scan.Rel.TimeCol == col
}

// origin follows column col of n down through filters and projections that pass it on
// unchanged, to the node that makes it, and returns that node and the column there; a
// column a projection computes ends there, with col -1.
func origin(n Node, col int) (Node, int) {
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
		case *Project:
			r, ok := x.Exprs[col].(*exec.ColRef)
			if !ok {
				return x, -1
			}
			n, col = x.Input, r.Idx
		case *Expand:
			switch {
			case col == x.NumKeys:
				return x, -1 // the set's number
			case col > x.NumKeys:
				col--
			}
			n = x.Input
		default:
			return n, col
		}
	}
}
