package sql

import (
	"sort"
	"strconv"
	"strings"
)

// seg maps carrier text [c, c+n) to user text [u, u+n). n == 0 marks
// synthetic carrier text, all of which maps to u (the user token it stands for).
type seg struct{ c, u, n int }

// posMap maps carrier offsets back to offsets in the user's text.
type posMap struct {
	segs      []seg
	userStart int    // user offset of the statement (or sub-part) start
	userEnd   int    // user offset just after its last token
	clen      int    // carrier length
	what      string // what the carrier is, for "unexpected end of <what>"
}

func (m *posMap) user(c int) int {
	if c >= m.clen {
		return m.userEnd
	}
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].c > c }) - 1
	if i < 0 {
		return m.userStart
	}
	s := m.segs[i]
	switch {
	case s.n == 0:
		return s.u
	case c-s.c < s.n:
		return s.u + c - s.c
	default:
		return s.u + s.n
	}
}

// userAfter returns the user offset of the first carrier segment starting at
// or after c (userEnd if none): the end of the user text that carrier text
// ending at c stands for, even when that text was rewritten into synthetic
// carrier text.
func (m *posMap) userAfter(c int) int {
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].c >= c })
	if i == len(m.segs) {
		return m.userEnd
	}
	return m.segs[i].u
}

// rewriter is the front pass over one statement's tokens: it emits the
// carrier text TiDB parses and records the position map and side tables.
type rewriter struct {
	src     *source
	toks    []token
	b       []byte
	segs    []seg
	last    int // user end offset of the last verbatim token, -1 after synthetic text
	windows map[string]*WindowTVF
	colList map[string][]string // derived table alias (lower case) -> its column list
	drop    map[int]int         // token index -> index after: tokens not emitted (column lists, NULLS FIRST/LAST)
	wraps   *wraps              // rewrites around later tokens, found on first use
	match   []int               // matchParen's table, built on first use
}

func newRewriter(src *source, toks []token) *rewriter {
	return &rewriter{src: src, toks: toks, last: -1}
}

// reset starts a new carrier text (for a sub-part such as a watermark or a view's query).
func (r *rewriter) reset() { r.b, r.segs, r.last = r.b[:0], nil, -1 }

// notAlias are the words that can follow a derived table's ')' without being its alias.
var notAlias = map[string]bool{
	"ON": true, "USING": true, "WHERE": true, "GROUP": true, "ORDER": true, "HAVING": true,
	"LIMIT": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true,
	"CROSS": true, "NATURAL": true, "UNION": true, "EXCEPT": true, "INTERSECT": true,
	"WINDOW": true, "AND": true, "OR": true, "XOR": true, "NOT": true, "IN": true, "IS": true,
	"FOR": true, "EMIT": true, "STRAIGHT_JOIN": true,
}

// columnList reads the column list `(a, b, ...)` after the alias at i and returns the names
// and the index after the list.
func (r *rewriter) columnList(i int) ([]string, int, *Error) {
	end := r.matchParen(i + 1)
	if end < 0 {
		return nil, 0, r.errAt(i+1, "missing ) after the column list of %s", r.toks[i].val)
	}
	if end == i+2 {
		return nil, 0, r.errAt(end, "expected a column name in the column list of %s", r.toks[i].val)
	}
	var names []string
	for c := i + 2; c < end; c += 2 {
		if !r.at(c).isName() || !(r.at(c+1).op(",") && c+2 < end || c+1 == end) {
			return nil, 0, r.errAt(c, "expected a column name in the column list of %s", r.toks[i].val)
		}
		names = append(names, r.toks[c].val)
	}
	return names, end + 1, nil
}

// wraps are the constructs TiDB does not parse that the front pass rewrites around tokens
// met later, found by one scan of the statement on first use:
//   - an ORDER BY item `e [ASC|DESC] NULLS LAST` is emitted as `__sx_nulls_last(e) [ASC|DESC]`
//     (see NullsOrder), likewise NULLS FIRST;
//   - an aggregate `agg([DISTINCT] x) FILTER (WHERE c)` as `agg([DISTINCT] CASE WHEN (c) THEN
//     x END)`, and `count(*) FILTER (WHERE c)` as `count(CASE WHEN (c) THEN 1 END)`;
//   - a PostgreSQL cast `x::T` as `__sx_cast(x, 'T')` (see CastOf), x being the primary just
//     before it (a name, literal, call, parenthesized expression or cast);
//   - `a IS NOT DISTINCT FROM b` as `a <=> b`, and `a IS DISTINCT FROM b` as `a <=> b = FALSE`
//     (comparisons associate left), b being a primary.
//
// Their trailing tokens (NULLS ..., FILTER (...), ::T) are marked in r.drop. A wrap found
// later encloses the earlier ones at the same token, so openers are prepended.
type wraps struct {
	open  map[int]string // token index -> carrier text emitted before it
	close map[int]string // token index -> carrier text emitted before it, ahead of open and drop
	cond  map[int][2]int // token index of a FILTERed aggregate's argument -> its condition's tokens
	// distinct: token index of IS in IS [NOT] DISTINCT FROM -> the right operand's tokens and
	// whether NOT was written.
	distinct map[int]distinctFrom
}

type distinctFrom struct {
	from, to int
	not      bool
}

// findWraps builds r.wraps.
func (r *rewriter) findWraps() *wraps {
	if r.wraps != nil {
		return r.wraps
	}
	w := &wraps{open: map[int]string{}, close: map[int]string{}, cond: map[int][2]int{}, distinct: map[int]distinctFrom{}}
	r.wraps = w
	if r.drop == nil {
		r.drop = map[int]int{}
	}
	castStart := map[int]int{} // last token of a ::T -> the first token of its cast
	for k, t := range r.toks {
		switch {
		case t.op("::"):
			r.wrapCast(w, k, castStart)
		case t.is("IS") && r.at(k+1).is("DISTINCT") && r.at(k+2).is("FROM"):
			w.distinct[k] = distinctFrom{from: k + 3, to: r.primaryEnd(k + 3)}
		case t.is("IS") && r.at(k+1).is("NOT") && r.at(k+2).is("DISTINCT") && r.at(k+3).is("FROM"):
			w.distinct[k] = distinctFrom{from: k + 4, to: r.primaryEnd(k + 4), not: true}
		case t.is("NULLS") && (r.at(k+1).is("FIRST") || r.at(k+1).is("LAST")):
			r.wrapNulls(w, k)
		case t.is("FILTER") && r.at(k-1).op(")") && r.at(k+1).op("(") && r.at(k+2).is("WHERE"):
			r.wrapFilter(w, k)
		}
	}
	return w
}

