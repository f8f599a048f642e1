package oracle

// The random query generator of TestRandomQueriesMatchDuckDB (fuzz_test.go): tables, then
// expressions, FROM clauses and queries over them, each tagged with the features it uses.

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// larger of two is the type of an arithmetic on them.
type kind int

const (
	kInt kind = iota
	kBig
	kDec
	kDbl
	kStr
	kBool
	kDate
	kTs

	kNum   kind = -1 // in an op: the largest kind of its numeric arguments
	kFirst kind = -2 // in an op: the kind of its first argument
)

// fam is a family of kinds that compare and unify with each other: the numeric kinds, then
// each later kind alone, in the same order.
type fam int

const (
	fNum fam = iota
	fStr
	fBool
	fDate
	fTs
)

func (k kind) fam() fam      { return fam(max(0, int(k-kDbl))) }
func (k kind) integer() bool { return k == kInt || k == kBig }

// op is an operator or function: its SQL, with $ for each argument and {x|y|...} for a choice
// made at random; its arguments' families (n number, i integer, x DOUBLE or DECIMAL, c INT or
// DECIMAL, s string, b boolean, d date, t timestamp, a any family, the same for each a); its
// result's kind; and the feature it counts as.
type op struct {
	sql, args string
	k         kind
	feature   string
}

const (
	strFns  = "string functions"
	timeFns = "date and time functions"
	intDiv  = "integer / and %"
)

// ops are the operators and functions of each family, other than CASE and subqueries.
var ops = [...][]op{
	fNum: {
		{"($ {+|-|*} $)", "nn", kNum, ""}, {"($ {+|-|*} $)", "nn", kNum, ""}, {"(- $)", "n", kNum, ""},
		{"($ / NULLIF($, 0))", "xn", kDbl, ""}, {"($ / NULLIF($, 0))", "nx", kDbl, ""},
		{"($ {/|%} NULLIF($, 0))", "ii", kNum, intDiv}, {"MOD($, NULLIF($, 0))", "ii", kNum, intDiv},
		{"ABS($)", "n", kNum, ""}, {"ROUND($)", "n", kNum, ""}, {"ROUND($, {0|1|2})", "n", kNum, ""},
		{"{FLOOR|CEIL}($)", "x", kNum, ""}, {"SIGN($)", "i", kInt, ""}, {"CAST(SIGN($) AS DOUBLE)", "x", kDbl, ""},
		{"NULLIF($, $)", "nn", kFirst, ""}, {"{COALESCE|GREATEST|LEAST}($, $)", "nn", kNum, ""},
		{"LENGTH($)", "s", kBig, strFns}, {"STRPOS($, $)", "ss", kBig, strFns},
		{"EXTRACT({YEAR|MONTH|DAY|DOW|DOY|QUARTER} FROM $)", "d", kBig, timeFns},
		{"EXTRACT({YEAR|MONTH|DAY|HOUR|MINUTE|SECOND} FROM $)", "t", kBig, timeFns},
		{"CAST($ AS DOUBLE)", "n", kDbl, ""}, {"CAST($ AS DECIMAL(18,{0|1|3}))", "c", kDec, ""},
		{"CAST($ AS BIGINT)", "i", kBig, ""},
	},
	fStr: {
		{"($ || $)", "ss", kStr, strFns}, {"CONCAT($, $)", "ss", kStr, strFns}, {"CONCAT($, $, $)", "sss", kStr, strFns},
		{"{LOWER|UPPER|TRIM|LTRIM|RTRIM}($)", "s", kStr, strFns}, {"SUBSTRING($, {1|2|4})", "s", kStr, strFns},
		{"SUBSTRING($, {1|2|4}, {0|1|3})", "s", kStr, strFns}, {"REPLACE($, $, $)", "sss", kStr, strFns},
		{"{LEFT|RIGHT}($, {0|1|3})", "s", kStr, strFns}, {"{COALESCE|NULLIF|GREATEST|LEAST}($, $)", "ss", kStr, ""},
		{"CAST($ AS VARCHAR)", "i", kStr, ""}, {"CAST($ AS VARCHAR)", "d", kStr, ""}, {"CAST($ AS VARCHAR)", "b", kStr, ""},
	},
	fBool: {
		{"($ {=|<>|<|<=|>|>=} $)", "aa", kBool, ""}, {"($ {=|<>|<|<=|>|>=} $)", "aa", kBool, ""},
		{"($ IS {|NOT }NULL)", "a", kBool, ""}, {"($ {|NOT }BETWEEN $ AND $)", "aaa", kBool, ""},
		{"($ {|NOT }IN ($, $))", "aaa", kBool, ""}, {"($ {|NOT }IN ($, $, $, $))", "aaaaa", kBool, ""},
		{`($ {|NOT }LIKE {'a%'|'%a'|'%b%'|'_'|'a_'|'%'|''|'A%'|'x\%y' ESCAPE '\'|'_b%'|'%a%b%'|'__'|'é'})`, "s", kBool, ""},
		{"($ {|NOT }LIKE $)", "ss", kBool, ""}, {"(NOT $)", "b", kBool, ""},
		{"($ {AND|OR} $)", "bb", kBool, ""}, {"($ {AND|OR} $)", "bb", kBool, ""},
		{"($ IS {|NOT }DISTINCT FROM ($))", "aa", kBool, ""}, {"($ IS {|NOT }{TRUE|FALSE})", "b", kBool, ""},
	},
	fDate: {
		{"{COALESCE|GREATEST|LEAST}($, $)", "dd", kDate, ""}, {"CAST($ AS DATE)", "t", kDate, timeFns},
	},
	fTs: {
		{"{COALESCE|GREATEST|LEAST}($, $)", "tt", kTs, ""}, {"CAST($ AS TIMESTAMP)", "d", kTs, timeFns},
		{"DATE_TRUNC('{day|month|hour|year}', $)", "t", kTs, timeFns},
		{"($ {+|-} INTERVAL '{1|7|30}' {SECOND|MINUTE|HOUR|DAY})", "t", kTs, timeFns},
	},
}

