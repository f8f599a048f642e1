package sql

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Error is a user error with a 1-based position in the user's text.
type Error struct {
	Line, Col int
	Msg       string
}

// Error formats the error as "<Msg> at line L, column C".
func (e *Error) Error() string {
	return fmt.Sprintf("%s at line %d, column %d", e.Msg, e.Line, e.Col)
}

// Pos is a 1-based position in the user's text; Col counts characters (runes).
type Pos struct{ Line, Col int }

// Kind says what a Stmt is and which of its fields are set.
type Kind int

const (
	KindTiDB         Kind = iota // any statement TiDB parses natively (SELECT, INSERT, UPDATE, DELETE, DROP TABLE, SHOW, DESCRIBE/EXPLAIN, ...): Node holds it
	KindCreateTable              // CREATE TABLE: Node is *ast.CreateTableStmt; Watermark, Options filled
	KindCreateView               // CREATE [MATERIALIZED] VIEW: Node is the query (*ast.SelectStmt or *ast.SetOprStmt; a column list wraps it, see doc.go); Name, IfNotExists, Materialized, Options, EmitOnClose
	KindDropView                 // DROP MATERIALIZED VIEW [IF EXISTS] name[, ...]: Names (Name the first), IfExists, Materialized (DROP VIEW is TiDB's *ast.DropTableStmt with IsView)
	KindCreateSink               // CREATE SINK [IF NOT EXISTS] name FROM source [WITH (...)]: Name, From, IfNotExists, Options
	KindDropSink                 // DROP SINK [IF EXISTS] name: Name, IfExists
	KindSubscribe                // SUBSCRIBE [TO] name [WITH (...)]: Name, Options
	KindFlush                    // FLUSH
	KindCheckpoint               // CHECKPOINT
	KindBackup                   // BACKUP TO 'dir': Path
	KindSet                      // SET 'k' = 'v' | SET k = v | SET k TO v: Options (exactly one)
	KindShowViews                // SHOW [MATERIALIZED] VIEWS: Materialized
	KindShowSinks                // SHOW SINKS
	KindShowCreate               // SHOW CREATE {TABLE | [MATERIALIZED] VIEW | SINK} Name: From is the kind word
	KindInsertValues             // INSERT INTO Name [(Columns)] VALUES Rows of plain literals (no Node: the fast path)
)

// Option is one `k = v` of a WITH (...) list or a SET. Key is unquoted and
// lowercased; Value is unquoted, otherwise as written. Pos is the key's position.
type Option struct {
	Key, Value string
	Pos        Pos
}

// Watermark is a CREATE TABLE's `WATERMARK FOR Column AS Expr`.
type Watermark struct {
	Column string       // WATERMARK FOR <Column>
	Expr   ast.ExprNode // AS <expr>, parsed by TiDB (carriers inside, e.g. __sx_interval)
	Pos    Pos          // of the WATERMARK keyword
	// Stmt is the expression as a statement of its own (Node the carrier it was parsed
	// from): bind Expr with it, so that errors point into the user's text.
	Stmt *Stmt
}

// WindowKind is the window table function of a WindowTVF.
type WindowKind int

const (
	Tumble WindowKind = iota
	Hop
	Session
	Cumulate
)

var windowKindNames = [...]string{"TUMBLE", "HOP", "SESSION", "CUMULATE"}

func (k WindowKind) String() string { return windowKindNames[k] }

// WindowTVF is a `TABLE(TUMBLE|HOP|SESSION|CUMULATE(TABLE t, DESCRIPTOR(c), ...))`
// in FROM; the carrier table name __sx_tvf_<n> stands for it.
type WindowTVF struct {
	Kind        WindowKind
	Table       string   // TABLE t (unqualified name, as written)
	TablePos    Pos      // of the name t
	PartitionBy []string // SESSION(TABLE t PARTITION BY a, b, ...)
	TimeCol     string   // DESCRIPTOR(c)
	Args        []int64  // intervals in ms, as written: TUMBLE(size) HOP(slide, size) SESSION(gap) CUMULATE(step, size)
	Pos         Pos      // of the TABLE( keyword
}