// isName reports whether the word at k (up, upper case) is used as a name although TiDB
// reserves it: LAG, LEAD, RANK and ROW_NUMBER-like calls are names unless called; KEY unless
// after PRIMARY, FOREIGN or UNIQUE; PARTITION unless before BY; ROWS and RANGE unless they
// start a window frame; ROW unless after CURRENT or called; VALUES unless before a row;
// INDEX unless after CREATE or UNIQUE; INTERVAL unless before a literal; READ and SQL always;
// GROUPS, like ROWS, unless it starts a window frame.
func (r *rewriter) isName(k int, up string) bool {
	prev, next := r.at(k-1), r.at(k+1)
	switch up {
	case "LAG", "LEAD", "RANK", "DENSE_RANK", "ROW_NUMBER":
		return !next.op("(")
	case "KEY":
		return !prev.is("PRIMARY") && !prev.is("FOREIGN") && !prev.is("UNIQUE")
	case "PARTITION":
		return !next.is("BY")
	case "ROWS", "RANGE", "GROUPS":
		return !next.is("BETWEEN") && !next.is("UNBOUNDED") && !next.is("CURRENT") && !next.is("INTERVAL") && next.kind != tkNumber
	case "ROW":
		return !prev.is("CURRENT") && !next.op("(")
	case "VALUES":
		return !next.op("(")
	case "INDEX":
		return !prev.is("CREATE") && !prev.is("UNIQUE")
	case "INTERVAL":
		_, unit := intervalUnits[strings.TrimSuffix(strings.ToUpper(r.at(k+2).raw), "S")]
		return next.kind != tkString && next.kind != tkNumber && !next.op("(") && !next.op("-") && !next.op("+") && !unit
	case "READ", "SQL":
		return true
	}
	return false
}

// wrapNulls records the ORDER BY item ending in NULLS FIRST/LAST at k.
func (r *rewriter) wrapNulls(w *wraps, k int) {
	end := k
	if p := r.at(k - 1); p.is("ASC") || p.is("DESC") {
		end = k - 1
	}
	// The item starts after the ORDER BY or the ',' before it at its depth.
	j, depth := end-1, 0
	for ; j >= 0; j-- {
		u := r.toks[j]
		if u.op(")") {
			depth++
		} else if u.op("(") {
			if depth == 0 {
				break
			}
			depth--
		} else if depth == 0 && (u.op(",") || u.is("BY")) {
			break
		}
	}
	if j < 0 || j+1 >= end || !(r.toks[j].op(",") || r.toks[j].is("BY") && r.at(j-1).is("ORDER")) {
		return // not an ORDER BY item: TiDB reports the syntax error
	}
	fn := "`__sx_nulls_first`("
	if r.at(k + 1).is("LAST") {
		fn = "`__sx_nulls_last`("
	}
	w.open[j+1] = fn + w.open[j+1]
	w.close[end] += ")"
	r.drop[k] = k + 2
}

// primaryEnd returns the index after the primary expression starting at token i — a
// (qualified) name, a call, a (signed) number or placeholder, a string, a typed literal or a
// parenthesized expression, with any ::T casts — or -1 if there is none or an operator binding tighter
// than a comparison follows it.
func (r *rewriter) primaryEnd(i int) int {
	t := r.at(i)
	if i >= len(r.toks) {
		return -1
	}
	k := -1
	switch {
	case t.op("("):
		if m := r.matchParen(i); m >= 0 {
			k = m + 1
		}
	case (t.op("-") || t.op("+")) && (r.at(i+1).kind == tkNumber || r.at(i+1).kind == tkParam):
		k = i + 2
	case t.kind == tkNumber || t.kind == tkString || t.kind == tkParam:
		k = i + 1
	case (t.is("DATE") || t.is("TIMESTAMP") || t.is("TIME")) && r.at(i+1).kind == tkString:
		k = i + 2
	case t.isName():
		k = i + 1
		for r.at(k).op(".") && r.at(k+1).isName() {
			k += 2
		}
		if p := r.at(k); p.op("(") && r.toks[k-1].end == p.off {
			if m := r.matchParen(k); m >= 0 {
				k = m + 1
			}
		}
	}
	for k >= 0 && r.at(k).op("::") && r.at(k+1).kind == tkIdent {
		k += 2
		if r.at(k).op("(") {
			if m := r.matchParen(k); m >= 0 {
				k = m + 1
			}
		}
	}
	if k < 0 || k > len(r.toks) {
		return -1
	}
	for _, op := range []string{"+", "-", "*", "/", "%", "||", "&", "|", "^", "<<", ">>", ".", "::"} {
		if k < len(r.toks) && r.toks[k].op(op) {
			return -1
		}
	}
	if u := r.at(k); k < len(r.toks) && (u.is("DIV") || u.is("MOD") || u.is("COLLATE")) {
		return -1
	}
	return k
}

// castOperand returns the first token of the primary expression ending at token p: a
// (qualified) name, a literal, a placeholder, a typed literal, a call or a parenthesized
// expression.
func (r *rewriter) castOperand(p int) (int, bool) {
	if p < 0 {
		return 0, false
	}
	switch t := r.toks[p]; {
	case t.op(")"):
		for o := p - 1; o >= 0; o-- {
			if r.matchParen(o) != p {
				continue
			}
			if o > 0 && r.toks[o-1].isName() && r.toks[o-1].end == r.toks[o].off {
				return o - 1, true // a call: name(...)
			}
			return o, true
		}
	case t.isName():
		start := p
		for start >= 2 && r.toks[start-1].op(".") && r.toks[start-2].isName() {
			start -= 2
		}
		return start, true
	case t.kind == tkNumber || t.kind == tkParam:
		return p, true
	case t.kind == tkString:
		if q := r.at(p - 1); p > 0 && (q.is("DATE") || q.is("TIMESTAMP") || q.is("TIME")) {
			return p - 1, true
		}
		return p, true
	}
	return 0, false
}