// numArgs are the kinds that op's letters i, x and c take, and a literal of them.
var numArgs = map[rune]struct {
	kinds   []kind
	literal expr
}{
	'i': {[]kind{kInt, kBig}, expr{"(1)", kInt}},
	'x': {[]kind{kDec, kDbl}, expr{"CAST(0.5 AS DOUBLE)", kDbl}},
	'c': {[]kind{kInt, kDec}, expr{"1.5", kDec}},
}

// leafPct is, per family, the chance (%) that an expression is a leaf before its depth runs out.
var leafPct = [...]int{fNum: 30, fStr: 35, fBool: 15, fDate: 50, fTs: 45}

// Literals: the doubles are dyadic, so that their sums are exact in any order.
var (
	numLits = []expr{{"CAST(NULL AS INT)", kInt}, {"2147483647", kInt}, {"CAST(5000000000 AS BIGINT)", kBig},
		{"CAST(-7.75 AS DOUBLE)", kDbl}, {"CAST(0.5 AS DOUBLE)", kDbl}, {"1.5", kDec}, {"2.50", kDec}, {"12.345", kDec},
		{"(-0.25)", kDec}, {"0", kInt}, {"1", kInt}, {"(-1)", kInt}, {"2", kInt}, {"7", kInt}}
	// The literals of the other families, as choices for choose.
	literals = [...]string{
		fStr:  "{''|'a'|'A'|'ab'|'abc'|'b'|'Ab'|' a'|'a '|'x%y'|'hello'|'é'|'B'|'ba'|'a_b'|'zz'|'10'|'abab'|CAST(NULL AS VARCHAR)}",
		fBool: "{TRUE|FALSE|CAST(NULL AS BOOLEAN)}",
		fDate: "DATE '{1970-01-01|2024-02-29|1969-12-31|2000-01-01|2024-01-05|2023-12-31|2024-03-10}'",
		fTs: "TIMESTAMP '{2024-01-05 10:00:00|2024-01-05 10:00:00.123|2024-01-05 23:59:59.999|1970-01-01 00:00:00|" +
			"2023-12-31 12:30:00.500|2024-02-29 00:00:00.001|1969-12-31 23:59:59.999|2024-01-06 00:00:00}'",
	}
	doubles = "{0|1|-1|0.5|-0.5|1.5|-2.25|0.125|1024|3|-7.75|1000000.5|65536.25}"

	columnRE    = regexp.MustCompile(`^r\d+\.[co]\d+$`) // a column of a FROM item
	hasColumnRE = regexp.MustCompile(`\br\d+\.[co]\d+\b`)
)

// column is a column of a generated table.
type column struct {
	name string
	k    kind
	p, s int // DECIMAL(p,s)
}