// Stmt is one parsed statement.
type Stmt struct {
	Kind             Kind
	Text             string       // the user's text of this statement, trimmed, without the ';'
	Node             ast.StmtNode // see Kind; nil for kinds that need none
	Name, From, Path string
	IfNotExists      bool
	IfExists         bool
	EmitOnClose      bool // EMIT ON WINDOW CLOSE (EMIT ON UPDATE, the default, leaves it false)
	Materialized     bool // the statement says MATERIALIZED: CREATE, DROP and SHOW of materialized views (CREATE VIEW: a logical view)
	Explain          bool // KindCreateView: EXPLAIN CREATE MATERIALIZED VIEW (plan only)
	Options          []Option
	Watermark        *Watermark
	Windows          map[string]*WindowTVF // carrier table name (ast.TableName.Name.O) -> the TVF it stands for
	ColumnLists      map[string][]string   // derived table alias (lower case) -> its column list (FROM (SELECT ...) t(a, b))
	Columns          []string              // KindInsertValues: the column list, if given
	Names            []string              // KindDropView: the views named
	Rows             [][]Literal           // KindInsertValues: the rows
	Params           int                   // KindInsertValues: the number of ? among Rows
	Pos              Pos                   // position of the statement's first token

	src  *source // the whole text given to Parse
	toks []token // this statement's tokens
	cmap *posMap // carrier offsets of Node -> user offsets (nil when Node is nil)
}

// ErrorAt returns a *Error located at the first identifier token in this
// statement whose name equals name case-insensitively (bare or backquoted),
// or at the statement start if there is none. For binder errors such as
// "unknown column x".
func (s *Stmt) ErrorAt(name string, format string, args ...any) *Error {
	return s.ErrorAtPos(s.PosOfName(name), format, args...)
}

// PosOfName is the position of the first identifier token of this statement equal to name
// (see ErrorAt), or the statement's position.
func (s *Stmt) PosOfName(name string) Pos { return s.PosOfNthName(name, 0) }

// PosOfNthName is PosOfName of the occurrence of name after n others (the second column of
// a name), or of the last one when there are fewer.
func (s *Stmt) PosOfNthName(name string, n int) Pos {
	parts := strings.Split(name, ".") // a qualified name (system.views) is found part by part
	at := s.Pos
	for i := range s.toks {
		if s.namesAt(i, parts) {
			if at = s.src.pos(s.toks[i].off); n == 0 {
				break
			}
			n--
		}
	}
	return at
}

// ErrorAtBefore is ErrorAt at the first occurrence of name followed by the word next (the
// table of `t FOR SYSTEM_TIME`, when t also appears elsewhere), else at the first of name.
func (s *Stmt) ErrorAtBefore(name, next string, format string, args ...any) *Error {
	parts := strings.Split(name, ".")
	for i := range s.toks {
		if j := i + 2*len(parts) - 1; s.namesAt(i, parts) && j < len(s.toks) && s.toks[j].is(next) {
			return errAtOff(s.src.text, s.toks[i].off, format, args...)
		}
	}
	return s.ErrorAt(name, format, args...)
}

// namesAt reports whether the tokens from i spell the name parts joined by dots.
func (s *Stmt) namesAt(i int, parts []string) bool {
	for k, p := range parts {
		j := i + 2*k
		if j >= len(s.toks) || !s.toks[j].isName() || !strings.EqualFold(s.toks[j].val, p) {
			return false
		}
		if k > 0 && s.toks[j-1].raw != "." {
			return false
		}
	}
	return true
}