// wrapCast records the PostgreSQL cast `x::T` whose '::' is at k.
func (r *rewriter) wrapCast(w *wraps, k int, castStart map[int]int) {
	start, ok := castStart[k-1]
	if !ok {
		start, ok = r.castOperand(k - 1)
	}
	// The type: a name, optionally with (precision[, scale]).
	ty := r.at(k + 1)
	if !ok || k+1 >= len(r.toks) || ty.kind != tkIdent {
		return // TiDB reports the syntax error
	}
	typ, end := strings.ToUpper(ty.raw), k+2
	if r.at(end).op("(") {
		m := r.matchParen(end)
		if m < 0 {
			return
		}
		for _, u := range r.toks[end : m+1] {
			if u.kind != tkNumber && !u.op("(") && !u.op(")") && !u.op(",") {
				return
			}
			typ += u.raw
		}
		end = m + 1
	}
	w.open[start] = "`__sx_cast`(" + w.open[start]
	w.close[k] += ", '" + typ + "')"
	r.drop[k] = end
	castStart[end-1] = start
}

// wrapFilter records the one-argument aggregate call followed by FILTER (WHERE ...) at k.
func (r *rewriter) wrapFilter(w *wraps, k int) {
	c := k - 1
	o := -1
	for i := c - 1; i >= 0; i-- {
		if r.matchParen(i) == c {
			o = i
			break
		}
	}
	if o < 1 || !r.toks[o-1].isName() {
		return
	}
	arg := o + 1
	if r.at(arg).is("DISTINCT") {
		arg++
	}
	depth := 0
	for i := arg; i < c; i++ {
		switch u := r.toks[i]; {
		case u.op("("):
			depth++
		case u.op(")"):
			depth--
		case depth == 0 && u.op(","):
			return // several arguments: TiDB reports the syntax error
		}
	}
	end := r.matchParen(k + 1)
	if arg >= c || end < 0 || k+3 >= end {
		return
	}
	w.cond[arg] = [2]int{k + 3, end}
	w.close[c] += " END"
	r.drop[k] = end + 1
}

// derivedColumns handles the '(' at i when it opens a derived table in FROM with a column
// list, `FROM (SELECT ...) [AS] t (a, b)`, which TiDB does not parse: it records the list in
// r.colList under the alias and marks the list's tokens to be dropped (the binder renames).
func (r *rewriter) derivedColumns(i int) *Error {
	if p := r.at(i - 1); i == 0 || !(p.is("FROM") || p.is("JOIN") || p.op(",")) ||
		!(r.at(i+1).is("SELECT") || r.at(i+1).is("WITH")) {
		return nil
	}
	m := r.matchParen(i)
	if m < 0 {
		return nil
	}
	k := m + 1
	explicit := r.at(k).is("AS")
	if explicit {
		k++
	}
	a := r.at(k)
	if !a.isName() || !r.at(k+1).op("(") || !explicit && a.kind == tkIdent && notAlias[strings.ToUpper(a.raw)] {
		return nil
	}
	names, next, err := r.columnList(k)
	if err != nil {
		return err
	}
	key := strings.ToLower(a.val)
	if _, dup := r.colList[key]; dup {
		return r.errAt(k, "two derived tables named %s have column lists", a.val)
	}
	if r.colList == nil {
		r.colList = map[string][]string{}
	}
	if r.drop == nil {
		r.drop = map[int]int{}
	}
	r.colList[key] = names
	r.drop[k+1] = next
	return nil
}

// tok emits a user token verbatim; adjacent user tokens stay adjacent (x'1F').
func (r *rewriter) tok(t token) {
	if len(r.b) > 0 && t.off != r.last {
		r.b = append(r.b, ' ')
	}
	r.segs = append(r.segs, seg{len(r.b), t.off, len(t.raw)})
	r.b = append(r.b, t.raw...)
	r.last = t.end
}

// syn emits synthetic carrier text standing for the user text at uoff.
func (r *rewriter) syn(s string, uoff int) {
	if len(r.b) > 0 {
		r.b = append(r.b, ' ')
	}
	r.segs = append(r.segs, seg{len(r.b), uoff, 0})
	r.b = append(r.b, s...)
	r.last = -1
}

// carrier returns the carrier text and its position map; ustart/uend are the
// user offsets of the part rewritten.
func (r *rewriter) carrier(ustart, uend int) (string, *posMap) {
	segs := append([]seg(nil), r.segs...)
	return string(r.b), &posMap{segs: segs, userStart: ustart, userEnd: uend, clen: len(r.b), what: "statement"}
}

func (r *rewriter) errAt(i int, format string, args ...any) *Error {
	return errAtOff(r.src.text, r.offOf(i), format, args...)
}

// offOf is the user offset of token i (the statement's start before its first token, its
// end past its last).
func (r *rewriter) offOf(i int) int {
	if i >= 0 && i < len(r.toks) {
		return r.toks[i].off
	}
	if i < 0 || len(r.toks) == 0 {
		return 0
	}
	return r.toks[len(r.toks)-1].end
}

// at returns token i, or a zero token past the end.
func (r *rewriter) at(i int) token {
	if i >= 0 && i < len(r.toks) {
		return r.toks[i]
	}
	return token{kind: tkOp, off: r.offOf(i)}
}

// matchParen returns the index of the ')' closing the '(' at i, or -1.
// The table of matches is computed once per statement.
func (r *rewriter) matchParen(i int) int {
	if r.match == nil {
		r.match = make([]int, len(r.toks))
		var stack []int
		for k, t := range r.toks {
			r.match[k] = -1
			switch {
			case t.op("("):
				stack = append(stack, k)
			case t.op(")") && len(stack) > 0:
				r.match[stack[len(stack)-1]] = k
				stack = stack[:len(stack)-1]
			}
		}
	}
	if i < 0 || i >= len(r.toks) {
		return -1
	}
	return r.match[i]
}

