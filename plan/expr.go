package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// scope is the set of columns an expression can name, with the enclosing query's scope.
type scope struct {
	cols   []Col
	parent *scope
	// agg, when set, binds expressions after GROUP BY: group keys and aggregates resolve to
	// the aggregate's output columns.
	agg *aggScope
	// win maps a window function call (its text) to the column holding its value.
	win map[string]int
}

type aggScope struct {
	keys    []ast.ExprNode // GROUP BY expressions
	keyText []string
	keyCols []int // for keys that are plain columns: the input column, else -1
	aggText []string
	input   *scope
	nkeys   int
	// sets, for GROUPING SETS, ROLLUP and CUBE, are the keys each set groups by; setCol is
	// the (hidden) column holding a row's set.
	sets   [][]int
	setCol int
}

// resolve finds a column by optional qualifier and name.
func (s *scope) resolve(table, name string) (int, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.Name, name) || c.Hidden && table == "" {
			continue
		}
		if table != "" && !strings.EqualFold(c.Table, table) {
			continue
		}
		if found >= 0 {
			return -1, fmt.Errorf("column reference %s is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		return -1, errNotFound
	}
	return found, nil
}

var errNotFound = fmt.Errorf("not found")

func (s *scope) names() []string {
	out := make([]string, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.Name
	}
	return out
}

// Binder binds one statement.
type Binder struct {
	Cat  Catalog
	Stmt *sql.Stmt
	// Args are the values of ? placeholders, in order.
	Args []any
	// Run executes a bounded plan (uncorrelated subqueries are evaluated while binding).
	Run func(Node) ([][]any, error)
	// Streaming is set while binding a materialized view's query, and StateTTL is then the
	// view's 'state.ttl' in ms (0: none), which its regular joins record (Join.TTL).
	Streaming bool
	StateTTL  int64
	ctes      []map[string]*ast.CommonTableExpression
	corr      []*correlation
	// refs are the catalog relations the statement names (Relations).
	refs []*Relation
	// at, while binding a logical view's query for a statement that names it, is where the
	// statement names it: its expressions' run-time errors are placed there.
	at *exec.Pos
	// semis numbers the derived tables that subqueries of a streaming query become
	// (semiJoins, scalarJoins); scalars maps a scalar subquery to its table's alias.
	semis   int
	scalars map[*ast.SubqueryExpr]string
}

// Relations returns the catalog relations (tables, views, system tables) the bound
// statement names itself, in the order it names them; those it reads only through logical
// views are not among them.
func (b *Binder) Relations() []*Relation { return b.refs }

func (b *Binder) errAt(n ast.Node, format string, args ...any) error {
	return b.Stmt.ErrorAtPos(b.Stmt.PosOf(n), format, args...)
}

func (b *Binder) errName(name string, format string, args ...any) error {
	return b.Stmt.ErrorAt(name, format, args...)
}

// errRef is an error at column reference n: where it stands when the parser recorded it
// (expressions' offsets), else at the first use of its name.
func (b *Binder) errRef(n *ast.ColumnNameExpr, format string, args ...any) error {
	if n.OriginTextPosition() > 0 {
		return b.errAt(n, format, args...)
	}
	return b.errName(n.Name.Name.O, format, args...)
}

// wrap gives an error from an exec constructor the position of node n.
// builtAt is an expression being built for AST node n.
type builtAt struct {
	b *Binder
	n ast.Node
}

// builtAt starts building the expression for n: b.builtAt(n).expr(exec.NewX(...)).
func (b *Binder) builtAt(n ast.Node) builtAt { return builtAt{b, n} }

// expr returns x with n's place recorded for the data errors x raises at run time
// (division by zero, overflow, bad cast text), or err located at n.
func (p builtAt) expr(x exec.Expr, err error) (exec.Expr, error) {
	if err != nil {
		return nil, p.b.wrap(p.n, err)
	}
	exec.Locate(x, p.b.execPos(p.n))
	return x, nil
}

