package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// parseStmt parses the tokens of one statement (no ';').
func parseStmt(src *source, toks []token) (*Stmt, *Error) {
	st := &Stmt{
		Text: src.text[toks[0].off:toks[len(toks)-1].end],
		Pos:  src.pos(toks[0].off),
		src:  src,
		toks: toks,
	}
	r := newRewriter(src, toks)
	w := r.at
	var err *Error
	switch {
	case w(0).is("CREATE") && w(1).is("MATERIALIZED") && w(2).is("VIEW"):
		err = r.createView(st, true)
	case w(0).is("CREATE") && w(1).is("VIEW"):
		err = r.createView(st, false)
	case w(0).is("EXPLAIN") && w(1).is("CREATE") && w(2).is("MATERIALIZED") && w(3).is("VIEW"):
		st.Explain = true
		err = newRewriter(src, toks[1:]).createView(st, true)
	case w(0).is("CREATE") && w(1).is("SINK"):
		err = r.createSink(st)
	case w(0).is("CREATE") && (w(1).is("TABLE") || w(1).is("TEMPORARY") && w(2).is("TABLE")):
		err = r.createTable(st)
	case w(0).is("DROP") && w(1).is("MATERIALIZED") && w(2).is("VIEW"):
		st.Kind, st.Materialized = KindDropView, true
		st.IfExists, st.Names, err = r.dropList(3, "view", "DROP MATERIALIZED VIEW")
		if err == nil {
			st.Name = st.Names[0]
		}
	case w(0).is("DROP") && w(1).is("SINK"):
		st.Kind = KindDropSink
		st.IfExists, st.Name, err = r.dropNamed(2, "sink", "DROP SINK")
	case w(0).is("SUBSCRIBE"):
		err = r.subscribe(st)
	case w(0).is("FLUSH"):
		st.Kind, err = KindFlush, r.end(1, "FLUSH")
	case w(0).is("CHECKPOINT"):
		st.Kind, err = KindCheckpoint, r.end(1, "CHECKPOINT")
	case w(0).is("BACKUP"):
		st.Kind = KindBackup
		if !w(1).is("TO") || w(2).kind != tkString || len(toks) < 3 {
			return nil, r.errAt(1, "expected BACKUP TO 'directory'")
		}
		st.Path, err = w(2).val, r.end(3, "BACKUP TO '"+w(2).val+"'")
	case w(0).is("SET"):
		err = r.set(st)
	case w(0).is("SHOW") && w(1).is("VIEWS"):
		st.Kind, err = KindShowViews, r.end(2, "SHOW VIEWS")
	case w(0).is("SHOW") && w(1).is("MATERIALIZED") && w(2).is("VIEWS"):
		st.Kind, st.Materialized, err = KindShowViews, true, r.end(3, "SHOW MATERIALIZED VIEWS")
	case w(0).is("SHOW") && w(1).is("SINKS"):
		st.Kind, err = KindShowSinks, r.end(2, "SHOW SINKS")
	case w(0).is("SHOW") && w(1).is("CREATE"):
		err = r.showCreate(st)
	case fastInsert(st, toks):
	case w(0).is("VALUES") && w(1).op("("):
		st.Kind = KindTiDB
		r.reset()
		if err = r.query(0, len(toks)); err == nil {
			err = r.finish(st, 0, len(toks))
		}
	default:
		st.Kind = KindTiDB
		err = r.tidbRange(st, 0, len(toks))
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// tidbRange rewrites tokens [i, j) and parses the carrier with TiDB into st.Node.
func (r *rewriter) tidbRange(st *Stmt, i, j int) *Error {
	r.reset()
	if err := r.rewriteRange(i, j); err != nil {
		return err
	}
	return r.finish(st, i, j)
}

// finish parses the carrier built for tokens [i, j) into st.Node.
func (r *rewriter) finish(st *Stmt, i, j int) *Error {
	text, m := r.carrier(r.offOf(i), r.toks[j-1].end)
	node, err := tidbParse(r.src.text, text, m)
	if err != nil {
		return err
	}
	st.Node, st.cmap, st.Windows, st.ColumnLists = node, m, r.windows, r.colList
	return nil
}

// end reports an error if there are tokens from i on.
func (r *rewriter) end(i int, after string) *Error {
	if i < len(r.toks) {
		return r.errAt(i, "unexpected %s after %s", r.toks[i].raw, after)
	}
	return nil
}

// name reads a (bare or backquoted) name at i.
func (r *rewriter) name(i int, what, after string) (string, *Error) {
	t := r.at(i)
	if i >= len(r.toks) || !t.isName() || r.at(i+1).op(".") {
		return "", r.errAt(i, "expected %s name after %s", what, after)
	}
	if err := r.checkName(i); err != nil {
		return "", err
	}
	return t.val, nil
}

// ifExists consumes `IF EXISTS` (not: false) or `IF NOT EXISTS` (not: true) at i.
func (r *rewriter) ifExists(i int, not bool) (bool, int) {
	if !r.at(i).is("IF") {
		return false, i
	}
	if not && r.at(i+1).is("NOT") && r.at(i+2).is("EXISTS") {
		return true, i + 3
	}
	if !not && r.at(i+1).is("EXISTS") {
		return true, i + 2
	}
	return false, i
}

func (r *rewriter) dropNamed(i int, what, stmt string) (bool, string, *Error) {
	ifx, i := r.ifExists(i, false)
	name, err := r.name(i, what, stmt)
	if err != nil {
		return false, "", err
	}
	return ifx, name, r.end(i+1, name)
}

// dropList reads DROP ... [IF EXISTS] name[, name ...] from i: whether IF EXISTS was given,
// and the names.
func (r *rewriter) dropList(i int, what, stmt string) (bool, []string, *Error) {
	ifx, i := r.ifExists(i, false)
	var names []string
	for {
		name, err := r.name(i, what, stmt)
		if err != nil {
			return false, nil, err
		}
		names = append(names, name)
		if !r.at(i + 1).op(",") {
			return ifx, names, r.end(i+1, name)
		}
		i += 2
	}
}

// options parses `( k = v, ... )` at i (the '(') and returns the index after ')'.
func (r *rewriter) options(i int) ([]Option, int, *Error) {
	if !r.at(i).op("(") {
		return nil, 0, r.errAt(i, "expected ( after WITH")
	}
	var opts []Option
	k := i + 1
	if r.at(k).op(")") {
		return nil, k + 1, nil
	}
	for {
		key, kpos, nk, err := r.optionKey(k)
		if err != nil {
			return nil, 0, err
		}
		k = nk
		if !r.at(k).op("=") {
			return nil, 0, r.errAt(k, "expected = after option %s", key)
		}
		val, nk, err := r.optionValue(k+1, key)
		if err != nil {
			return nil, 0, err
		}
		k = nk
		for _, o := range opts {
			if o.Key == key {
				return nil, 0, errAtOff(r.src.text, kpos, "duplicate option %s", key)
			}
		}
		opts = append(opts, Option{Key: key, Value: val, Pos: r.src.pos(kpos)})
		if r.at(k).op(")") {
			return opts, k + 1, nil
		}
		if !r.at(k).op(",") {
			return nil, 0, r.errAt(k, "expected , or ) after option %s", key)
		}
		k++
	}
}

// optionKey reads 'a.b' or a.b (dotted names) at i, lowercased.
func (r *rewriter) optionKey(i int) (string, int, int, *Error) {
	t := r.at(i)
	if i < len(r.toks) && t.kind == tkString {
		return strings.ToLower(t.val), t.off, i + 1, nil
	}
	if i >= len(r.toks) || !t.isName() {
		return "", 0, 0, r.errAt(i, "expected an option name")
	}
	parts := []string{t.val}
	k := i + 1
	for r.at(k).op(".") && r.at(k+1).isName() {
		parts = append(parts, r.toks[k+1].val)
		k += 2
	}
	return strings.ToLower(strings.Join(parts, ".")), t.off, k, nil
}

// optionValue reads a string, a (signed) number, a number with a unit
// written next to it (5s) or a bare (dotted) word at i.
func (r *rewriter) optionValue(i int, key string) (string, int, *Error) {
	t := r.at(i)
	if i >= len(r.toks) {
		return "", 0, r.errAt(i, "expected a value for option %s", key)
	}
	switch {
	case t.kind == tkString:
		return t.val, i + 1, nil
	case t.kind == tkNumber:
		if u := r.at(i + 1); u.kind == tkIdent && u.off == t.end && i+1 < len(r.toks) {
			return t.raw + u.raw, i + 2, nil // a duration such as 5s or 100ms
		}
		return t.raw, i + 1, nil
	case (t.op("-") || t.op("+")) && r.at(i+1).kind == tkNumber && i+1 < len(r.toks):
		return strings.TrimPrefix(t.raw, "+") + r.toks[i+1].raw, i + 2, nil
	case t.isName():
		parts := []string{t.val}
		k := i + 1
		for r.at(k).op(".") && r.at(k+1).isName() {
			parts = append(parts, r.toks[k+1].val)
			k += 2
		}
		return strings.Join(parts, "."), k, nil
	}
	return "", 0, r.errAt(i, "expected a value for option %s", key)
}

// emitClause reports whether the tokens from i are a view's trailing EMIT clause, right or
// wrong: EMIT, then one to three bare words to the end, starting as an EMIT clause does (ON
// UPDATE, ON WINDOW, or ksqlDB's CHANGES, FINAL, AFTER). Elsewhere emit is a name (SELECT
// emit FROM t, a join's alias emit ON TRUE, ORDER BY emit DESC).
func (r *rewriter) emitClause(i int) bool {
	rest := r.toks[i+1:]
	if !r.at(i).is("EMIT") || len(rest) == 0 || len(rest) > 3 {
		return false
	}
	for _, t := range rest {
		if t.kind != tkIdent {
			return false
		}
	}
	first := rest[0]
	return first.is("CHANGES") || first.is("FINAL") || first.is("AFTER") ||
		first.is("ON") && len(rest) > 1 && (rest[1].is("UPDATE") || rest[1].is("WINDOW"))
}

// createView: CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [WITH (...)] AS query [EMIT ...],
// or, not materialized, CREATE VIEW [IF NOT EXISTS] v AS query: a name for the query, which
// takes neither options nor an EMIT clause (it stores nothing and emits nothing).
func (r *rewriter) createView(st *Stmt, materialized bool) *Error {
	st.Kind, st.Materialized = KindCreateView, materialized
	stmt, k := "CREATE MATERIALIZED VIEW", 3
	if !materialized {
		stmt, k = "CREATE VIEW", 2
	}
	st.IfNotExists, k = r.ifExists(k, true)
	var err *Error
	if st.Name, err = r.name(k, "view", stmt); err != nil {
		return err
	}
	var columns []string // CREATE VIEW v (a, b) AS: the query's columns renamed
	if r.at(k + 1).op("(") {
		if columns, k, err = r.columnList(k); err != nil {
			return err
		}
	} else {
		k++
	}
	if r.at(k).is("WITH") && k < len(r.toks) {
		if !materialized {
			return r.errAt(k, "CREATE VIEW takes no WITH options: a view stores nothing (options belong to CREATE MATERIALIZED VIEW)")
		}
		if st.Options, k, err = r.options(k + 1); err != nil {
			return err
		}
	}
	if !r.at(k).is("AS") || k >= len(r.toks) {
		return r.errAt(k, "expected AS after %s %s", stmt, st.Name)
	}
	q := k + 1
	e := len(r.toks)
	depth := 0
	for i := q; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.op("(") {
			depth++
		} else if t.op(")") {
			depth--
		} else if depth == 0 && r.emitClause(i) {
			e = i // the last one: an earlier emit is a name (FROM b emit EMIT ON UPDATE)
		}
	}
	if e < len(r.toks) {
		switch {
		case !materialized:
			return r.errAt(e, "a view takes no EMIT clause: it emits nothing (EMIT belongs to CREATE MATERIALIZED VIEW)")
		case r.at(e+1).is("ON") && r.at(e+2).is("WINDOW") && r.at(e+3).is("CLOSE") && e+4 == len(r.toks):
			st.EmitOnClose = true
		case r.at(e+1).is("ON") && r.at(e+2).is("UPDATE") && e+3 == len(r.toks):
		default:
			return r.errAt(e, "unsupported EMIT clause; expected EMIT ON WINDOW CLOSE or EMIT ON UPDATE at the end of the view")
		}
	}
	if q >= e {
		return r.errAt(q, "expected a query after AS")
	}
	if !r.at(q).is("SELECT") && !r.at(q).is("WITH") && !r.at(q).op("(") && !r.at(q).is("VALUES") {
		return r.errAt(q, "expected a SELECT query after AS")
	}
	r.reset()
	if columns != nil {
		// The query as a derived table with the column list, as FROM (query) t(a, b) is.
		r.syn("SELECT * FROM (", r.toks[q].off)
	}
	if err := r.query(q, e); err != nil {
		return err
	}
	if columns != nil {
		r.syn(") `"+ViewColumns+"`", r.toks[e-1].end)
		if r.colList == nil {
			r.colList = map[string][]string{}
		}
		r.colList[ViewColumns] = columns
	}
	if err := r.finish(st, q, e); err != nil {
		return err
	}
	switch st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return nil
	}
	return r.errAt(q, "expected a SELECT query after AS")
}