// checkName rejects user identifiers using the reserved carrier prefix.
func (r *rewriter) checkName(i int) *Error {
	t := r.toks[i]
	if t.isName() && len(t.val) >= 5 && strings.EqualFold(t.val[:5], "__sx_") {
		return r.errAt(i, "identifier %s uses the reserved prefix __sx_", t.val)
	}
	return nil
}

// dateFuncs are MySQL functions with a special `INTERVAL e unit` grammar; they
// are emitted backquoted so TiDB parses them as generic calls with the carrier.
var dateFuncs = map[string]bool{"DATE_ADD": true, "DATE_SUB": true, "ADDDATE": true, "SUBDATE": true}

// rewriteRange emits tokens [i, j), rewriting every carrier it meets.
func (r *rewriter) rewriteRange(i, j int) *Error {
	w := r.findWraps()
	for k := i; k < j; {
		t := r.toks[k]
		if c := w.close[k]; c != "" {
			r.syn(c, t.off)
		}
		if e, ok := r.drop[k]; ok {
			k = e
			continue
		}
		if fn := w.open[k]; fn != "" {
			r.syn(fn, t.off)
		}
		if d, ok := w.distinct[k]; ok {
			if d.to < 0 || d.to > j {
				return r.errAt(d.from, "IS DISTINCT FROM: put a right operand that is not a single value or column in parentheses")
			}
			r.syn("<=>", t.off)
			if err := r.rewriteRange(d.from, d.to); err != nil {
				return err
			}
			if !d.not {
				r.syn("= FALSE", t.off)
			}
			k = d.to
			continue
		}
		if cond, ok := w.cond[k]; ok {
			r.syn("CASE WHEN (", t.off)
			if err := r.rewriteRange(cond[0], cond[1]); err != nil {
				return err
			}
			r.syn(") THEN", t.off)
			if t.op("*") {
				r.syn("1", t.off)
				k++
				continue
			}
		}
		if err := r.checkName(k); err != nil {
			return err
		}
		if t.op("(") {
			if err := r.derivedColumns(k); err != nil {
				return err
			}
		}
		if t.kind != tkIdent {
			r.tok(t)
			k++
			continue
		}
		next := r.at(k + 1)
		up := strings.ToUpper(t.raw)
		switch {
		case up == "INTERVAL" && !next.op("(") && !r.isName(k, up):
			ms, nk, err := r.parseInterval(k)
			if err != nil {
				return err
			}
			carrier := "`__sx_interval`(" + strconv.FormatInt(ms, 10) + ")"
			if b := r.at(nk); b.is("PRECEDING") || b.is("FOLLOWING") {
				// A window frame's bound, where TiDB takes only INTERVAL expr unit: the
				// carrier is the expression, the unit a placeholder.
				carrier = "INTERVAL " + carrier + " SECOND"
			}
			r.syn(carrier, t.off)
			k = nk
		case (up == "CAST" || up == "TRY_CAST") && next.op("("):
			nk, err := r.rewriteCast(k, j)
			if err != nil {
				return err
			}
			k = nk
		case up == "TABLE" && next.op("(") && k+1 < j:
			nk, err := r.rewriteTVF(k)
			if err != nil {
				return err
			}
			k = nk
		case up == "FOR" && r.at(k+1).is("SYSTEM_TIME") && r.at(k+2).is("AS") && r.at(k+3).is("OF"):
			nk, err := r.rewriteSystemTime(k, j)
			if err != nil {
				return err
			}
			k = nk
		case up == "GROUP" && next.is("BY") && r.groupingSets(k+2, j) >= 0:
			nk, err := r.rewriteGroupingSets(k, j)
			if err != nil {
				return err
			}
			k = nk
		case up == "NATURAL" && next.is("FULL"):
			return r.errAt(k, "NATURAL FULL JOIN is not supported: use FULL JOIN ... USING (columns)")
		case up == "FULL" && (next.is("JOIN") || next.is("OUTER") && r.at(k+2).is("JOIN")):
			r.syn("STRAIGHT_JOIN", t.off)
			k += 2
			if next.is("OUTER") {
				k++
			}
		case up == "VALUES" && next.op("(") && k > i && r.setOperand(k-1):
			// An operand of a set operation: a derived table of the rows, as a VALUES
			// statement is.
			nk, err := r.valuesQuery(k, j, "__sx_values_"+strconv.Itoa(k))
			if err != nil {
				return err
			}
			k = nk
		case up == "VALUES" && next.op("(") && k > i && r.toks[k-1].op("("):
			nk, err := r.rewriteValues(k)
			if err != nil {
				return err
			}
			k = nk
		case up == "EXTRACT" && next.op("(") && pgExtractUnits[strings.ToUpper(r.at(k+2).raw)] && r.at(k+3).is("FROM"):
			// Units TiDB's EXTRACT does not know become the function extract_<unit>(e).
			r.syn("`extract_"+strings.ToLower(r.at(k+2).raw)+"`(", t.off)
			k += 4
		case up == "OFFSET" && (next.kind == tkNumber || next.kind == tkParam) && !r.at(k-2).is("LIMIT") ||
			up == "FETCH" && (next.is("FIRST") || next.is("NEXT")):
			nk, err := r.rewriteOffsetFetch(k)
			if err != nil {
				return err
			}
			k = nk
		case userAggs[up] && next.op("(") && !(windowOnly[up] && r.windowCall(k)):
			nk, err := r.rewriteAggCall(k)
			if err != nil {
				return err
			}
			k = nk
		case r.isName(k, up):
			// A name TiDB reserves but PostgreSQL and DuckDB take (a column `key`, `rank`).
			r.syn("`"+t.raw+"`", t.off)
			k++
		case (up == "STDDEV" || up == "VARIANCE") && next.op("("):
			// The sample statistics, as in PostgreSQL and DuckDB (TiDB reads the population's).
			r.syn(map[string]string{"STDDEV": "STDDEV_SAMP(", "VARIANCE": "VAR_SAMP("}[up], t.off)
			k += 2
		case up == "CONCAT" && next.op("("):
			// Spelled upper case whatever the user wrote: the parser turns `a || b` into
			// concat(a, b) in lower case, and the binder tells the two apart by that.
			r.syn("CONCAT(", t.off)
			k += 2
		case up == "STRAIGHT_JOIN":
			return r.errAt(k, "STRAIGHT_JOIN is not supported")
		case (up == "FLOOR" || up == "CEIL" || up == "CEILING") && next.op("(") && r.floorTo(k) >= 0:
			nk, err := r.rewriteFloorTo(k, j)
			if err != nil {
				return err
			}
			k = nk
		case up == "REGEXP" && next.op("(") && !r.endsOperand(k-1) && !(r.at(k-1).is("NOT") && r.endsOperand(k-2)):
			// Flink's function REGEXP(s, re); TiDB reads REGEXP only as an operator.
			r.syn("`REGEXP`", t.off)
			k++
		case dateFuncs[up] && next.op("("):
			r.syn("`"+up+"`", t.off)
			k++
		default:
			r.tok(t)
			k++
		}
	}
	return nil
}