// execPos is where n stands in the user's text, for the data errors raised at run time
// (unknown without a statement).
func (b *Binder) execPos(n ast.Node) exec.Pos {
	if b.at != nil {
		return *b.at
	}
	if b.Stmt == nil {
		return exec.Pos{}
	}
	pos := b.Stmt.PosOf(n)
	return exec.Pos{Line: pos.Line, Col: pos.Col}
}

func (b *Binder) wrap(n ast.Node, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*sql.Error); ok {
		return err
	}
	return b.errAt(n, "%s", err.Error())
}

// restore is an expression's text, which names an unaliased column and identifies an
// expression (a GROUP BY key, an aggregate, a window function): names and keywords in lower
// case (they are case-insensitive), string literals as written, outer parentheses dropped.
func restore(n ast.Node) string {
	for p, ok := n.(*ast.ParenthesesExpr); ok; p, ok = n.(*ast.ParenthesesExpr) {
		n = p.Expr
	}
	var sb strings.Builder
	_ = n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordLowercase|format.RestoreNameLowercase|format.RestoreNameBackQuotes, &sb))
	return numberParams(sb.String(), n)
}

// numberParams writes each placeholder of n's restored text as ?N, N its argument's number
// (restored, every placeholder is ?, so k + ? would be the same expression whatever its
// argument). Placeholders are restored in the order the AST visits them.
func numberParams(text string, n ast.Node) string {
	var orders []int
	n.Accept(&paramVisitor{orders: &orders})
	if len(orders) == 0 {
		return text
	}
	var sb strings.Builder
	quote := byte(0) // the quote of the string or name being read, if any
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0 // a doubled quote reopens at the next byte
		case quote == 0 && (c == '\'' || c == '`'):
			quote = c
		case quote == 0 && c == '?' && len(orders) > 0:
			fmt.Fprintf(&sb, "?%d", orders[0]+1)
			orders = orders[1:]
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// paramVisitor lists the argument numbers of the placeholders it visits.
type paramVisitor struct{ orders *[]int }

func (v *paramVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*test_driver.ParamMarkerExpr); ok {
		*v.orders = append(*v.orders, p.Order)
	}
	return n, false
}