// query emits the query of tokens [i, j): as it is, or for VALUES rows (a VALUES
// statement, a view's query) SELECT * FROM (VALUES ...) [ORDER BY ...].
func (r *rewriter) query(i, j int) *Error {
	if !r.at(i).is("VALUES") || !r.at(i+1).op("(") {
		return r.rewriteRange(i, j)
	}
	k, err := r.valuesQuery(i, j, "__sx_values")
	if err != nil {
		return err
	}
	return r.rewriteRange(k, j)
}

// valuesQuery emits the rows of VALUES at i (within [i, j)) as the query SELECT * FROM
// (VALUES ...) AS alias, and returns the index after the rows.
func (r *rewriter) valuesQuery(i, j int, alias string) (int, *Error) {
	r.syn("SELECT * FROM (", r.toks[i].off)
	k, err := r.valuesRows(i, j, nil)
	if err != nil {
		return 0, err
	}
	r.syn(") AS `"+alias+"`", r.offOf(k))
	return k, nil
}

// ViewColumns is the derived table that gives a view's query its column list (CREATE VIEW
// v (a, b) AS query is SELECT * FROM (query) __sx_view_columns(a, b)).
const ViewColumns = "__sx_view_columns"

// showCreate: SHOW CREATE {TABLE | VIEW | MATERIALIZED VIEW | SINK} name.
func (r *rewriter) showCreate(st *Stmt) *Error {
	st.Kind = KindShowCreate
	k := 2
	switch {
	case r.at(k).is("TABLE"), r.at(k).is("VIEW"), r.at(k).is("SINK"):
		st.From = strings.ToUpper(r.toks[k].raw)
		k++
	case r.at(k).is("MATERIALIZED") && r.at(k+1).is("VIEW"):
		st.From = "MATERIALIZED VIEW"
		k += 2
	default:
		return r.errAt(k, "expected SHOW CREATE TABLE, VIEW, MATERIALIZED VIEW or SINK")
	}
	var err *Error
	if st.Name, err = r.name(k, strings.ToLower(st.From), "SHOW CREATE "+st.From); err != nil {
		return err
	}
	return r.end(k+1, "SHOW CREATE "+st.From+" "+st.Name)
}