// exprWords are the words an expression can follow.
var exprWords = wordSet("SELECT BY CASE DISTINCT ALL")

// endsOperand reports whether token k can end an operand, so that an operator, not an
// operand, follows it: a literal, a placeholder, a ')' or a name that is not a keyword an
// expression can follow.
func (r *rewriter) endsOperand(k int) bool {
	t := r.at(k)
	switch t.kind {
	case tkString, tkNumber, tkParam, tkQIdent:
		return true
	case tkIdent:
		up := strings.ToUpper(t.raw)
		return !exprWords[up] && !stopWords[up] && !contWords[up]
	}
	return t.op(")")
}

// floorTo returns the index of the TO of Flink's FLOOR(e TO unit) or CEIL(e TO unit) whose
// name is at i, or -1 when the call has no TO outside parentheses.
func (r *rewriter) floorTo(i int) int {
	depth, end := 0, r.matchParen(i+1)
	for k := i + 2; k < end; k++ {
		switch t := r.toks[k]; {
		case t.op("("):
			depth++
		case t.op(")"):
			depth--
		case depth == 0 && t.is("TO"):
			return k
		}
	}
	return -1
}

// rewriteFloorTo emits FLOOR(e TO unit) at i as `__sx_floor`(e, 'UNIT'), CEIL(e TO unit) as
// `__sx_ceil`(e, 'UNIT') (see FloorToOf): TiDB's FLOOR takes one argument. It returns the
// index after the call.
func (r *rewriter) rewriteFloorTo(i, j int) (int, *Error) {
	name := strings.ToUpper(r.toks[i].raw)
	m, to := r.matchParen(i+1), r.floorTo(i)
	if m >= j {
		return 0, r.errAt(i, "missing ) after %s(", name)
	}
	if to == i+2 {
		return 0, r.errAt(to, "expected an expression before TO in %s(expression TO unit)", name)
	}
	if u := r.at(to + 1); u.kind != tkIdent || to+2 != m {
		return 0, r.errAt(to+1, "expected a unit such as HOUR after TO in %s(expression TO unit)", name)
	}
	fn := "`__sx_floor`("
	if name != "FLOOR" {
		fn = "`__sx_ceil`("
	}
	r.syn(fn, r.toks[i].off)
	if err := r.rewriteRange(i+2, to); err != nil {
		return 0, err
	}
	r.syn(", '"+strings.ToUpper(r.toks[to+1].raw)+"')", r.toks[to].off)
	return m + 1, nil
}

// userAggs are the aggregate functions TiDB does not parse as aggregates: it takes them as
// plain calls, or FIRST_VALUE and LAST_VALUE (windowOnly) only as window functions.
var userAggs = map[string]bool{"BOOL_AND": true, "BOOL_OR": true, "EVERY": true, "STRING_AGG": true,
	"LISTAGG": true, "ANY_VALUE": true, "FIRST_VALUE": true, "LAST_VALUE": true}

// windowOnly are the userAggs that are window functions when OVER follows the call (see
// windowCall).
var windowOnly = map[string]bool{"FIRST_VALUE": true, "LAST_VALUE": true}

// windowCall reports whether the call at i is a window function's: OVER, or IGNORE or
// RESPECT NULLS, follows it.
func (r *rewriter) windowCall(i int) bool {
	end := r.matchParen(i + 1)
	if end < 0 {
		return false
	}
	next := r.at(end + 1)
	return next.is("OVER") || next.is("IGNORE") || next.is("RESPECT")
}

// aggCarrier prefixes the name of an aggregate of userAggs in its carrier call, and
// aggDistinct follows it when the call says DISTINCT.
const (
	aggCarrier  = "__sx_agg_"
	aggDistinct = "distinct_"
)

// rewriteAggCall emits the aggregate call of userAggs at i, `f([DISTINCT] args)`, as the plain
// call `__sx_agg_f(args)`, or `__sx_agg_distinct_f(args)`, which aggregateCalls turns into the
// aggregate once parsed; it returns the index of the first argument. An ORDER BY among the
// arguments is an error: the aggregates take their values in arrival order (see exec's
// arrivalAcc), and a window (OVER) over any but FIRST_VALUE and LAST_VALUE is not supported.
func (r *rewriter) rewriteAggCall(i int) (int, *Error) {
	up := strings.ToUpper(r.toks[i].raw)
	end := r.matchParen(i + 1)
	if end < 0 {
		return 0, r.errAt(i+1, "missing ) after %s(", up)
	}
	if r.at(end + 1).is("OVER") {
		return 0, r.errAt(end+1, "%s is not supported as a window function (OVER)", up)
	}
	depth := 0
	for k := i + 2; k < end; k++ {
		switch u := r.toks[k]; {
		case u.op("("):
			depth++
		case u.op(")"):
			depth--
		case depth == 0 && u.is("ORDER") && r.at(k+1).is("BY"):
			return 0, r.errAt(k, "ORDER BY inside %s(...) is not supported: it takes the values in arrival order", up)
		}
	}
	name, k := aggCarrier, i+2
	if r.at(k).is("DISTINCT") {
		name, k = name+aggDistinct, k+1
	}
	r.syn("`"+name+strings.ToLower(up)+"`(", r.toks[i].off)
	return k, nil
}