func (v *paramVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// bindExpr binds a scalar expression.
func (b *Binder) bindExpr(e ast.ExprNode, s *scope) (exec.Expr, error) {
	if s.agg != nil {
		if x, ok, err := b.bindAggRef(e, s); ok || err != nil {
			return x, err
		}
	}
	switch n := e.(type) {
	case *ast.ParenthesesExpr:
		return b.bindExpr(n.Expr, s)
	case *ast.ColumnNameExpr:
		return b.bindColumn(n, s)
	case *test_driver.ParamMarkerExpr:
		if n.Order >= len(b.Args) {
			return nil, b.errAt(n, "missing value for placeholder %d: %d argument(s) given", n.Order+1, len(b.Args))
		}
		return constOfGo(b.Args[n.Order], n, b)
	case *test_driver.ValueExpr:
		return literal(n)
	case *ast.BinaryOperationExpr:
		return b.bindBinary(n, s)
	case *ast.UnaryOperationExpr:
		x, err := b.bindExpr(n.V, s)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case opcode.Not, opcode.Not2:
			r, err := exec.NewNot(x)
			return r, b.wrap(n, err)
		case opcode.Minus:
			if c, ok := x.(*exec.Const); ok {
				switch v := c.V.(type) {
				case int64:
					// The one value whose negation leaves its type overflows at run time.
					if v != math.MinInt64 && (c.T.Kind != types.Int || v != math.MinInt32) {
						return &exec.Const{V: -v, T: c.T}, nil
					}
				case float64:
					return &exec.Const{V: -v, T: c.T}, nil
				}
			}
			return b.builtAt(n).expr(exec.NewNeg(x))
		case opcode.Plus:
			return x, nil
		}
		return nil, b.errAt(n, "operator %s is not supported", n.Op)
	case *ast.IsNullExpr:
		x, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		return exec.NewIsNull(x, n.Not), nil
	case *ast.IsTruthExpr:
		x, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		r, err := exec.NewIsBool(x, n.True != 0, n.Not)
		return r, b.wrap(n, err)
	case *ast.BetweenExpr:
		x, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		lo, err := b.bindExpr(n.Left, s)
		if err != nil {
			return nil, err
		}
		hi, err := b.bindExpr(n.Right, s)
		if err != nil {
			return nil, err
		}
		if x, err = b.coerceText(">=", x, lo, n.Expr); err != nil { // '5' BETWEEN a AND 20
			return nil, err
		}
		if lo, err = b.coerceText(">=", lo, x, n.Left); err != nil {
			return nil, err
		}
		if hi, err = b.coerceText("<=", hi, x, n.Right); err != nil {
			return nil, err
		}
		ge, err := exec.NewBinary(">=", x, lo)
		if err != nil {
			return nil, b.wrap(n, err)
		}
		le, err := exec.NewBinary("<=", x, hi)
		if err != nil {
			return nil, b.wrap(n, err)
		}
		r, err := exec.NewBinary("AND", ge, le)
		if err == nil && n.Not {
			r, err = exec.NewNot(r)
		}
		return r, b.wrap(n, err)
	case *ast.PatternLikeOrIlikeExpr:
		x, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		p, err := b.bindExpr(n.Pattern, s)
		if err != nil {
			return nil, err
		}
		if !n.IsLike {
			if x, err = exec.NewFunc("lower", []exec.Expr{x}); err != nil {
				return nil, b.wrap(n, err)
			}
			if p, err = exec.NewFunc("lower", []exec.Expr{p}); err != nil {
				return nil, b.wrap(n, err)
			}
		}
		esc := rune(n.Escape)
		if esc == 0 {
			esc = '\\'
		}
		r, err := exec.NewLike(x, p, esc, n.Not)
		return r, b.wrap(n, err)
	case *ast.PatternRegexpExpr:
		// s [NOT] REGEXP re, s [NOT] RLIKE re (MySQL): REGEXP(s, re).
		args, err := b.bindArgs([]ast.ExprNode{n.Expr, n.Pattern}, s)
		if err != nil {
			return nil, err
		}
		r, err := b.builtAt(n).expr(exec.NewFunc("regexp", args))
		if err == nil && n.Not {
			r, err = exec.NewNot(r)
		}
		return r, b.wrap(n, err)
	case *ast.PatternInExpr:
		return b.bindIn(n, s)
	case *ast.CaseExpr:
		var operand, els exec.Expr
		var err error
		if n.Value != nil {
			if operand, err = b.bindExpr(n.Value, s); err != nil {
				return nil, err
			}
		}
		var whens, thens []exec.Expr
		for _, w := range n.WhenClauses {
			we, err := b.bindExpr(w.Expr, s)
			if err != nil {
				return nil, err
			}
			if operand != nil { // CASE x WHEN '1': the text takes x's type, as in x = '1'
				if we, err = b.coerceText("=", we, operand, w.Expr); err != nil {
					return nil, err
				}
			}
			te, err := b.bindExpr(w.Result, s)
			if err != nil {
				return nil, err
			}
			whens, thens = append(whens, we), append(thens, te)
		}
		if n.ElseClause != nil {
			if els, err = b.bindExpr(n.ElseClause, s); err != nil {
				return nil, err
			}
		}
		r, err := exec.NewCase(operand, whens, thens, els)
		return r, b.wrap(n, err)
	case *ast.FuncCallExpr:
		return b.bindFunc(n, s)
	case *ast.FuncCastExpr:
		x, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		t, err := FieldType(n.Tp)
		if err != nil {
			return nil, b.errAt(n, "%s", err)
		}
		return b.builtAt(n).expr(exec.NewCast(x, t, false))
	case *ast.AggregateFuncExpr:
		return nil, b.errAt(n, "aggregate function %s is not allowed here", strings.ToUpper(n.F))
	case *ast.SubqueryExpr:
		return b.bindScalarSubquery(n, s)
	case *ast.ExistsSubqueryExpr:
		sub, ok := n.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, b.errAt(n, "unsupported EXISTS operand")
		}
		node, c, err := b.bindSubquery(sub, s)
		if err != nil {
			return nil, err
		}
		if len(c.cols) > 0 {
			return b.correlated(subExists, node, c, nil, n.Not), nil
		}
		rows, err := b.Run(node)
		if err != nil {
			return nil, err
		}
		return &exec.Const{V: (len(rows) > 0) != n.Not, T: types.TBool}, nil
	case *ast.CompareSubqueryExpr:
		return b.bindCompareSubquery(n, s)
	case *ast.DefaultExpr:
		return &exec.Const{T: types.TNull}, nil
	case *ast.RowExpr:
		return nil, b.errAt(n, "row values such as (a, b) are not supported: compare the columns one by one")
	case *ast.WindowFuncExpr:
		if i, ok := s.win[restore(n)]; ok {
			return &exec.ColRef{Idx: i, T: s.cols[i].T, Name: s.cols[i].Name}, nil
		}
		return nil, b.errAt(n, "window function %s is not allowed here", strings.ToUpper(n.Name))
	}
	return nil, b.errAt(e, "expression %s is not supported", restore(e))
}