// createSink: CREATE SINK [IF NOT EXISTS] name FROM source [WITH (...)].
func (r *rewriter) createSink(st *Stmt) *Error {
	st.Kind = KindCreateSink
	var k int
	st.IfNotExists, k = r.ifExists(2, true)
	var err *Error
	if st.Name, err = r.name(k, "sink", "CREATE SINK"); err != nil {
		return err
	}
	if !r.at(k + 1).is("FROM") {
		return r.errAt(k+1, "expected FROM after CREATE SINK %s", st.Name)
	}
	if st.From, err = r.name(k+2, "view or table", "FROM"); err != nil {
		return err
	}
	k += 3
	if r.at(k).is("WITH") {
		if st.Options, k, err = r.options(k + 1); err != nil {
			return err
		}
	}
	return r.end(k, "CREATE SINK "+st.Name)
}

// subscribe: SUBSCRIBE [TO] name [WITH (...)].
func (r *rewriter) subscribe(st *Stmt) *Error {
	st.Kind = KindSubscribe
	k, after := 1, "SUBSCRIBE"
	if r.at(1).is("TO") && (len(r.toks) == 2 || r.at(2).isName() && 2 < len(r.toks)) {
		k, after = 2, "SUBSCRIBE TO"
	}
	var err *Error
	if st.Name, err = r.name(k, "view", after); err != nil {
		return err
	}
	k++
	if r.at(k).is("WITH") {
		if st.Options, k, err = r.options(k + 1); err != nil {
			return err
		}
	}
	return r.end(k, "SUBSCRIBE "+st.Name)
}