func (c column) sqlType() string {
	return [...]string{"INT", "BIGINT", fmt.Sprintf("DECIMAL(%d,%d)", c.p, c.s), "DOUBLE", "VARCHAR", "BOOLEAN", "DATE", "TIMESTAMP(3)"}[c.k]
}

// table is a generated table: columns c0, c1, ... and rows of SQL literals.
type table struct {
	name string
	cols []column
	rows [][]string
}

// setup is the table's CREATE TABLE and INSERT statements.
func (tb *table) setup() []string {
	var defs, rows []string
	for _, c := range tb.cols {
		defs = append(defs, c.name+" "+c.sqlType())
	}
	for _, r := range tb.rows {
		rows = append(rows, "("+strings.Join(r, ", ")+")")
	}
	stmts := []string{"CREATE TABLE " + tb.name + " (" + strings.Join(defs, ", ") + ")"}
	if len(rows) > 0 {
		stmts = append(stmts, "INSERT INTO "+tb.name+" VALUES "+strings.Join(rows, ", "))
	}
	return stmts
}

// expr is a piece of SQL and its kind; a column in scope is one too.
type expr struct {
	sql string
	k   kind
}

// scope is what an expression may refer to.
type scope struct {
	cols    []expr // columns in scope; after GROUP BY, the grouping keys
	outer   []expr // columns of the enclosing query, for a correlated subquery
	aggOver []expr // when set, aggregates over these columns may appear
	subq    bool   // subqueries may appear
}

// query is a generated query and the kinds of its output columns o0, o1, ...
type query struct {
	sql     string
	kinds   []kind
	ordered bool // it orders by every output column: compare in order
}

// gen generates one seed's tables and queries from its random source.
type gen struct {
	r          *rand.Rand
	tables     []*table
	nAlias     int             // aliases r1, r2, ... taken in the query
	tags       map[string]bool // features of the query
	totalOrder bool            // the SELECT being generated has a window ordered by all columns
	inSetop    int             // > 0 while generating a set operation's branches
}

func (g *gen) pick(n int) int           { return g.r.Intn(n) }
func (g *gen) chance(pct int) bool      { return g.r.Intn(100) < pct }
func (g *gen) oneOf(s ...string) string { return s[g.r.Intn(len(s))] }
func (g *gen) tag(feature string)       { g.tags[feature] = true }
func (g *gen) alias() string            { g.nAlias++; return fmt.Sprintf("r%d", g.nAlias) }

// choose replaces each {x|y|...} of s with one of its alternatives.
func (g *gen) choose(s string) string {
	for i := strings.IndexByte(s, '{'); i >= 0; i = strings.IndexByte(s, '{') {
		j := i + strings.IndexByte(s[i:], '}')
		s = s[:i] + g.oneOf(strings.Split(s[i+1:j], "|")...) + s[j+1:]
	}
	return s
}

func sqls(es []expr) []string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.sql
	}
	return s
}

func ofFam(es []expr, f fam) []expr {
	var out []expr
	for _, e := range es {
		if e.k.fam() == f {
			out = append(out, e)
		}
	}
	return out
}

// selectList names the expressions o0, o1, ...; it also returns their kinds.
func selectList(es []expr) (string, []kind) {
	s, ks := make([]string, len(es)), make([]kind, len(es))
	for i, e := range es {
		s[i], ks[i] = fmt.Sprintf("%s AS o%d", e.sql, i), e.k
	}
	return strings.Join(s, ", "), ks
}

// outputCols are the columns alias.o0, alias.o1, ... of a FROM item of the given kinds.
func outputCols(alias string, kinds []kind) []expr {
	cols := make([]expr, len(kinds))
	for i, k := range kinds {
		cols[i] = expr{fmt.Sprintf("%s.o%d", alias, i), k}
	}
	return cols
}