// PosAfter returns the position of the first token spelled raw (case-insensitively; ""
// for the very next token) after the first occurrence of the keywords in a row — the item
// "5" of ORDER BY, the SELECT of an INSERT — or the statement's position when there is none.
// It finds places the parser records no offset for.
func (s *Stmt) PosAfter(keywords []string, raw string) Pos {
	for i := range s.toks {
		k := 0
		for k < len(keywords) && i+k < len(s.toks) && s.toks[i+k].is(keywords[k]) {
			k++
		}
		if k < len(keywords) {
			continue
		}
		for j := i + k; j < len(s.toks); j++ {
			if raw == "" || strings.EqualFold(s.toks[j].raw, raw) {
				return s.src.pos(s.toks[j].off)
			}
		}
		break
	}
	return s.Pos
}

// KeywordPos returns the position of the first token that is one of words, or the
// statement's position when there is none: a clause the parser records no offset for.
func (s *Stmt) KeywordPos(words ...string) Pos {
	for _, t := range s.toks {
		for _, w := range words {
			if t.is(w) {
				return s.src.pos(t.off)
			}
		}
	}
	return s.Pos
}

// ErrorAtPos returns a *Error at p.
func (s *Stmt) ErrorAtPos(p Pos, format string, args ...any) *Error {
	return &Error{Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...)}
}

// PosOf returns the user position of an AST node of Node from its
// OriginTextPosition (carrier offset). TiDB records offsets for expressions
// (columns, function calls, literals, operators) but not for tables or joins:
// those report 0, which maps to the start of the statement (KindCreateView:
// the start of the query). For Watermark.Expr, use Watermark.Stmt's.
func (s *Stmt) PosOf(n ast.Node) Pos {
	if s.cmap == nil || n == nil {
		return s.Pos
	}
	return s.src.pos(s.cmap.user(n.OriginTextPosition()))
}

// UserOffset maps an offset in Node's text (an ast node's OriginTextPosition, a
// placeholder's Offset) to the offset of the user's text it stands for.
func (s *Stmt) UserOffset(off int) int {
	if s.cmap == nil {
		return off
	}
	return s.cmap.user(off)
}

// UserText returns the user's text for the carrier text [off, off+n) of Node (a select
// field's expression, say), trimmed; "" when it cannot be mapped.
func (s *Stmt) UserText(off, n int) string {
	if s == nil || s.cmap == nil || n <= 0 {
		return ""
	}
	u0, u1 := s.cmap.user(off), s.cmap.userAfter(off+n)
	if u0 < 0 || u1 > len(s.src.text) || u1 <= u0 {
		return ""
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s.src.text[u0:u1]), ","))
}

// NullsOrder recognizes the carrier of an ORDER BY item written with NULLS FIRST or NULLS
// LAST (see wraps) and returns the item's expression and whether NULLs sort first.
func NullsOrder(e ast.ExprNode) (x ast.ExprNode, nullsFirst, ok bool) {
	fc, isCall := e.(*ast.FuncCallExpr)
	if !isCall || len(fc.Args) != 1 || fc.FnName.L != "__sx_nulls_first" && fc.FnName.L != "__sx_nulls_last" {
		return e, false, false
	}
	return fc.Args[0], fc.FnName.L == "__sx_nulls_first", true
}

// IntervalMillis recognizes the interval carrier __sx_interval(<ms>) (see
// doc.go) and returns the interval in milliseconds.
func IntervalMillis(e ast.ExprNode) (int64, bool) {
	fc, ok := e.(*ast.FuncCallExpr)
	if !ok || fc.FnName.L != "__sx_interval" || len(fc.Args) != 1 {
		return 0, false
	}
	neg := false
	arg := fc.Args[0]
	if u, ok := arg.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		neg, arg = true, u.V
	}
	v, ok := arg.(*test_driver.ValueExpr)
	if !ok {
		return 0, false
	}
	var ms int64
	switch x := v.GetValue().(type) {
	case int64:
		ms = x
	case uint64:
		ms = int64(x)
	default:
		return 0, false
	}
	if neg {
		ms = -ms
	}
	return ms, true
}