func (b *Binder) bindColumn(n *ast.ColumnNameExpr, s *scope) (exec.Expr, error) {
	name, table := n.Name.Name.O, n.Name.Table.O
	i, err := s.resolve(table, name)
	if err == nil {
		return &exec.ColRef{Idx: i, T: s.cols[i].T, Name: s.cols[i].Name}, nil
	}
	if err != errNotFound {
		return nil, b.errRef(n, "%s", err)
	}
	for p := s.parent; p != nil; p = p.parent {
		if j, err := p.resolve(table, name); err == nil {
			return b.outerRef(p, j, n)
		}
		if p.agg != nil {
			if _, err := p.agg.input.resolve(table, name); err == nil {
				return nil, b.errRef(n, "a subquery after GROUP BY can only refer to the outer query's grouping columns, and %s is not one", name)
			}
		}
	}
	full := name
	if table != "" {
		full = table + "." + name
		if !s.hasTable(table) {
			return nil, b.errRef(n, "unknown table %s in column reference %s", table, full)
		}
	}
	msg := fmt.Sprintf("unknown column %s", full)
	if s.agg != nil {
		s = s.agg.input
	}
	if sim := catalog.Similar(name, s.names()); sim != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", sim)
	}
	return nil, b.errRef(n, "%s", msg)
}

func (s *scope) hasTable(t string) bool {
	for _, c := range s.cols {
		if strings.EqualFold(c.Table, t) {
			return true
		}
	}
	return false
}

var binaryOps = map[opcode.Op]string{
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.Mod: "%",
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
	opcode.LogicAnd: "AND", opcode.LogicOr: "OR", opcode.IntDiv: "/",
}

// coerceText converts x, when it is a text constant (a literal or a placeholder's value),
// to the type of the other operand of a comparison (a number, DATE, TIMESTAMP or BOOLEAN)
// or arithmetic (a number; a TIMESTAMP plus or minus an INTERVAL), as PostgreSQL and DuckDB type an untyped literal or a parameter
// from its context: `amount = ?` with "12.34" compares exactly with a DECIMAL. A number
// keeps the precision its text has (numericText). Text that is not a value of that type is
// an error at n.
func (b *Binder) coerceText(op string, x, other exec.Expr, n ast.ExprNode) (exec.Expr, error) {
	c, ok := x.(*exec.Const)
	if !ok || c.T.Kind != types.Varchar || c.V == nil {
		return x, nil
	}
	to := other.Type()
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
		if !to.IsNumeric() && to.Kind != types.Date && to.Kind != types.Timestamp && to.Kind != types.Bool {
			return x, nil
		}
	case "+", "-", "*", "/", "%":
		if to.Kind == types.Interval && (op == "+" || op == "-") {
			to = types.TTimestamp // '2024-03-01 10:00' + INTERVAL '1' HOUR
		} else if !to.IsNumeric() {
			return x, nil
		}
	default:
		return x, nil
	}
	castTo := func(t types.T) (any, error) {
		cast, err := exec.NewCast(c, t, false)
		if err != nil {
			return nil, err
		}
		return exec.EvalConst(cast)
	}
	if to.IsNumeric() {
		nt := numericText(c.V.(string))
		if v, err := castTo(nt); err == nil {
			return &exec.Const{V: v, T: nt}, nil
		}
		// Not a number: the error names the type it is compared or computed with.
	}
	v, err := castTo(to)
	if err != nil {
		return nil, b.wrap(n, err)
	}
	return &exec.Const{V: v, T: to}, nil
}