// makeTables creates 3-4 tables t0, t1, ... of 2-5 columns and 0-40 rows.
func (g *gen) makeTables() {
	for i := range 3 + g.pick(2) {
		tb := &table{name: fmt.Sprintf("t%d", i)}
		for j := range 2 + g.pick(4) {
			c := column{name: fmt.Sprintf("c%d", j), k: kind(g.pick(int(kTs) + 1))}
			if j == 0 && g.chance(50) {
				c.k = kInt // so that joins often meet
			} else if c.k == kDec { // at most 13 whole digits, as a BIGINT beside it (see unify)
				c.p = 4 + g.pick(15)
				c.s = max(g.pick(min(c.p, 5)+1), c.p-13)
			}
			tb.cols = append(tb.cols, c)
		}
		for n := range g.pick([]int{1, 4, 15, 15, 15, 41}[g.pick(6)]) {
			if n > 0 && g.chance(16) {
				tb.rows = append(tb.rows, tb.rows[g.pick(n)]) // a duplicate
				continue
			}
			row := make([]string, len(tb.cols))
			for j, c := range tb.cols {
				row[j] = g.value(c)
			}
			tb.rows = append(tb.rows, row)
		}
		g.tables = append(g.tables, tb)
	}
}

// value is a random literal of c's type: NULL one time in seven, now and then an extreme.
func (g *gen) value(c column) string {
	switch x := g.pick(100); {
	case x < 15:
		return "NULL"
	case c.k == kInt && x < 21:
		return g.oneOf("2147483647", "-2147483648")
	case c.k == kBig && x < 25:
		return g.oneOf("9223372036854775807", "-9223372036854775807", "4294967296")
	case c.k.integer():
		return strconv.Itoa(g.pick(14) - 3)
	case c.k == kDec:
		// Up to 3 whole digits, or the most the type holds; often a fraction of one half.
		whole := g.r.Int63n(int64(math.Pow10(min(c.p-c.s, g.pick(4)))))
		if g.chance(5) {
			whole = int64(math.Pow10(c.p-c.s)) - 1
		}
		v := g.oneOf("", "-") + strconv.FormatInt(whole, 10)
		if c.s > 0 {
			v += "." + g.oneOf(fmt.Sprintf("%0*d", c.s, g.r.Int63n(int64(math.Pow10(min(c.s, 4))))), "5"+strings.Repeat("0", c.s-1))
		}
		return v
	case c.k == kDbl:
		return g.choose(doubles)
	}
	return g.literal(c.k.fam()).sql
}

func (g *gen) literal(f fam) expr {
	if f == fNum {
		return numLits[g.pick(len(numLits))]
	}
	return expr{g.choose(literals[f]), kind(f) + kDbl} // the kind of a family other than fNum
}

// expr is an expression of family f and depth at most d: a leaf, a CASE, a subquery or an op.
func (g *gen) expr(f fam, sc *scope, d int) expr {
	switch x := g.pick(100); {
	case d <= 0 || x < leafPct[f]:
		return g.leaf(f, sc)
	case x < leafPct[f]+10:
		return g.caseExpr(f, sc, d)
	case x < leafPct[f]+20 && sc.subq && d >= 2 && f == fBool:
		return g.subqueryPredicate(sc)
	case x < leafPct[f]+15 && sc.subq && d >= 2 && f <= fStr:
		return g.scalarSub(f, sc)
	}
	o := ops[f][g.pick(len(ops[f]))]
	if o.feature != "" {
		g.tag(o.feature)
	}
	parts, same := strings.Split(g.choose(o.sql), "$"), g.anyFam()
	args := make([]expr, len(o.args))
	for i, c := range o.args {
		args[i] = g.arg(c, same, sc, d-1)
	}
	k := o.k
	switch k {
	case kNum:
		k = unify(args)
	case kFirst:
		k = args[0].k
	}
	sql := parts[0]
	for i, a := range args {
		sql += a.sql + parts[i+1]
	}
	return expr{sql, k}
}

// arg is an argument of family letter c (see op).
func (g *gen) arg(c rune, same fam, sc *scope, d int) expr {
	switch c {
	case 'a':
		return g.expr(same, sc, d)
	case 'i', 'x', 'c':
		tags := maps.Clone(g.tags)
		for range 3 {
			if e := g.expr(fNum, sc, d); slices.Contains(numArgs[c].kinds, e.k) {
				return e
			}
			g.tags = maps.Clone(tags) // a rejected expression's features are not the query's
		}
		return numArgs[c].literal
	}
	return g.expr(fam(strings.IndexRune("nsbdt", c)), sc, d)
}

func (g *gen) anyFam() fam { return []fam{fNum, fNum, fNum, fStr, fStr, fBool, fDate, fTs}[g.pick(8)] }

// fams is 1 to n random families, for a select list.
func (g *gen) fams(n int) []fam {
	fs := []fam{g.anyFam()}
	for len(fs) < n && g.chance(50) {
		fs = append(fs, g.anyFam())
	}
	return fs
}