// rewriteOffsetFetch emits standard SQL's `OFFSET n [ROW|ROWS] [FETCH {FIRST|NEXT} m
// {ROW|ROWS} ONLY]`, or the FETCH clause alone, at i as TiDB's `LIMIT m OFFSET n` (without
// FETCH, every row after the first n). It returns the index after the clause.
func (r *rewriter) rewriteOffsetFetch(i int) (int, *Error) {
	k := i
	var offset *token
	if r.at(k).is("OFFSET") {
		t := r.at(k + 1)
		offset = &t
		k += 2
		if r.at(k).is("ROW") || r.at(k).is("ROWS") {
			k++
		}
	}
	if !r.at(k).is("FETCH") {
		r.syn("LIMIT 9223372036854775807 OFFSET", r.at(i).off)
		r.tok(*offset)
		return k, nil
	}
	if !r.at(k+1).is("FIRST") && !r.at(k+1).is("NEXT") {
		return 0, r.errAt(k+1, "expected FIRST or NEXT after FETCH")
	}
	count := r.at(k + 2)
	if !(r.at(k+3).is("ROW") || r.at(k+3).is("ROWS")) || !r.at(k+4).is("ONLY") {
		return 0, r.errAt(k+3, "expected ROWS ONLY in FETCH FIRST n ROWS ONLY")
	}
	r.syn("LIMIT", r.at(k).off)
	r.tok(count)
	if offset != nil {
		r.syn("OFFSET", r.at(i).off)
		r.tok(*offset)
	}
	return k + 5, nil
}

// rewriteValues emits the table value constructor `(VALUES (e, ...), ...) [AS] t [(c, ...)]`,
// whose '(' was emitted and whose VALUES is at i, as `(SELECT e AS c, ... UNION ALL SELECT
// ...) [AS] t`: TiDB parses neither VALUES in FROM nor derived column lists. Columns are named
// by the list after the alias, else column1, column2, ... (as in PostgreSQL). It returns the
// index after the constructor (after the column list, if any).
func (r *rewriter) rewriteValues(i int) (int, *Error) {
	end := r.matchParen(i - 1)
	if end < 0 {
		return 0, r.errAt(i-1, "missing ) after (VALUES")
	}
	// The alias and its column list, after the closing ')'.
	k := end + 1
	if r.at(k).is("AS") {
		k++
	}
	var names []string
	next := end + 1
	if r.at(k).isName() {
		next = k + 1
		if r.at(k + 1).op("(") {
			var err *Error
			if names, next, err = r.columnList(k); err != nil {
				return 0, err
			}
		}
	}
	k, err := r.valuesRows(i, end, names)
	if err != nil {
		return 0, err
	}
	if k != end {
		return 0, r.errAt(k, "expected , or ) after a VALUES row")
	}
	// The closing ')' and the alias, without the column list.
	for c := end; c < min(next, len(r.toks)) && (c == end || !r.at(c).op("(")); c++ {
		r.tok(r.toks[c])
	}
	return next, nil
}

// setOperand reports whether token k ends a set operation's operator (UNION [ALL |
// DISTINCT], EXCEPT ..., INTERSECT ...), so that what follows is its right operand.
func (r *rewriter) setOperand(k int) bool {
	if t := r.at(k); t.is("ALL") || t.is("DISTINCT") {
		k--
	}
	t := r.at(k)
	return t.is("UNION") || t.is("EXCEPT") || t.is("INTERSECT")
}

// valuesRows emits the rows of `VALUES (e, ...), ...` at i (rows within [i, end)) as
// `SELECT e AS c, ... UNION ALL SELECT ...`, naming the columns by names if given, else
// column1, column2, ...; it returns the index after the last row.
func (r *rewriter) valuesRows(i, end int, names []string) (int, *Error) {
	width := -1
	k := i + 1
	for {
		row := r.at(k)
		m := r.matchParen(k)
		if !row.op("(") || m < 0 || m >= end {
			return 0, r.errAt(k, "expected a row such as (1, 'a') in VALUES")
		}
		var cells [][2]int
		start, depth := k+1, 0
		for c := k + 1; c <= m; c++ {
			t := r.toks[c]
			switch {
			case t.op("("):
				depth++
			case t.op(")") && c < m:
				depth--
			case depth == 0 && (t.op(",") || c == m):
				if c == start {
					return 0, r.errAt(c, "expected a value in VALUES row")
				}
				cells = append(cells, [2]int{start, c})
				start = c + 1
			}
		}
		if width < 0 {
			width = len(cells)
			if names != nil && len(names) != width {
				return 0, r.errAt(k, "VALUES has %d columns but the column list names %d", width, len(names))
			}
		} else if len(cells) != width {
			return 0, r.errAt(k, "VALUES rows must have the same number of values: this row has %d, the first has %d", len(cells), width)
		}
		if k == i+1 {
			r.syn("SELECT", row.off)
		} else {
			r.syn("UNION ALL SELECT", row.off)
		}
		for c, cell := range cells {
			if c > 0 {
				r.syn(",", r.toks[cell[0]].off)
			}
			if err := r.rewriteRange(cell[0], cell[1]); err != nil {
				return 0, err
			}
			name := "column" + strconv.Itoa(c+1)
			if names != nil {
				name = names[c]
			}
			r.syn("AS `"+strings.ReplaceAll(name, "`", "``")+"`", r.toks[cell[1]].off)
		}
		k = m + 1
		if !r.at(k).op(",") || k+1 >= end {
			return k, nil
		}
		k++
	}
}

// pgExtractUnits are the EXTRACT units of PostgreSQL and Flink that MySQL lacks.
var pgExtractUnits = map[string]bool{"EPOCH": true, "DOW": true, "DOY": true, "MILLISECOND": true}