// numericText is the type a number written as text needs, as a literal of the same text
// would have: BIGINT for an integer, DECIMAL with its own digits for a decimal fraction, else
// DOUBLE — so comparing or computing with it loses nothing to the other operand's scale.
func numericText(t string) types.T {
	t = strings.TrimLeft(strings.TrimSpace(t), "+-")
	whole, frac, dot := strings.Cut(t, ".")
	digits := func(s string) bool {
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	switch {
	case !digits(whole) || !digits(frac) || whole+frac == "":
		return types.TDouble
	case !dot && len(whole) <= 18:
		return types.TBigInt
	case len(whole)+len(frac) <= types.MaxDecimalPrecision:
		return types.DecimalOf(max(1, len(whole)+len(frac)), len(frac))
	}
	return types.TDouble
}

func (b *Binder) bindBinary(n *ast.BinaryOperationExpr, s *scope) (exec.Expr, error) {
	l, err := b.bindExpr(n.L, s)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(n.R, s)
	if err != nil {
		return nil, err
	}
	if n.Op == opcode.NullEQ {
		// a <=> b: equal, or both NULL.
		eq, err := exec.NewBinary("=", l, r)
		if err != nil {
			return nil, b.wrap(n, err)
		}
		eqTrue, _ := exec.NewIsBool(eq, true, false)
		both, _ := exec.NewBinary("AND", exec.NewIsNull(l, false), exec.NewIsNull(r, false))
		out, err := exec.NewBinary("OR", eqTrue, both)
		return out, b.wrap(n, err)
	}
	op, ok := binaryOps[n.Op]
	if !ok {
		return nil, b.errAt(n, "operator %s is not supported", n.Op)
	}
	if l, err = b.coerceText(op, l, r, n.L); err != nil {
		return nil, err
	}
	if r, err = b.coerceText(op, r, l, n.R); err != nil {
		return nil, err
	}
	out, err := b.builtAt(n).expr(exec.NewBinary(op, l, r))
	if err != nil {
		return nil, err
	}
	return fold(out, l, r), nil
}

// fold evaluates an expression whose operands are all constants (constant folding, bottom
// up as the binder builds the tree). An expression that fails to evaluate is left for run
// time, so its error surfaces only if a row reaches it.
func fold(e exec.Expr, operands ...exec.Expr) exec.Expr {
	for _, o := range operands {
		if _, ok := o.(*exec.Const); !ok {
			return e
		}
	}
	v, err := exec.EvalConst(e)
	if err != nil {
		return e
	}
	return &exec.Const{V: v, T: e.Type()}
}

func (b *Binder) bindIn(n *ast.PatternInExpr, s *scope) (exec.Expr, error) {
	x, err := b.bindExpr(n.Expr, s)
	if err != nil {
		return nil, err
	}
	var list []exec.Expr
	if n.Sel != nil {
		sub, ok := n.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, b.errAt(n, "unsupported IN operand")
		}
		node, c, err := b.bindSubquery(sub, s)
		if err != nil {
			return nil, err
		}
		cols := node.Schema()
		if len(cols) != 1 {
			return nil, b.errAt(n, "subquery in IN must return one column, it returns %d", len(cols))
		}
		if len(c.cols) > 0 {
			// Compared as = compares them, which refuses types that do not compare.
			if _, err := exec.NewBinary("=", x, &exec.Const{T: cols[0].T}); err != nil {
				return nil, b.wrap(n, err)
			}
			return b.correlated(subIn, node, c, x, n.Not), nil
		}
		rows, err := b.Run(node)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			list = append(list, &exec.Const{V: r[0], T: cols[0].T})
		}
		if len(list) == 0 {
			// x IN (empty) is FALSE, x NOT IN (empty) is TRUE, even for NULL x.
			return &exec.Const{V: n.Not, T: types.TBool}, nil
		}
	} else {
		for _, item := range n.List {
			e, err := b.bindExpr(item, s)
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
		// As x = '1': x IN ('1') compares as x's type, '1' IN (a, 2) as the first typed item's.
		for _, e := range list {
			if c, ok := e.(*exec.Const); !ok || c.T.Kind != types.Varchar {
				if x, err = b.coerceText("=", x, e, n.Expr); err != nil {
					return nil, err
				}
				break
			}
		}
		for i, e := range list {
			if list[i], err = b.coerceText("=", e, x, n.List[i]); err != nil {
				return nil, err
			}
		}
	}
	r, err := exec.NewIn(x, list, n.Not)
	return r, b.wrap(n, err)
}