// leaf is an aggregate (where allowed), a column, a column of the enclosing query, or a literal.
func (g *gen) leaf(f fam, sc *scope) expr {
	if sc.aggOver != nil && g.chance(45) {
		return g.aggregate(f, sc.aggOver)
	}
	cands := ofFam(sc.cols, f)
	if oc := ofFam(sc.outer, f); len(oc) > 0 && g.chance(25) {
		g.tag("correlated subqueries")
		cands = oc
	}
	if len(cands) == 0 || g.chance(20) {
		return g.literal(f)
	}
	return cands[g.pick(len(cands))]
}

// unify returns the kind of a value that may be any of es, numbers of the largest kind. A
// BIGINT beside a DECIMAL becomes DOUBLE: streamsql's common type, DECIMAL(18,s), cannot hold
// every BIGINT (DuckDB's, DECIMAL(38,s), can), so such a value would fail by design.
func unify(es []expr) kind {
	k := slices.MaxFunc(es, func(a, b expr) int { return int(a.k - b.k) }).k
	if k == kDec && slices.ContainsFunc(es, func(e expr) bool { return e.k == kBig }) {
		for i, e := range es {
			if e.k == kBig {
				es[i] = expr{"CAST(" + e.sql + " AS DOUBLE)", kDbl}
			}
		}
		return kDbl
	}
	return k
}

// caseExpr is a searched or (three times in ten) simple CASE of family f.
func (g *gen) caseExpr(f fam, sc *scope, d int) expr {
	g.tag("CASE")
	s, subject := "CASE", fBool
	if g.chance(30) {
		subject = g.anyFam()
		s += " " + g.expr(subject, sc, d-1).sql
	}
	var whens []string
	var results []expr
	for range 1 + g.pick(2) {
		whens = append(whens, " WHEN "+g.expr(subject, sc, d-1).sql+" THEN ")
		results = append(results, g.expr(f, sc, d-1))
	}
	if g.chance(70) {
		whens = append(whens, " ELSE ")
		results = append(results, g.expr(f, sc, d-1))
	}
	k := unify(results)
	for i, w := range whens {
		s += w + results[i].sql
	}
	return expr{s + " END", k}
}

// aggregate is an aggregate of family f over the columns over, with a FILTER now and then.
func (g *gen) aggregate(f fam, over []expr) expr {
	g.tag("aggregates")
	sc, tags := &scope{cols: over}, maps.Clone(g.tags)
	a := g.expr(f, sc, 1)
	name, arg, k := g.oneOf("MIN", "MAX"), a.sql, a.k
	if f == fNum && g.chance(75) {
		switch name = g.oneOf("COUNT", "SUM", "AVG"); name {
		case "COUNT":
			if k, arg = kBig, g.oneOf("*", arg, "DISTINCT "+arg); arg == "*" {
				g.tags = tags // a is not in the query
			}
		case "SUM":
			k, arg = max(a.k, kBig), g.oneOf(arg, arg, arg, "DISTINCT "+arg)
		default:
			k = kDbl
		}
	}
	s := name + "(" + arg + ")"
	if g.chance(15) && (arg == "*" || hasColumnRE.MatchString(arg)) {
		g.tag("FILTER")
		s += " FILTER (WHERE " + g.expr(fBool, sc, 2).sql + ")"
	}
	if name == "SUM" && g.inSetop > 0 && k != kDbl {
		s, k = "CAST("+s+" AS DOUBLE)", kDbl
	}
	return expr{s, k}
}

// fromClause joins 1-3 FROM items; it returns the clause and the columns it brings in scope.
// Only the last join may be a comma: a later ON could not see past it.
func (g *gen) fromClause(depth int) (string, []expr) {
	from, cols := g.fromItem(depth)
	n := []int{1, 1, 1, 2, 2, 2, 3}[g.pick(7)]
	for i := 1; i < n; i++ {
		item, right := g.fromItem(depth)
		g.tag("joins")
		jt := g.oneOf("JOIN", "INNER JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", ",", "LEFT OUTER JOIN", "FULL OUTER JOIN")
		if strings.ContainsAny(jt[:1], "LRF") {
			g.tag("outer joins")
		}
		switch {
		case jt == "," && i == n-1:
			from += ", " + item
		case jt == "," || jt == "CROSS JOIN":
			from += " CROSS JOIN " + item
		default:
			from += " " + jt + " " + item + " ON " + g.joinCondition(cols, right)
		}
		cols = append(cols, right...)
	}
	return from, cols
}