// rewriteCast emits CAST(e AS T) / TRY_CAST(e AS T) at i as
// __sx_cast(e, 'T') / __sx_try_cast(e, 'T') and returns the index after it.
func (r *rewriter) rewriteCast(i, j int) (int, *Error) {
	m := r.matchParen(i + 1)
	if m < 0 || m >= j {
		return 0, r.errAt(i, "missing ) after %s(", strings.ToUpper(r.toks[i].raw))
	}
	as, depth := -1, 0
	for k := i + 2; k < m; k++ {
		t := r.toks[k]
		if t.op("(") {
			depth++
		} else if t.op(")") {
			depth--
		} else if depth == 0 && t.is("AS") {
			as = k
			break
		}
	}
	name := strings.ToUpper(r.toks[i].raw)
	if as < 0 || as == i+2 {
		return 0, r.errAt(i, "expected %s(expression AS type)", name)
	}
	if as+1 == m {
		return 0, r.errAt(m, "expected a type after AS in %s", name)
	}
	var typ strings.Builder
	prevWord := false
	for k := as + 1; k < m; k++ {
		t := r.toks[k]
		switch t.kind {
		case tkIdent, tkNumber:
			if prevWord {
				typ.WriteByte(' ')
			}
			typ.WriteString(strings.ToUpper(t.raw))
			prevWord = true
		case tkOp:
			if !t.op("(") && !t.op(")") && !t.op(",") {
				return 0, r.errAt(k, "unexpected %s in the type of %s", t.raw, name)
			}
			typ.WriteString(t.raw)
			prevWord = false
		default:
			return 0, r.errAt(k, "unexpected %s in the type of %s", t.raw, name)
		}
	}
	// Carrier names are backquoted: TiDB's lexer looks up every bare
	// identifier starting with '_' as a charset introducer, which costs a
	// stack-capturing error each time.
	fn := "`__sx_cast`("
	if name == "TRY_CAST" {
		fn = "`__sx_try_cast`("
	}
	r.syn(fn, r.toks[i].off)
	if err := r.rewriteRange(i+2, as); err != nil {
		return 0, err
	}
	r.syn(", '"+typ.String()+"')", r.toks[as].off)
	return m + 1, nil
}

var windowKinds = map[string]WindowKind{"TUMBLE": Tumble, "HOP": Hop, "SESSION": Session, "CUMULATE": Cumulate}

var windowUsage = [...]string{
	Tumble:   "TUMBLE(TABLE t, DESCRIPTOR(col), size)",
	Hop:      "HOP(TABLE t, DESCRIPTOR(col), slide, size)",
	Session:  "SESSION(TABLE t [PARTITION BY k, ...], DESCRIPTOR(col), gap)",
	Cumulate: "CUMULATE(TABLE t, DESCRIPTOR(col), step, size)",
}

// windowArgNames are the names of a window function's arguments, in order, for Flink's
// named form (TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL ...)).
var windowArgNames = [...][]string{
	Tumble:   {"DATA", "TIMECOL", "SIZE"},
	Hop:      {"DATA", "TIMECOL", "SLIDE", "SIZE"},
	Session:  {"DATA", "TIMECOL", "GAP"},
	Cumulate: {"DATA", "TIMECOL", "STEP", "SIZE"},
}

// maxWindowInterval bounds a window's size, slide, step or gap: 999999 days, Flink's largest
// day-time interval (DAY(6)), so that a window's start and end stay in int64 for every
// timestamp of the supported range (±200 million years).
const maxWindowInterval = 999999 * 86_400_000

// maxWindowsPerRow bounds HOP's size / slide and CUMULATE's size / step: the windows each
// row is in.
const maxWindowsPerRow = 10_000