// set: SET 'k' = 'v' | SET k = v | SET k TO v.
func (r *rewriter) set(st *Stmt) *Error {
	st.Kind = KindSet
	key, kpos, k, err := r.optionKey(1)
	if err != nil {
		return r.errAt(1, "expected SET name = value")
	}
	if !r.at(k).op("=") && !r.at(k).is("TO") || k >= len(r.toks) {
		return r.errAt(k, "expected = or TO after SET %s", key)
	}
	val, k, err := r.optionValue(k+1, key)
	if err != nil {
		return err
	}
	st.Options = []Option{{Key: key, Value: val, Pos: r.src.pos(kpos)}}
	return r.end(k, "SET "+key)
}

// constraintWords start a table element that is not a column definition (KEY and INDEX name
// columns: MySQL's index definitions are not part of the dialect).
var constraintWords = wordSet("PRIMARY UNIQUE CONSTRAINT CHECK FOREIGN FULLTEXT SPATIAL")

// createTable: CREATE TABLE with WATERMARK FOR, NOT ENFORCED, VARCHAR/STRING
// and WITH (...) taken out; the rest goes to TiDB.
func (r *rewriter) createTable(st *Stmt) *Error {
	st.Kind = KindCreateTable
	k := 2
	if r.at(1).is("TEMPORARY") {
		k = 3
	}
	_, k = r.ifExists(k, true)
	open := k + 1
	if r.at(k + 1).op(".") {
		open = k + 3
	}
	closeP := -1
	if r.at(open).op("(") && open < len(r.toks) {
		closeP = r.matchParen(open)
	}
	if closeP < 0 { // CREATE TABLE ... LIKE / AS / malformed: TiDB decides
		if err := r.tidbRange(st, 0, len(r.toks)); err != nil {
			return err
		}
	} else {
		if err := r.rewriteRange(0, open+1); err != nil {
			return err
		}
		kept := 0
		for a := open + 1; a < closeP; {
			b, depth := a, 0
			for ; b < closeP; b++ {
				if t := r.toks[b]; t.op("(") {
					depth++
				} else if t.op(")") {
					depth--
				} else if depth == 0 && t.op(",") {
					break
				}
			}
			if a == b {
				return r.errAt(a, "expected a column definition")
			}
			if r.toks[a].is("WATERMARK") && r.at(a+1).is("FOR") {
				if err := r.watermark(st, a, b); err != nil {
					return err
				}
			} else {
				if kept > 0 {
					r.tok(r.toks[a-1]) // the ',' before this element
				}
				kept++
				if err := r.tableElement(a, b); err != nil {
					return err
				}
			}
			a = b + 1
		}
		r.tok(r.toks[closeP])
		k = closeP + 1
		if r.at(k).is("WITH") && r.at(k+1).op("(") {
			var err *Error
			if st.Options, k, err = r.options(k + 1); err != nil {
				return err
			}
		}
		if err := r.rewriteRange(k, len(r.toks)); err != nil {
			return err
		}
		if err := r.finish(st, 0, len(r.toks)); err != nil {
			return err
		}
	}
	if _, ok := st.Node.(*ast.CreateTableStmt); !ok {
		return r.errAt(0, "expected CREATE TABLE name (columns)")
	}
	return nil
}