// joinCondition is an equality of two columns of a family, when there are such, and (or
// instead) a predicate over both sides.
func (g *gen) joinCondition(left, right []expr) string {
	var on []string
	for range 6 {
		l := left[g.pick(len(left))]
		if rs := ofFam(right, l.k.fam()); len(rs) > 0 {
			on = append(on, "("+l.sql+" = "+rs[g.pick(len(rs))].sql+")")
			break
		}
	}
	if len(on) == 0 || g.chance(35) {
		on = append(on, g.expr(fBool, &scope{cols: append(slices.Clone(left), right...)}, 2).sql)
	}
	return strings.Join(on, g.oneOf(" AND ", " AND ", " OR "))
}

// fromItem is a table or a derived table, under a fresh alias.
func (g *gen) fromItem(depth int) (string, []expr) {
	a := g.alias()
	if depth > 0 && g.chance(20) {
		g.tag("derived tables")
		q := g.selectQuery(depth-1, nil, g.chance(30))
		return "(" + q.sql + ") AS " + a, outputCols(a, q.kinds)
	}
	return g.tableItem(g.tables[g.pick(len(g.tables))], a)
}

func (g *gen) tableItem(tb *table, alias string) (string, []expr) {
	cols := make([]expr, len(tb.cols))
	for i, c := range tb.cols {
		cols[i] = expr{alias + "." + c.name, c.k}
	}
	return tb.name + " AS " + alias, cols
}

// selectQuery is a query nested up to depth levels: a SELECT whose output families are want,
// or, when want is nil, of random families, sometimes a set operation, sometimes filtered on
// its output from an enclosing SELECT. top allows ORDER BY ... LIMIT.
func (g *gen) selectQuery(depth int, want []fam, top bool) query {
	q := query{}
	if want == nil && depth > 0 && g.chance(15) {
		q = g.setQuery(depth)
	} else {
		q = g.plainQuery(depth, want)
	}
	if want == nil && g.chance(12) {
		a := g.alias()
		out := outputCols(a, q.kinds)
		list, _ := selectList(out)
		q.sql = "SELECT " + list + " FROM (" + q.sql + ") AS " + a + " WHERE " + g.expr(fBool, &scope{cols: out}, 2).sql
	}
	if top && g.chance(30) {
		g.orderLimit(&q)
	}
	return q
}

// plainQuery is SELECT [DISTINCT] ... FROM ... [WHERE], its select list sometimes with window
// functions; or, grouped, SELECT ... FROM ... [WHERE] GROUP BY 0-2 keys (columns or
// expressions of them) [HAVING], whose select list and HAVING use keys, aggregates and (at
// depth > 0) subqueries. A set operation's branch (want set) has no window functions, and its
// BIGINT columns are cast to DOUBLE (see unify).
func (g *gen) plainQuery(depth int, want []fam) query {
	from, cols := g.fromClause(depth)
	sc := &scope{cols: cols, subq: depth > 0}
	if g.chance(65) {
		from += " WHERE " + g.expr(fBool, sc, 3).sql
	}
	branch := want != nil
	if !branch {
		want = g.fams(4)
	}
	grouped, keys, tail := g.chance(35), []expr(nil), ""
	if grouped {
		g.tag("GROUP BY")
		for range g.pick(3) {
			k := cols[g.pick(len(cols))]
			if tags := maps.Clone(g.tags); g.chance(20) {
				if e := g.expr(g.anyFam(), &scope{cols: cols}, 1); hasColumnRE.MatchString(e.sql) {
					g.tag("GROUP BY expressions")
					k = e
				} else {
					g.tags = tags // not a key: its features are not the query's
				}
			}
			keys = append(keys, k)
		}
		sc = &scope{cols: keys, aggOver: cols, subq: depth > 0 && g.chance(30)}
	}
	sel := make([]expr, len(want))
	windows := !grouped && !branch && g.chance(30)
	g.totalOrder = false
	for i, f := range want {
		switch ks := ofFam(keys, f); {
		case windows && (i == len(want)-1 || g.chance(40)):
			sel[i] = g.windowFunc(cols)
		case !grouped:
			sel[i] = g.expr(f, sc, 3)
		case i == 0 && len(keys) == 0: // HAVING needs GROUP BY or an aggregate
			sel[i] = g.aggregate(f, cols)
		case len(ks) > 0 && g.chance(30):
			sel[i] = ks[g.pick(len(ks))]
		case g.chance(60):
			sel[i] = g.aggregate(f, cols)
		default:
			sel[i] = g.expr(f, sc, 2)
		}
	}
	if len(keys) > 0 {
		tail = " GROUP BY " + strings.Join(sqls(keys), ", ")
	}
	if grouped && g.chance(40) {
		g.tag("HAVING")
		tail += " HAVING " + g.expr(fBool, sc, 2).sql
	}
	for i, e := range sel {
		if e.k == kBig && branch {
			sel[i] = expr{"CAST(" + e.sql + " AS DOUBLE)", kDbl} // see unify
		}
	}
	list, kinds := selectList(sel)
	if !grouped && g.chance(20) {
		g.tag("DISTINCT")
		list = "DISTINCT " + list
	}
	return query{sql: "SELECT " + list + " FROM " + from + tail, kinds: kinds}
}