// GroupingSets recognizes the carrier of a GROUP BY's grouping sets, its last item
// __sx_grouping_sets('[[0,1],[0],[]]'), and returns the sets: each the indexes of the GROUP BY
// items (before the carrier) it groups by.
func GroupingSets(e ast.ExprNode) ([][]int, bool) {
	fc, ok := e.(*ast.FuncCallExpr)
	if !ok || fc.FnName.L != "__sx_grouping_sets" || len(fc.Args) != 1 {
		return nil, false
	}
	v, ok := fc.Args[0].(*test_driver.ValueExpr)
	if !ok {
		return nil, false
	}
	text, ok := v.GetValue().(string)
	var sets [][]int
	if !ok || json.Unmarshal([]byte(text), &sets) != nil {
		return nil, false
	}
	return sets, true
}

// CastOf recognizes the cast carriers __sx_cast(e, 'TYPE') and
// __sx_try_cast(e, 'TYPE') and returns e, the normalized type text and
// whether it is a TRY_CAST.
func CastOf(e ast.ExprNode) (arg ast.ExprNode, typ string, try bool, ok bool) {
	return textCarrier(e, "__sx_cast", "__sx_try_cast")
}

// textCarrier recognizes a carrier call first(e, 'text') or second(e, 'text') and returns
// e, the text and whether it is second.
func textCarrier(e ast.ExprNode, first, second string) (arg ast.ExprNode, text string, isSecond bool, ok bool) {
	fc, isFn := e.(*ast.FuncCallExpr)
	if !isFn || len(fc.Args) != 2 || (fc.FnName.L != first && fc.FnName.L != second) {
		return nil, "", false, false
	}
	v, isVal := fc.Args[1].(*test_driver.ValueExpr)
	if !isVal {
		return nil, "", false, false
	}
	s, isStr := v.GetValue().(string)
	if !isStr {
		return nil, "", false, false
	}
	return fc.Args[0], s, fc.FnName.L == second, true
}

// FloorToOf recognizes the carrier of Flink's FLOOR(e TO unit) and CEIL(e TO unit): the
// operand, the unit as written in upper case and whether it rounds up.
func FloorToOf(e ast.ExprNode) (arg ast.ExprNode, unit string, ceil bool, ok bool) {
	return textCarrier(e, "__sx_floor", "__sx_ceil")
}

// Parse splits text on top-level ';' (not inside strings, comments or quoted
// identifiers) and parses each non-empty statement. It returns the first
// error, always a *Error positioned in text. Comments (-- , #, /* */) are
// allowed anywhere. Parse never panics.
func Parse(text string) (stmts []*Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("internal parser error: %v", r)}
		}
	}()
	if !utf8.ValidString(text) {
		off := 0
		for off < len(text) {
			r, sz := utf8.DecodeRuneInString(text[off:])
			if r == utf8.RuneError && sz == 1 {
				break
			}
			off += sz
		}
		return nil, errAtOff(text, off, "invalid UTF-8 in SQL text")
	}
	toks, terr := tokenize(text)
	if terr != nil {
		return nil, terr
	}
	src := &source{text: text}
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !toks[i].op(";") {
			continue
		}
		if i > start {
			st, e := parseStmt(src, toks[start:i])
			if e != nil {
				return nil, e
			}
			stmts = append(stmts, st)
		}
		start = i + 1
	}
	return stmts, nil
}