// tableElement emits one column or constraint definition [a, b).
func (r *rewriter) tableElement(a, b int) *Error {
	column := !constraintWords[strings.ToUpper(r.toks[a].raw)] || r.toks[a].kind != tkIdent
	seg := a
	for k := a; k < b; k++ {
		t := r.toks[k]
		switch {
		case column && k == a+1 && (t.is("STRING") || t.is("VARCHAR") && !r.at(k+1).op("(")):
		case t.is("NOT") && r.at(k+1).is("ENFORCED") && k+1 < b:
		default:
			continue
		}
		if err := r.rewriteRange(seg, k); err != nil {
			return err
		}
		if t.is("NOT") {
			k++ // drop NOT ENFORCED
		} else {
			r.syn("TEXT", t.off)
		}
		seg = k + 1
	}
	return r.rewriteRange(seg, b)
}

// watermark parses `WATERMARK FOR col AS expr` [a, b) into st.Watermark.
func (r *rewriter) watermark(st *Stmt, a, b int) *Error {
	if st.Watermark != nil {
		return r.errAt(a, "a table can have only one WATERMARK")
	}
	col, err := r.name(a+2, "column", "WATERMARK FOR")
	if err != nil || a+2 >= b {
		return r.errAt(a+2, "expected WATERMARK FOR column AS expression")
	}
	if !r.at(a+3).is("AS") || a+3 >= b {
		return r.errAt(a+3, "expected AS after WATERMARK FOR %s", col)
	}
	if a+4 >= b {
		return r.errAt(a+4, "expected an expression after WATERMARK FOR %s AS", col)
	}
	wr := newRewriter(r.src, r.toks)
	wr.syn("SELECT (", r.toks[a+4].off)
	if err := wr.rewriteRange(a+4, b); err != nil {
		return err
	}
	wr.syn(")", r.toks[b-1].end)
	text, m := wr.carrier(r.toks[a+4].off, r.toks[b-1].end)
	m.what = "watermark expression"
	node, err := tidbParse(r.src.text, text, m)
	if err != nil {
		return err
	}
	sel, ok := node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil || sel.Where != nil {
		return r.errAt(a+4, "expected an expression after WATERMARK FOR %s AS", col)
	}
	e := sel.Fields.Fields[0].Expr
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		e = p.Expr
	}
	if _, ok := e.(*ast.RowExpr); ok {
		return r.errAt(a+4, "expected one expression after WATERMARK FOR %s AS", col)
	}
	es := &Stmt{Text: strings.TrimSpace(r.src.text[r.toks[a+4].off:r.toks[b-1].end]), Node: node, Pos: r.src.pos(r.toks[a+4].off),
		src: r.src, toks: r.toks[a+4 : b], cmap: m}
	st.Watermark = &Watermark{Column: col, Expr: e, Pos: r.src.pos(r.toks[a].off), Stmt: es}
	return nil
}