// setQuery combines 2-3 SELECTs of the same families with UNION, INTERSECT and EXCEPT [ALL].
func (g *gen) setQuery(depth int) query {
	g.tag("set operations")
	g.inSetop++
	defer func() { g.inSetop-- }()
	want := g.fams(3)
	q := g.selectQuery(depth-1, want, false)
	for range 1 + g.pick(2) {
		op := g.oneOf("UNION", "UNION ALL", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL")
		b := g.selectQuery(depth-1, want, false)
		for i, k := range b.kinds {
			q.kinds[i] = max(q.kinds[i], k)
		}
		if g.chance(30) {
			q.sql = "(" + q.sql + ") " + op + " (" + b.sql + ")"
		} else {
			q.sql += " " + op + " " + b.sql
		}
	}
	return q
}

// windowFunc is a window function over cols. Those whose result depends on the order among
// peers (ROW_NUMBER, LAG, LEAD, FIRST_VALUE, LAST_VALUE) order by all columns, so that equal
// rows are interchangeable.
func (g *gen) windowFunc(cols []expr) expr {
	g.tag("window functions")
	sc := &scope{cols: cols}
	var part []string
	all := sqls(cols)
	for range g.pick(3) {
		if c := g.oneOf(all...); !slices.Contains(part, c) {
			part = append(part, c)
		}
	}
	some := g.orderBy([]string{g.oneOf(all...), g.oneOf(all...)}[:1+g.pick(2)])
	var fn, order string
	k := kBig
	switch x := g.pick(12); {
	case x == 0 && !g.totalOrder:
		g.totalOrder, fn, order = true, "ROW_NUMBER()", g.orderBy(all)
	case x < 3 && !g.totalOrder:
		a := g.expr(g.anyFam(), sc, 1)
		args, def := a.sql+g.oneOf("", "", ", 0", ", 1", ", 2"), g.literal(a.k.fam()).sql
		if a.k.fam() == fNum {
			def = "0" // held by any numeric type
		}
		if args != a.sql && g.chance(50) {
			args += ", " + def
		}
		g.totalOrder, fn, k, order = true, g.oneOf("LAG", "LEAD")+"("+args+")", a.k, g.orderBy(all)
	case x < 4 && !g.totalOrder:
		a := g.expr(g.anyFam(), sc, 1)
		g.totalOrder, fn, k, order = true, g.oneOf("FIRST_VALUE", "LAST_VALUE")+"("+a.sql+")", a.k, g.orderBy(all)
	case x < 6:
		fn, order = g.oneOf("RANK()", "DENSE_RANK()"), some
	case x < 8:
		a := g.expr(fNum, sc, 1)
		fn, k, order = "SUM("+a.sql+")", max(a.k, kBig), g.oneOf("", some, some)
		if g.chance(50) {
			fn, k = "AVG("+a.sql+")", kDbl
		}
	default:
		a := g.expr(g.anyFam(), sc, 1)
		fn, order = g.oneOf("COUNT(*)", "COUNT("+a.sql+")", "MIN("+a.sql+")", "MAX("+a.sql+")"), g.oneOf("", some, some)
		if !strings.HasPrefix(fn, "COUNT") {
			k = a.k
		}
	}
	if len(part) > 0 {
		order = " PARTITION BY " + strings.Join(part, ", ") + order
	}
	return expr{fn + " OVER (" + strings.TrimSpace(order) + ")", k}
}

// subquery is a subquery's FROM (one table) and WHERE, and the scope inside it: it may
// correlate with sc's columns, but not with a grouping expression's nor with sc's outer ones.
func (g *gen) subquery(sc *scope) (string, *scope) {
	g.tag("subqueries")
	in := &scope{}
	for _, c := range sc.cols {
		if columnRE.MatchString(c.sql) {
			in.outer = append(in.outer, c)
		}
	}
	from, cols := g.tableItem(g.tables[g.pick(len(g.tables))], g.alias())
	in.cols = cols
	var where []string
	if c := cols[g.pick(len(cols))]; g.chance(60) {
		if os := ofFam(in.outer, c.k.fam()); len(os) > 0 {
			g.tag("correlated subqueries")
			where = append(where, "("+c.sql+g.choose(" {=|=|<|>=|<>} ")+os[g.pick(len(os))].sql+")")
		}
	}
	if g.chance(50) {
		where = append(where, g.expr(fBool, in, 2).sql)
	}
	if len(where) > 0 {
		from += " WHERE " + strings.Join(where, " AND ")
	}
	return " FROM " + from, in
}

// scalarSub is a one-row subquery: an aggregate, or the first row of a total order.
func (g *gen) scalarSub(f fam, sc *scope) expr {
	from, in := g.subquery(sc)
	if vs := ofFam(in.cols, f); len(vs) > 0 && g.chance(30) {
		v := vs[g.pick(len(vs))]
		return expr{"(SELECT " + v.sql + from + g.orderBy(sqls(in.cols)) + " LIMIT 1)", v.k}
	}
	a := g.aggregate(f, in.cols)
	return expr{"(SELECT " + a.sql + from + ")", a.k}
}

// subqueryPredicate is a comparison with a scalar subquery, [NOT] EXISTS, ANY/SOME/ALL or
// [NOT] IN, the last maybe of the first rows of a total order.
func (g *gen) subqueryPredicate(sc *scope) expr {
	if g.chance(25) {
		f := []fam{fNum, fNum, fStr, fDate}[g.pick(4)]
		return expr{"(" + g.expr(f, sc, 1).sql + g.choose(" {=|<>|<|<=|>|>=} ") + g.scalarSub(f, sc).sql + ")", kBool}
	}
	from, in := g.subquery(sc)
	if g.chance(33) {
		return expr{"(" + g.oneOf("", "NOT ") + "EXISTS (SELECT 1" + from + "))", kBool}
	}
	v := in.cols[g.pick(len(in.cols))]
	if g.chance(30) {
		v = g.expr(v.k.fam(), in, 1)
	}
	lhs := g.expr(v.k.fam(), sc, 1).sql
	if g.chance(30) {
		g.tag("ANY and ALL")
		return expr{"(" + lhs + g.choose(" {=|<>|<|<=|>|>=} {ANY|SOME|ALL} (SELECT ") + v.sql + from + "))", kBool}
	}
	if g.chance(15) {
		from += g.orderBy(sqls(in.cols)) + fmt.Sprintf(" LIMIT %d", g.pick(4))
	}
	return expr{"(" + lhs + " " + g.oneOf("", "NOT ") + "IN (SELECT " + v.sql + from + "))", kBool}
}

// orderBy orders by all of names, in a random order and random directions.
func (g *gen) orderBy(names []string) string {
	keys := make([]string, len(names))
	for i, j := range g.r.Perm(len(names)) {
		keys[i] = names[j] + g.choose("{||| ASC| DESC| DESC}{|||| NULLS FIRST| NULLS LAST}")
	}
	return " ORDER BY " + strings.Join(keys, ", ")
}

// orderLimit orders q by all its output columns, then takes a LIMIT [OFFSET].
func (g *gen) orderLimit(q *query) {
	g.tag("ORDER BY and LIMIT")
	names := make([]string, len(q.kinds))
	for i := range names {
		names[i] = fmt.Sprintf("o%d", i)
	}
	q.sql += g.orderBy(names) + fmt.Sprintf(" LIMIT %d", g.pick(8)) + g.oneOf("", "", fmt.Sprintf(" OFFSET %d", g.pick(5)))
	q.ordered = true
}

// query is the next query of the seed, nested up to two levels.
func (g *gen) query() query {
	g.tags, g.nAlias = map[string]bool{}, 0
	return g.selectQuery(2, nil, true)
}

// openEngines puts the tables into a fresh streamsql and a fresh DuckDB.