// tidbParse parses one carrier statement with TiDB, turning its errors and
// panics into *Errors located in the user's text through m. Each parse has its own parser:
// a TiDB parser reuses the memory of the nodes it returned for its next parse, and a
// statement's nodes live on (prepared statements, views) and are read concurrently.
func tidbParse(src, carrier string, m *posMap) (node ast.StmtNode, err *Error) {
	defer func() {
		if r := recover(); r != nil {
			node, err = nil, errAtOff(src, m.user(0), "syntax error")
		}
	}()
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeANSIQuotes | mysql.ModeNoBackslashEscapes)
	nodes, _, perr := p.Parse(carrier, "", "")
	if perr != nil {
		return nil, mapTiDBError(src, carrier, m, perr.Error())
	}
	if len(nodes) != 1 {
		return nil, errAtOff(src, m.user(0), "expected exactly one statement")
	}
	nodes[0].Accept(aggregateCalls{}) // a statement stays itself: only its expressions change
	return nodes[0], nil
}

// aggregateCalls turns the carrier calls of rewriteAggCall into the aggregates they stand
// for: `__sx_agg_f(args)` into *ast.AggregateFuncExpr{F: "f", Args: args}, Distinct for
// `__sx_agg_distinct_f`, at the call's position.
type aggregateCalls struct{}

func (aggregateCalls) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (aggregateCalls) Leave(n ast.Node) (ast.Node, bool) {
	fc, ok := n.(*ast.FuncCallExpr)
	if !ok || !strings.HasPrefix(fc.FnName.L, aggCarrier) {
		return n, true
	}
	name := strings.TrimPrefix(fc.FnName.L, aggCarrier)
	agg := &ast.AggregateFuncExpr{F: strings.TrimPrefix(name, aggDistinct), Args: fc.Args, Distinct: strings.HasPrefix(name, aggDistinct)}
	agg.SetOriginTextPosition(fc.OriginTextPosition())
	agg.SetText(nil, fc.Text())
	return agg, true
}

// mapTiDBError turns TiDB's `line L column C near "<carrier rest>"...` into a
// syntax error at the corresponding place of the user's text.
func mapTiDBError(src, carrier string, m *posMap, msg string) *Error {
	const near = ` near "`
	i := strings.Index(msg, near)
	if i < 0 || !strings.HasPrefix(msg, "line ") {
		msg = strings.TrimSpace(msg)
		if j := strings.Index(msg, "]"); strings.HasPrefix(msg, "[") && j > 0 {
			msg = strings.TrimSpace(msg[j+1:])
		}
		if strings.Contains(strings.ToLower(msg), "__sx_") || msg == "" {
			msg = "syntax error"
		}
		return errAtOff(src, m.user(0), "%s", msg)
	}
	rest := msg[i+len(near):]
	// rest is carrier[off:] (at most 2048 bytes), '"', a message, and maybe
	// "(total length N)". Try the usual shapes first, then search.
	isAt := func(c int) bool {
		if c < 0 || c > len(carrier) {
			return false
		}
		v := carrier[c:]
		if len(v) > 2048 {
			v = v[:2048]
		}
		return strings.HasPrefix(rest, v+`"`)
	}
	off := -1
	if j := strings.LastIndex(rest, "(total length "); j >= 0 {
		if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest[j+len("(total length "):]), ")")); err == nil && isAt(len(carrier)-n) {
			off = len(carrier) - n
		}
	}
	if c := len(carrier) - (len(rest) - len(`" `)); off < 0 && isAt(c) {
		off = c
	}
	for c := 0; off < 0 && c <= len(carrier); c++ {
		if isAt(c) {
			off = c
		}
	}
	if off < 0 {
		off = len(carrier)
	}
	u := m.user(off)
	if off >= len(carrier) || u >= m.userEnd {
		return errAtOff(src, m.userEnd, "syntax error: unexpected end of %s", m.what)
	}
	return errAtOff(src, u, "syntax error near %q", snippet(src[u:m.userEnd]))
}

// snippet shortens user text for an error message: white space collapsed,
// at most 40 characters.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "..."
	}
	return s
}

func errAtOff(text string, off int, format string, args ...any) *Error {
	p := posAt(text, off)
	return &Error{Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...)}
}