// rewriteTVF emits TABLE(<window fn>(...)) at i as the table name __sx_tvf_<n>
// and records the window in r.windows.
func (r *rewriter) rewriteTVF(i int) (int, *Error) {
	end := r.matchParen(i + 1)
	if end < 0 {
		return 0, r.errAt(i+1, "missing ) after TABLE(")
	}
	fn := r.at(i + 2)
	kind, ok := windowKinds[strings.ToUpper(fn.raw)]
	if fn.kind != tkIdent || !ok {
		return 0, r.errAt(i+2, "expected TUMBLE, HOP, SESSION or CUMULATE in TABLE(...)")
	}
	usage := "expected " + windowUsage[kind]
	if !r.at(i + 3).op("(") {
		return 0, r.errAt(i+3, "%s", usage)
	}
	close := r.matchParen(i + 3)
	if close+1 != end {
		return 0, r.errAt(close+1, "expected ) after %s(...)", fn.raw)
	}
	w := &WindowTVF{Kind: kind, Pos: r.src.pos(r.toks[i].off)}
	k := i + 4
	name := func() (string, *Error) {
		if !r.at(k).isName() {
			return "", r.errAt(k, "%s", usage)
		}
		if err := r.checkName(k); err != nil {
			return "", err
		}
		k++
		return r.toks[k-1].val, nil
	}
	// named skips argument pos's name (NAME =>), if it is given: the arguments keep their
	// order, named or not.
	named := func(pos int) *Error {
		if !r.at(k + 1).op("=>") {
			return nil
		}
		names := windowArgNames[kind]
		if pos >= len(names) || !r.at(k).is(names[pos]) {
			if pos >= len(names) {
				return r.errAt(k, "%s takes %d arguments: %s", strings.ToUpper(fn.raw), len(names), strings.Join(names, ", "))
			}
			return r.errAt(k, "expected argument %s of %s here, got %s (named arguments go in the order %s)", names[pos], strings.ToUpper(fn.raw), r.at(k).raw, strings.Join(names, ", "))
		}
		k += 2
		return nil
	}
	var err *Error
	if err := named(0); err != nil {
		return 0, err
	}
	if !r.at(k).is("TABLE") {
		return 0, r.errAt(k, "%s", usage)
	}
	k++
	w.TablePos = r.src.pos(r.at(k).off)
	if w.Table, err = name(); err != nil {
		return 0, err
	}
	if r.at(k).op(".") {
		return 0, r.errAt(k, "qualified table names are not supported in %s", fn.raw)
	}
	if r.at(k).is("PARTITION") && r.at(k+1).is("BY") {
		if kind != Session {
			return 0, r.errAt(k, "PARTITION BY is only supported in SESSION windows")
		}
		k += 2
		paren := r.at(k).op("(")
		if paren {
			k++
		}
		for {
			col, err := name()
			if err != nil {
				return 0, err
			}
			w.PartitionBy = append(w.PartitionBy, col)
			// Unparenthesized, the list ends at the comma before DESCRIPTOR, named or not.
			if !r.at(k).op(",") || !paren && (r.at(k+1).is("DESCRIPTOR") || r.at(k+2).op("=>")) {
				break
			}
			k++
		}
		if paren {
			if !r.at(k).op(")") {
				return 0, r.errAt(k, "expected ) after the PARTITION BY columns")
			}
			k++
		}
	}
	if !r.at(k).op(",") {
		return 0, r.errAt(k, "%s", usage)
	}
	k++
	if err := named(1); err != nil {
		return 0, err
	}
	if !r.at(k).is("DESCRIPTOR") || !r.at(k+1).op("(") {
		return 0, r.errAt(k, "%s", usage)
	}
	k += 2
	if w.TimeCol, err = name(); err != nil {
		return 0, err
	}
	if !r.at(k).op(")") {
		return 0, r.errAt(k, "expected ) after DESCRIPTOR(%s", w.TimeCol)
	}
	k++
	want := 1
	if kind == Hop || kind == Cumulate {
		want = 2
	}
	for k < close {
		if !r.at(k).op(",") {
			return 0, r.errAt(k, "%s", usage)
		}
		k++
		if len(w.Args) == want {
			return 0, r.errAt(k, "%s takes %d interval argument(s), got more: %s", strings.ToUpper(fn.raw), want, usage)
		}
		if err := named(2 + len(w.Args)); err != nil {
			return 0, err
		}
		if !r.at(k).is("INTERVAL") {
			return 0, r.errAt(k, "argument %d of %s must be an interval literal such as INTERVAL '10' SECOND", len(w.Args)+3, strings.ToUpper(fn.raw))
		}
		ms, nk, err := r.parseInterval(k)
		if err != nil {
			return 0, err
		}
		if ms <= 0 {
			return 0, r.errAt(k, "the intervals of %s must be positive", strings.ToUpper(fn.raw))
		}
		if ms > maxWindowInterval {
			return 0, r.errAt(k, "the intervals of %s must be at most 999999 days (Flink's largest, DAY(6))", strings.ToUpper(fn.raw))
		}
		if len(w.Args) == 1 { // the size, after the slide (HOP) or step (CUMULATE)
			what := "slide"
			if kind == Cumulate {
				what = "step"
			}
			switch {
			case ms%w.Args[0] != 0:
				return 0, r.errAt(k, "%s size must be a multiple of the %s", strings.ToUpper(fn.raw), what)
			case ms/w.Args[0] > maxWindowsPerRow:
				return 0, r.errAt(k, "%s size must be at most %d times the %s: each row is in size / %s windows", strings.ToUpper(fn.raw), maxWindowsPerRow, what, what)
			}
		}
		w.Args = append(w.Args, ms)
		k = nk
	}
	if len(w.Args) != want {
		return 0, r.errAt(i+2, "%s takes %d interval argument(s), got %d: %s", strings.ToUpper(fn.raw), want, len(w.Args), usage)
	}
	if r.windows == nil {
		r.windows = map[string]*WindowTVF{}
	}
	carrier := "__sx_tvf_" + strconv.Itoa(len(r.windows))
	r.windows[carrier] = w
	r.syn("`"+carrier+"`", r.toks[i].off)
	return end + 1, nil
}

// Words that end the expression of FOR SYSTEM_TIME AS OF, and words that
// continue an expression after an operand (so they are not an alias).
var (
	stopWords = wordSet("AS ON USING WHERE GROUP HAVING ORDER LIMIT JOIN INNER LEFT RIGHT FULL CROSS NATURAL STRAIGHT_JOIN UNION EXCEPT INTERSECT WINDOW EMIT FOR QUALIFY")
	contWords = wordSet("AND OR XOR NOT IS IN LIKE BETWEEN DIV MOD REGEXP RLIKE COLLATE ESCAPE WHEN THEN ELSE SOUNDS MEMBER")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// exprEnd returns the end of the expression starting at i (bounded by j):
// the first top-level ',' or ')', clause keyword, or alias.
func (r *rewriter) exprEnd(i, j int) int {
	depth, operand := 0, false
	for k := i; k < j; k++ {
		t := r.toks[k]
		switch {
		case t.op("("):
			depth++
			operand = false
			continue
		case t.op(")"):
			if depth == 0 {
				return k
			}
			depth--
			operand = true
			continue
		}
		if depth > 0 {
			continue
		}
		if t.op(",") || t.op(";") {
			return k
		}
		if t.kind == tkIdent {
			up := strings.ToUpper(t.raw)
			if stopWords[up] {
				return k
			}
			if up == "INTERVAL" && !r.at(k+1).op("(") {
				if _, nk, err := r.parseInterval(k); err == nil {
					k, operand = nk-1, true
					continue
				}
			}
			if up == "END" || up == "CASE" { // CASE ... END is one operand
				operand = up == "END"
				continue
			}
			if contWords[up] {
				operand = false
				continue
			}
		}
		if t.isName() && operand {
			return k
		}
		operand = t.kind != tkOp
	}
	return j
}

// rewriteSystemTime emits `FOR SYSTEM_TIME AS OF e [AS] a` at i as
// `AS a AS OF TIMESTAMP e` (the alias moves before AS OF, as TiDB requires).
func (r *rewriter) rewriteSystemTime(i, j int) (int, *Error) {
	start := i + 4
	e := r.exprEnd(start, j)
	if e == start {
		return 0, r.errAt(start, "expected an expression after FOR SYSTEM_TIME AS OF")
	}
	next := e
	switch a := r.at(e); {
	case a.is("AS") && e < j:
		if e+1 >= j || !r.at(e+1).isName() {
			return 0, r.errAt(e+1, "expected an alias after AS")
		}
		if err := r.checkName(e + 1); err != nil {
			return 0, err
		}
		r.tok(a)
		r.tok(r.toks[e+1])
		next = e + 2
	case a.isName() && e < j && !stopWords[strings.ToUpper(a.raw)]:
		if err := r.checkName(e); err != nil {
			return 0, err
		}
		r.tok(a)
		next = e + 1
	}
	r.syn("AS OF TIMESTAMP", r.toks[i].off)
	if err := r.rewriteRange(start, e); err != nil {
		return 0, err
	}
	return next, nil
}