func (b *Binder) bindScalarSubquery(n *ast.SubqueryExpr, s *scope) (exec.Expr, error) {
	if alias, ok := b.scalars[n]; ok { // a streaming query's: a column of a joined table
		return b.bindExpr(column(alias, alias+"_0"), s)
	}
	node, c, err := b.bindSubquery(n, s)
	if err != nil {
		return nil, err
	}
	cols := node.Schema()
	if len(cols) != 1 {
		return nil, b.errAt(n, "scalar subquery must return one column, it returns %d", len(cols))
	}
	if len(c.cols) > 0 {
		x := b.correlated(subScalar, node, c, nil, false).(*correlatedExpr)
		x.at = b.execPos(n)
		return x, nil
	}
	rows, err := b.Run(node)
	if err != nil {
		return nil, err
	}
	if len(rows) > 1 {
		return nil, b.errAt(n, "scalar subquery returned %d rows; expected at most one", len(rows))
	}
	if len(rows) == 0 {
		return &exec.Const{T: cols[0].T}, nil
	}
	return &exec.Const{V: rows[0][0], T: cols[0].T}, nil
}

func (b *Binder) bindFunc(n *ast.FuncCallExpr, s *scope) (exec.Expr, error) {
	if ms, ok := sql.IntervalMillis(n); ok {
		return &exec.Const{V: ms, T: types.TInterval}, nil
	}
	if arg, typ, try, ok := sql.CastOf(n); ok {
		x, err := b.bindExpr(arg, s)
		if err != nil {
			return nil, err
		}
		t, err := ParseType(typ)
		if err != nil {
			return nil, b.errAt(n, "%s", err)
		}
		r, err := b.builtAt(n).expr(exec.NewCast(x, t, try))
		if err != nil {
			return nil, err
		}
		return fold(r, x), nil
	}
	if arg, unit, ceil, ok := sql.FloorToOf(n); ok {
		x, err := b.bindExpr(arg, s)
		if err != nil {
			return nil, err
		}
		r, err := b.builtAt(n).expr(exec.NewFloorTo(x, unit, ceil))
		if err != nil {
			return nil, err
		}
		return fold(r, x), nil
	}
	name := n.FnName.L
	switch name {
	case ast.DateLiteral, ast.TimestampLiteral:
		v, ok := n.Args[0].(*test_driver.ValueExpr)
		str, isStr := v.GetValue().(string)
		if !ok || !isStr {
			return nil, b.errAt(n, "invalid literal")
		}
		if name == ast.DateLiteral {
			d, err := types.ParseDate(str)
			if err != nil {
				return nil, b.errAt(n, "%s", err)
			}
			return &exec.Const{V: d, T: types.TDate}, nil
		}
		ts, err := types.ParseTimestamp(str)
		if err != nil {
			return nil, b.errAt(n, "%s", err)
		}
		return &exec.Const{V: ts, T: types.TTimestamp}, nil
	case "grouping", "grouping_id": // GROUPING_ID: DuckDB's and Flink's name for the bitmask form
		return b.bindGrouping(n, s)
	case "timestampdiff", "timestampadd":
		usage := map[string]string{"timestampdiff": "TIMESTAMPDIFF(unit, from, to)", "timestampadd": "TIMESTAMPADD(unit, n, t)"}[name]
		if len(n.Args) != 3 {
			return nil, b.errAt(n, "%s expects %s", strings.ToUpper(name), usage)
		}
		unit, ok := n.Args[0].(*ast.TimeUnitExpr)
		if !ok {
			return nil, b.errAt(n, "%s expects %s", strings.ToUpper(name), usage)
		}
		args, err := b.bindArgs(n.Args[1:], s)
		if err != nil {
			return nil, err
		}
		return b.builtAt(n).expr(exec.NewFunc(name+"_"+strings.ToLower(unit.Unit.String()), args))
	case "extract":
		unit, ok := n.Args[0].(*ast.TimeUnitExpr)
		if !ok || len(n.Args) != 2 {
			return nil, b.errAt(n, "EXTRACT expects EXTRACT(unit FROM expr)")
		}
		x, err := b.bindExpr(n.Args[1], s)
		if err != nil {
			return nil, err
		}
		r, err := exec.NewFunc("extract_"+strings.ToLower(unit.Unit.String()), []exec.Expr{x})
		return r, b.wrap(n, err)
	case "year", "month", "day", "dayofmonth", "hour", "minute", "second", "quarter", "week", "dayofweek", "dayofyear":
		alias := map[string]string{"dayofmonth": "day", "dayofweek": "dow", "dayofyear": "doy"}
		unit := name
		if a, ok := alias[name]; ok {
			unit = a
		}
		args, err := b.bindArgs(n.Args, s)
		if err != nil {
			return nil, err
		}
		r, err := exec.NewFunc("extract_"+unit, args)
		return r, b.wrap(n, err)
	case "date_add", "adddate", "date_sub", "subdate":
		args, err := b.bindArgs(n.Args, s)
		if err != nil {
			return nil, err
		}
		if len(args) != 2 {
			return nil, b.errAt(n, "%s expects 2 arguments", strings.ToUpper(name))
		}
		op := "+"
		if name == "date_sub" || name == "subdate" {
			op = "-"
		}
		return b.builtAt(n).expr(exec.NewBinary(op, args[0], args[1]))
	case "concat":
		// `a || b` arrives as concat(a, b) spelled in lower case: NULL in, NULL out, as SQL's
		// || demands (CONCAT() itself skips NULLs).
		if n.FnName.O == "concat" && len(n.Args) == 2 {
			args, err := b.bindArgs(n.Args, s)
			if err != nil {
				return nil, err
			}
			r, err := exec.NewBinary("||", args[0], args[1])
			if err != nil {
				return nil, b.wrap(n, err)
			}
			return fold(r, args...), nil
		}
	case "trim":
		if len(n.Args) == 3 {
			if d, ok := n.Args[2].(*ast.TrimDirectionExpr); ok {
				args, err := b.bindArgs(n.Args[:2], s)
				if err != nil {
					return nil, err
				}
				fn := "trim"
				switch d.Direction {
				case ast.TrimLeading:
					fn = "ltrim"
				case ast.TrimTrailing:
					fn = "rtrim"
				}
				r, err := exec.NewFunc(fn, args)
				if err != nil {
					return nil, b.wrap(n, err)
				}
				return fold(r, args...), nil
			}
		}
	case "now", "current_timestamp", "localtimestamp", "proctime", "rand", "uuid", "current_date", "curdate",
		"current_time", "curtime", "localtime", "sysdate", "utc_timestamp", "utc_date", "utc_time", "current_row_timestamp":
		return nil, b.errAt(n, "%s() is not supported: results must not depend on the wall clock or chance", strings.ToUpper(name))
	case "unix_timestamp":
		if len(n.Args) == 0 {
			return nil, b.errAt(n, "UNIX_TIMESTAMP() is not supported: results must not depend on the wall clock or chance")
		}
	}
	args, err := b.bindArgs(n.Args, s)
	if err != nil {
		return nil, err
	}
	if name == "date_trunc" && len(args) == 2 {
		if c, ok := args[0].(*exec.Const); ok {
			if u, ok := c.V.(string); ok {
				args[0] = &exec.Const{V: strings.ToLower(u), T: types.TVarchar}
			}
		}
	}
	r, err := b.builtAt(n).expr(exec.NewFunc(name, args))
	if err != nil {
		return nil, err
	}
	return fold(r, args...), nil
}

