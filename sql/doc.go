// Package sql turns the user's SQL text into parsed statements.
//
// Invariant: users never see carrier text. Every *Error this package returns
// (and every *Error made with Stmt.ErrorAt / ErrorAtPos / PosOf) is positioned
// in the user's text (1-based line and column, columns in characters, counted
// from the start of the whole text given to Parse), and no message shows
// carrier text or a __sx_ name the user did not write.
//
// # Pipeline
//
//  1. A tokenizer of our own (token.go): identifiers, `backquoted` and "double
//     quoted" identifiers, '...' strings (doubled quotes; a backslash is an
//     ordinary character, as in standard SQL),
//     numbers, operators, ? and comments (-- , #, /* */; comments are dropped,
//     so TiDB never interprets /*! ... */ or hints).
//  2. Statements are split on ';' tokens.
//  3. A front pass over the tokens (rewrite.go, stmts.go) rewrites the
//     Flink-style clauses TiDB rejects into "carrier" forms it accepts, keeps
//     every sub-expression in place, records the streaming meaning in Stmt
//     fields, and keeps a position map (carrier offset -> user offset).
//  4. github.com/pingcap/tidb/pkg/parser (SQL modes PIPES_AS_CONCAT, ANSI_QUOTES
//     and NO_BACKSLASH_ESCAPES, literals
//     from parser/test_driver) parses the carrier. Its errors (`line L column C
//     near "..."`) are mapped back: `syntax error near "<user text>" at line L,
//     column C` or `syntax error: unexpected end of statement at ...`. TiDB
//     panics are recovered into *Error; Parse never panics.
//
// The prefix __sx_ is reserved: a user identifier starting with it is an error.
// Carrier names are emitted backquoted (`__sx_interval`(5000)): TiDB's lexer
// looks up every bare identifier starting with '_' as a charset introducer,
// building a stack-capturing error each time; the AST is the same (FnName.L
// "__sx_interval", TableName.Name.O "__sx_tvf_0").
//
// # What the binder sees, carrier by carrier
//
// Interval literals. Every `INTERVAL <n|'n'> <unit>` (units MILLISECOND,
// SECOND, MINUTE, HOUR, DAY, WEEK, singular or plural, any case; values may be
// signed or decimal if the result is whole milliseconds) becomes
//
//	*ast.FuncCallExpr{FnName.L: "__sx_interval", Args: [*test_driver.ValueExpr (int64 ms)]}
//
// and, for a negative interval, Args[0] is *ast.UnaryOperationExpr{Op:
// opcode.Minus, V: *test_driver.ValueExpr}. Use IntervalMillis(e). TiDB's own
// interval arithmetic never appears: `ts - INTERVAL '5' SECOND` is
// *ast.BinaryOperationExpr{Op: opcode.Minus, L: ts, R: __sx_interval(5000)},
// and DATE_ADD / DATE_SUB / ADDDATE / SUBDATE are emitted as generic calls:
// `DATE_ADD(ts, INTERVAL 1 DAY)` is *ast.FuncCallExpr{FnName.L: "date_add",
// Args: [ts, __sx_interval(86400000)]} (no *ast.TimeUnitExpr).
// `INTERVAL(a, b, ...)` (MySQL's function) is left alone. In a window frame's
// bound (`RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW`), where TiDB
// takes only `INTERVAL expr unit`, the interval is `INTERVAL __sx_interval(ms)
// SECOND`: the *ast.FrameBound's Expr is the carrier and its Unit means nothing. Also
// PostgreSQL's form with the units in the string, `INTERVAL '1 day 2 hours'`.
//
// Grouping sets. A GROUP BY whose items include GROUPING SETS (...), ROLLUP (...) or
// CUBE (...) becomes `GROUP BY e1, e2, ..., __sx_grouping_sets('[[0,1],[0],[]]')`: every
// distinct grouping expression once, in the order they first appear, then a carrier whose
// text lists the grouping sets (the cross product of the items' sets) as indexes of those
// expressions. Use GroupingSets(e) on the last GROUP BY item.
//
// Aggregates TiDB does not know. A call of BOOL_AND, BOOL_OR, EVERY, STRING_AGG, LISTAGG or
// ANY_VALUE, and of FIRST_VALUE or LAST_VALUE without OVER, `f([DISTINCT] args)`, is emitted
// as the plain call `__sx_agg_f(args)` (`__sx_agg_distinct_f`) and, once parsed, replaced by
//
//	*ast.AggregateFuncExpr{F: "f", Args: args, Distinct: ...}
//
// at the call's position: the binder sees no carrier. An ORDER BY among their arguments, and
// OVER after any but FIRST_VALUE and LAST_VALUE, are errors of the front pass.
//
// CREATE [MATERIALIZED] VIEW v (a, b) AS query. The column list makes Node the query
// `SELECT * FROM (query) __sx_view_columns` with ColumnLists["__sx_view_columns"] =
// [a, b] (ViewColumns), as a derived table's column list is; a query of VALUES rows is
// `SELECT * FROM (VALUES ...) AS __sx_values`, as a VALUES statement is.
//
// CREATE TABLE (Kind KindCreateTable, Node *ast.CreateTableStmt).
// `WATERMARK FOR c AS e` is removed from the element list and becomes
// Stmt.Watermark{Column: "c", Expr: e}: e is a stand-alone ast.ExprNode parsed
// by TiDB (intervals inside are carriers); TiDB did not check that c exists.
// `NOT ENFORCED` is dropped: the key is an *ast.Constraint{Tp:
// ast.ConstraintPrimaryKey} or a column option ast.ColumnOptionPrimaryKey.
// `VARCHAR` without a length and `STRING` become TEXT: Tp mysql.TypeBlob,
// flen -1 (VARCHAR(n) stays mysql.TypeVarchar). BOOLEAN/BOOL is
// mysql.TypeTiny with flen 1; INT mysql.TypeLong; BIGINT mysql.TypeLonglong;
// DOUBLE mysql.TypeDouble; DECIMAL(p,s) mysql.TypeNewDecimal (flen p,
// decimal s); DATE mysql.TypeDate; TIMESTAMP(3) mysql.TypeTimestamp with
// decimal 3. `WITH (k = v, ...)` after the element list becomes Stmt.Options
// (keys lowercased, quotes removed).
//
// Window TVFs. `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))`
// (also HOP, SESSION [PARTITION BY], CUMULATE) becomes a plain table name:
//
//	*ast.TableSource{Source: *ast.TableName{Name.O: "__sx_tvf_0"}, AsName: <user alias or "">}
//
// and Stmt.Windows["__sx_tvf_0"] describes the window (n counts from 0 per
// statement). Window arguments are interval literals only, in milliseconds.
//
// Temporal joins. `t FOR SYSTEM_TIME AS OF e [AS] a` becomes TiDB's stale
// read `t AS a AS OF TIMESTAMP e`:
//
//	*ast.TableSource{AsName: "a", Source: *ast.TableName{Name: t, AsOf: &ast.AsOfClause{TsExpr: e}}}
//
// A user-written `t AS OF TIMESTAMP e` gives the same AST and means the same.
// `PROCTIME()` is a generic *ast.FuncCallExpr{FnName.L: "proctime"}.
//
// FULL [OUTER] JOIN becomes STRAIGHT_JOIN: *ast.Join{Tp: 0 (no JoinType;
// a plain JOIN is ast.CrossJoin), StraightJoin: true, On: ..., Using: ...}. A user-written STRAIGHT_JOIN is an
// error, so StraightJoin always means FULL OUTER JOIN.
//
// CAST. Every `CAST(e AS T)` becomes *ast.FuncCallExpr{FnName.L: "__sx_cast",
// Args: [e, *test_driver.ValueExpr (string T)]}, TRY_CAST likewise with
// "__sx_try_cast". T is the type as written, uppercased, words separated by one
// space, no spaces around parentheses and commas: "BIGINT", "VARCHAR",
// "VARCHAR(10)", "DECIMAL(10,2)", "TIMESTAMP(3)", "DOUBLE PRECISION". Use CastOf(e).
//
// CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [WITH (...)] AS q [EMIT ON WINDOW
// CLOSE | EMIT ON UPDATE] (Kind KindCreateView, Materialized): Node is q alone, an
// *ast.SelectStmt or *ast.SetOprStmt; EmitOnClose is set by EMIT ON WINDOW CLOSE.
// CREATE VIEW [IF NOT EXISTS] v AS q (a logical view) is the same Kind without
// Materialized, options or EMIT.
//
// Statements TiDB lacks (SUBSCRIBE, FLUSH, CHECKPOINT, BACKUP TO, SET, CREATE /
// DROP SINK, DROP MATERIALIZED VIEW, SHOW [MATERIALIZED] VIEWS, SHOW SINKS)
// are parsed here; their Node is nil.
//
// Passed to TiDB unchanged (Kind KindTiDB unless noted): SELECT with joins,
// subqueries, CTEs, UNION / INTERSECT / EXCEPT (*ast.SetOprStmt), window
// functions; INSERT, UPDATE, DELETE, DROP TABLE, SHOW TABLES, DESCRIBE t
// (*ast.ExplainStmt wrapping *ast.ShowStmt), EXPLAIN. Natively parsed
// literals: `TIMESTAMP '2024-01-01 00:00:01'` is *ast.FuncCallExpr{FnName.L:
// ast.TimestampLiteral, Args: [*test_driver.ValueExpr (string)]}, `DATE '...'`
// uses ast.DateLiteral. `a || b` is *ast.FuncCallExpr{FnName.L: "concat"}.
// EXTRACT(HOUR FROM ts) is *ast.FuncCallExpr{FnName.L: "extract", Args:
// [*ast.TimeUnitExpr, ts]}; units MySQL lacks (EPOCH, DOW, DOY, MILLISECOND) become
// the call `extract_<unit>`(ts). Flink's function REGEXP(s, re), where no operand ends
// before REGEXP, is the call *ast.FuncCallExpr{FnName.L: "regexp"}; `s REGEXP re` stays
// TiDB's *ast.PatternRegexpExpr. Flink's FLOOR(e TO unit) becomes *ast.FuncCallExpr{FnName.L:
// "__sx_floor", Args: [e, *test_driver.ValueExpr (the unit in upper case)]}, CEIL and
// CEILING likewise with "__sx_ceil"; use FloorToOf(e).
//
// Placeholders: each `?` is a *test_driver.ParamMarkerExpr whose Order is 0
// (TiDB's parser does not number them): number them in the order written, by
// Stmt.UserOffset of their Offset — the front pass moves text (OFFSET/FETCH
// becomes LIMIT/OFFSET, FILTER (WHERE c) a CASE around the argument), so carrier
// order is not the user's.
//
// Positions for binder errors: Stmt.ErrorAt(name, ...) locates the first
// identifier token equal to name; Stmt.PosOf(node) maps an expression node's
// TiDB offset back to the user's text (tables and joins have no offset in
// TiDB's AST and map to the start of the statement).
package sql