func (b *Binder) bindArgs(args []ast.ExprNode, s *scope) ([]exec.Expr, error) {
	out := make([]exec.Expr, len(args))
	for i, a := range args {
		x, err := b.bindExpr(a, s)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// BindScalar binds an expression over the given columns (no aggregates; a subquery needs
// Run, and the WATERMARK of a table refuses one before binding).
func (b *Binder) BindScalar(e ast.ExprNode, cols []Col) (exec.Expr, error) {
	return b.bindExpr(e, &scope{cols: cols})
}

var quantOps = map[opcode.Op]string{opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">="}

// bindCompareSubquery binds `x op ALL|ANY|SOME (subquery)`.
func (b *Binder) bindCompareSubquery(n *ast.CompareSubqueryExpr, s *scope) (exec.Expr, error) {
	op, ok := quantOps[n.Op]
	if !ok {
		return nil, b.errAt(n, "operator %s is not supported with ALL/ANY", n.Op)
	}
	sub, ok := n.R.(*ast.SubqueryExpr)
	if !ok {
		return nil, b.errAt(n, "ALL/ANY needs a subquery")
	}
	left, err := b.bindExpr(n.L, s)
	if err != nil {
		return nil, err
	}
	node, c, err := b.bindSubquery(sub, s)
	if err != nil {
		return nil, err
	}
	if len(node.Schema()) != 1 {
		return nil, b.errAt(n, "subquery of ALL/ANY must return one column, it returns %d", len(node.Schema()))
	}
	if _, err := exec.NewBinary(op, left, &exec.Const{T: node.Schema()[0].T}); err != nil {
		return nil, b.wrap(n, err)
	}
	kind := subAny
	if n.All {
		kind = subAll
	}
	x := b.correlated(kind, node, c, left, false).(*correlatedExpr)
	x.op = op
	return x, nil
}

// bindGrouping binds GROUPING(k, ...) after GROUP BY (PostgreSQL, DuckDB, Flink): a bit per
// argument, the first the most significant, set when the row's grouping set leaves that key
// out (its NULL is a subtotal's, not the data's); 0 without grouping sets.
func (b *Binder) bindGrouping(n *ast.FuncCallExpr, s *scope) (exec.Expr, error) {
	as := s.agg
	if as == nil || len(n.Args) == 0 || len(n.Args) > 62 {
		return nil, b.errAt(n, "GROUPING takes GROUP BY columns, after GROUP BY")
	}
	keys := make([]int, len(n.Args))
	for i, a := range n.Args {
		k := -1
		for j, t := range as.keyText {
			if t == restore(a) {
				k = j
			}
		}
		if cn, ok := a.(*ast.ColumnNameExpr); ok && k < 0 {
			if idx, err := as.input.resolve(cn.Name.Table.O, cn.Name.Name.O); err == nil {
				k = slices.Index(as.keyCols, idx)
			}
		}
		if k < 0 {
			return nil, b.errAt(a, "GROUPING takes GROUP BY columns; %s is not one", restore(a))
		}
		keys[i] = k
	}
	bits := func(set []int) int64 {
		var v int64
		for _, k := range keys {
			v <<= 1
			if !slices.Contains(set, k) {
				v |= 1
			}
		}
		return v
	}
	if as.sets == nil {
		return &exec.Const{V: int64(0), T: types.TBigInt}, nil
	}
	var whens, thens []exec.Expr
	for i, set := range as.sets {
		whens = append(whens, &exec.Const{V: int64(i), T: types.TBigInt})
		thens = append(thens, &exec.Const{V: bits(set), T: types.TBigInt})
	}
	r, err := exec.NewCase(&exec.ColRef{Idx: as.setCol, T: types.TBigInt, Name: "grouping_set"}, whens, thens, nil)
	return r, b.wrap(n, err)
}
