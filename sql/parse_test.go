package sql

import (
	"reflect"
	"sort"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

func parseOne(t *testing.T, q string) *Stmt {
	t.Helper()
	stmts, err := Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("Parse(%q): %d statements", q, len(stmts))
	}
	return stmts[0]
}

// exprs collects every expression node of n in visiting order.
type collector struct{ nodes []ast.Node }

func (c *collector) Enter(n ast.Node) (ast.Node, bool) { c.nodes = append(c.nodes, n); return n, false }
func (c *collector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func walk(n ast.Node) []ast.Node {
	c := &collector{}
	n.Accept(c)
	return c.nodes
}

func intervals(n ast.Node) []int64 {
	var out []int64
	for _, x := range walk(n) {
		if e, ok := x.(ast.ExprNode); ok {
			if ms, ok := IntervalMillis(e); ok {
				out = append(out, ms)
			}
		}
	}
	return out
}

func funcNames(n ast.Node) []string {
	var out []string
	for _, x := range walk(n) {
		if f, ok := x.(*ast.FuncCallExpr); ok {
			out = append(out, f.FnName.L)
		}
	}
	return out
}

func tableSources(n ast.Node) []*ast.TableSource {
	var out []*ast.TableSource
	for _, x := range walk(n) {
		if ts, ok := x.(*ast.TableSource); ok {
			out = append(out, ts)
		}
	}
	return out
}

func firstField(t *testing.T, s *Stmt) ast.ExprNode {
	t.Helper()
	sel, ok := s.Node.(*ast.SelectStmt)
	if !ok {
		t.Fatalf("Node is %T", s.Node)
	}
	return sel.Fields.Fields[0].Expr
}

func TestIntervalCarrier(t *testing.T) {
	cases := []struct {
		q    string
		want []int64
	}{
		{"SELECT INTERVAL '10' SECOND", []int64{10000}},
		{"SELECT INTERVAL '5' SECONDS", []int64{5000}},
		{"SELECT INTERVAL 5 MINUTE", []int64{300000}},
		{"SELECT INTERVAL '10' minutes", []int64{600000}},
		{"SELECT INTERVAL '1.5' SECOND", []int64{1500}},
		{"SELECT INTERVAL '-1' DAY", []int64{-86400000}},
		{"SELECT INTERVAL -2 HOURS", []int64{-7200000}},
		{"SELECT INTERVAL 250 MILLISECONDS", []int64{250}},
		{"SELECT INTERVAL '1' WEEK", []int64{604800000}},
		{"SELECT ts - INTERVAL '5' SECOND FROM t WHERE ts > NOW() - INTERVAL 1 HOUR", []int64{5000, 3600000}},
		{"SELECT DATE_ADD(ts, INTERVAL 1 DAY), date_sub(ts, INTERVAL '2' DAYS) FROM t", []int64{86400000, 172800000}},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '1' MINUTE AND a.ts + INTERVAL '1' MINUTE", []int64{60000, 60000}},
	}
	for _, c := range cases {
		s := parseOne(t, c.q)
		if got := intervals(s.Node); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: intervals %v, want %v", c.q, got, c.want)
		}
	}
	// Shape: generic call with one integer literal; negative: unary minus.
	fc := firstField(t, parseOne(t, "SELECT INTERVAL '10' SECOND")).(*ast.FuncCallExpr)
	if fc.FnName.L != "__sx_interval" || len(fc.Args) != 1 {
		t.Fatalf("carrier %+v", fc)
	}
	if v, ok := fc.Args[0].(*test_driver.ValueExpr); !ok || v.GetValue() != int64(10000) {
		t.Errorf("arg %#v", fc.Args[0])
	}
	fc = firstField(t, parseOne(t, "SELECT INTERVAL '-1' SECOND")).(*ast.FuncCallExpr)
	if u, ok := fc.Args[0].(*ast.UnaryOperationExpr); !ok || u.Op != opcode.Minus {
		t.Errorf("negative arg %#v", fc.Args[0])
	}
	// ts - INTERVAL is a plain binary minus; DATE_ADD a generic call.
	b, ok := firstField(t, parseOne(t, "SELECT ts - INTERVAL '5' SECOND FROM t")).(*ast.BinaryOperationExpr)
	if !ok || b.Op != opcode.Minus {
		t.Fatalf("ts - INTERVAL: %T", b)
	}
	da := firstField(t, parseOne(t, "SELECT DATE_ADD(ts, INTERVAL 1 DAY) FROM t")).(*ast.FuncCallExpr)
	if da.FnName.L != "date_add" || len(da.Args) != 2 {
		t.Errorf("DATE_ADD: %s %d args", da.FnName.L, len(da.Args))
	}
	// MySQL's INTERVAL() function stays.
	if got := funcNames(parseOne(t, "SELECT INTERVAL(5, 1, 10)").Node); !reflect.DeepEqual(got, []string{"interval"}) {
		t.Errorf("INTERVAL(): %v", got)
	}
}

func TestCreateTable(t *testing.T) {
	q := `CREATE TABLE IF NOT EXISTS bids (
  auction BIGINT, bidder INT, price DOUBLE, ok BOOLEAN, name VARCHAR, tag STRING, code VARCHAR(8),
  amount DECIMAL(10,2), day DATE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (auction, bidder) NOT ENFORCED
) WITH (connector = 'kafka', 'scan.startup.mode' = 'earliest', watermark.idle_timeout = '5s', Partitions = 4, enabled = true)`
	s := parseOne(t, q)
	if s.Kind != KindCreateTable {
		t.Fatalf("kind %v", s.Kind)
	}
	ct := s.Node.(*ast.CreateTableStmt)
	if !ct.IfNotExists || ct.Table.Name.O != "bids" {
		t.Errorf("table %+v", ct.Table)
	}
	type col struct {
		name     string
		tp       byte
		flen     int
		dec      int
		unsigned bool
	}
	var got []col
	for _, c := range ct.Cols {
		got = append(got, col{c.Name.Name.O, c.Tp.GetType(), c.Tp.GetFlen(), c.Tp.GetDecimal(), false})
	}
	want := []col{
		{"auction", mysql.TypeLonglong, -1, -1, false},
		{"bidder", mysql.TypeLong, -1, -1, false},
		{"price", mysql.TypeDouble, -1, -1, false},
		{"ok", mysql.TypeTiny, 1, -1, false},
		{"name", mysql.TypeBlob, -1, -1, false},
		{"tag", mysql.TypeBlob, -1, -1, false},
		{"code", mysql.TypeVarchar, 8, -1, false},
		{"amount", mysql.TypeNewDecimal, 10, 2, false},
		{"day", mysql.TypeDate, -1, -1, false},
		{"ts", mysql.TypeTimestamp, 23, 3, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns\n got %v\nwant %v", got, want)
	}
	if len(ct.Constraints) != 1 || ct.Constraints[0].Tp != ast.ConstraintPrimaryKey || len(ct.Constraints[0].Keys) != 2 {
		t.Errorf("constraints %+v", ct.Constraints)
	}
	wm := s.Watermark
	if wm == nil || wm.Column != "ts" || wm.Pos != posOf(q, "WATERMARK", 0) {
		t.Fatalf("watermark %+v", wm)
	}
	be, ok := wm.Expr.(*ast.BinaryOperationExpr)
	if !ok || be.Op != opcode.Minus {
		t.Fatalf("watermark expr %T", wm.Expr)
	}
	if ms, ok := IntervalMillis(be.R); !ok || ms != 5000 {
		t.Errorf("watermark interval %v %v", ms, ok)
	}
	if cn, ok := be.L.(*ast.ColumnNameExpr); !ok || cn.Name.Name.L != "ts" {
		t.Errorf("watermark L %T", be.L)
	}
	wantOpts := []Option{
		{"connector", "kafka", posOf(q, "connector", 0)},
		{"scan.startup.mode", "earliest", posOf(q, "'scan", 0)},
		{"watermark.idle_timeout", "5s", posOf(q, "watermark.", 0)},
		{"partitions", "4", posOf(q, "Partitions", 0)},
		{"enabled", "true", posOf(q, "enabled", 0)},
	}
	if !reflect.DeepEqual(s.Options, wantOpts) {
		t.Errorf("options\n got %v\nwant %v", s.Options, wantOpts)
	}

	// Column-level PRIMARY KEY NOT ENFORCED, watermark first, no WITH.
	s = parseOne(t, "CREATE TABLE rates (WATERMARK FOR ts AS ts, currency VARCHAR PRIMARY KEY NOT ENFORCED, rate DOUBLE, ts TIMESTAMP(3))")
	ct = s.Node.(*ast.CreateTableStmt)
	if len(ct.Cols) != 3 || s.Options != nil || s.Watermark == nil {
		t.Fatalf("rates: %d cols, opts %v", len(ct.Cols), s.Options)
	}
	if _, ok := s.Watermark.Expr.(*ast.ColumnNameExpr); !ok {
		t.Errorf("watermark %T", s.Watermark.Expr)
	}
	pk := false
	for _, o := range ct.Cols[0].Options {
		pk = pk || o.Tp == ast.ColumnOptionPrimaryKey
	}
	if !pk {
		t.Errorf("currency is not a primary key")
	}
	// A plain MySQL table has no watermark.
	s = parseOne(t, "create table t (a int, b text)")
	if s.Kind != KindCreateTable || s.Watermark != nil {
		t.Errorf("plain table %+v", s)
	}
}

func TestWindowTVF(t *testing.T) {
	cases := []struct {
		q     string
		alias string
		want  WindowTVF
	}{
		{"SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start", "",
			WindowTVF{Kind: Tumble, Table: "bids", TablePos: Pos{1, 55}, TimeCol: "ts", Args: []int64{10000}, Pos: Pos{1, 36}}},
		{"SELECT * FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE)) AS w", "w",
			WindowTVF{Kind: Hop, Table: "bids", TablePos: Pos{1, 31}, TimeCol: "ts", Args: []int64{5000, 60000}, Pos: Pos{1, 15}}},
		{"SELECT * FROM table(session(table bids partition by bidder, auction, descriptor(ts), interval '30' seconds)) w", "w",
			WindowTVF{Kind: Session, Table: "bids", TablePos: Pos{1, 35}, PartitionBy: []string{"bidder", "auction"}, TimeCol: "ts", Args: []int64{30000}, Pos: Pos{1, 15}}},
		{"SELECT * FROM TABLE(SESSION(TABLE bids PARTITION BY (bidder), DESCRIPTOR(`ts`), INTERVAL 1 MINUTE))", "",
			WindowTVF{Kind: Session, Table: "bids", TablePos: Pos{1, 35}, PartitionBy: []string{"bidder"}, TimeCol: "ts", Args: []int64{60000}, Pos: Pos{1, 15}}},
		{"SELECT * FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '1' DAY))", "",
			WindowTVF{Kind: Cumulate, Table: "bids", TablePos: Pos{1, 36}, TimeCol: "ts", Args: []int64{3600000, 86400000}, Pos: Pos{1, 15}}},
	}
	for _, c := range cases {
		s := parseOne(t, c.q)
		w := s.Windows["__sx_tvf_0"]
		if len(s.Windows) != 1 || w == nil {
			t.Fatalf("%s: windows %v", c.q, s.Windows)
		}
		if !reflect.DeepEqual(*w, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.q, *w, c.want)
		}
		ts := tableSources(s.Node)
		if len(ts) != 1 || ts[0].Source.(*ast.TableName).Name.O != "__sx_tvf_0" || ts[0].AsName.O != c.alias {
			t.Errorf("%s: table sources %+v", c.q, ts)
		}
	}
	// Two windows in one statement, plus an interval join on top.
	s := parseOne(t, `SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) x
		JOIN TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '2' SECOND)) y ON x.window_start = y.window_start`)
	if len(s.Windows) != 2 || s.Windows["__sx_tvf_0"].Table != "a" || s.Windows["__sx_tvf_1"].Table != "b" {
		t.Errorf("two windows: %v", s.Windows)
	}
}

func TestSystemTime(t *testing.T) {
	cases := []struct {
		q, alias, table string
		tsFunc          string // expected AsOf expression: a column "o.ts" or a function name
	}{
		{"SELECT o.id, o.amount * r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency", "r", "rates", "o.ts"},
		{"SELECT * FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts r ON o.currency = r.currency", "r", "rates", "o.ts"},
		{"SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts ON o.currency = rates.currency", "", "rates", "o.ts"},
		{"SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF PROCTIME() AS r ON o.c = r.c", "r", "rates", "proctime"},
		{"SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts - INTERVAL '1' SECOND r ON o.c = r.c", "r", "rates", "minus"},
		{"SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF CASE WHEN o.a THEN o.ts ELSE NOW() END r ON o.c = r.c", "r", "rates", "case"},
		{"SELECT * FROM o, rates FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00', u", "", "rates", ast.TimestampLiteral},
	}
	for _, c := range cases {
		s := parseOne(t, c.q)
		var found *ast.TableSource
		for _, ts := range tableSources(s.Node) {
			if tn := ts.Source.(*ast.TableName); tn.AsOf != nil {
				found = ts
			}
		}
		if found == nil {
			t.Fatalf("%s: no AS OF", c.q)
		}
		tn := found.Source.(*ast.TableName)
		if found.AsName.O != c.alias || tn.Name.O != c.table {
			t.Errorf("%s: alias %q table %q", c.q, found.AsName.O, tn.Name.O)
		}
		switch e := tn.AsOf.TsExpr.(type) {
		case *ast.ColumnNameExpr:
			if got := e.Name.Table.O + "." + e.Name.Name.O; got != c.tsFunc {
				t.Errorf("%s: AS OF %s", c.q, got)
			}
		case *ast.FuncCallExpr:
			if e.FnName.L != c.tsFunc {
				t.Errorf("%s: AS OF %s()", c.q, e.FnName.L)
			}
		case *ast.CaseExpr:
			if c.tsFunc != "case" {
				t.Errorf("%s: AS OF CASE", c.q)
			}
		case *ast.BinaryOperationExpr:
			if ms, _ := IntervalMillis(e.R); c.tsFunc != "minus" || ms != 1000 {
				t.Errorf("%s: AS OF %v", c.q, e)
			}
		default:
			t.Errorf("%s: AS OF %T", c.q, e)
		}
	}
}

func TestFullJoin(t *testing.T) {
	for _, q := range []string{
		"SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x",
		"SELECT * FROM a FULL JOIN b ON a.x = b.x",
		"SELECT * FROM a full join b USING (x)",
	} {
		j := parseOne(t, q).Node.(*ast.SelectStmt).From.TableRefs
		if !j.StraightJoin || j.Tp != 0 || (j.On == nil && j.Using == nil) {
			t.Errorf("%s: join %+v", q, j)
		}
	}
	// FULL as a column name is not a join.
	if j := parseOne(t, "SELECT full FROM a JOIN b ON a.x = b.x").Node.(*ast.SelectStmt).From.TableRefs; j.StraightJoin {
		t.Errorf("plain join marked straight")
	}
}

func TestCast(t *testing.T) {
	cases := []struct{ q, typ string }{
		{"SELECT CAST(a + 1 AS BIGINT) FROM t", "BIGINT"},
		{"SELECT CAST(a AS int) FROM t", "INT"},
		{"SELECT CAST(a AS string) FROM t", "STRING"},
		{"SELECT CAST(a AS VARCHAR) FROM t", "VARCHAR"},
		{"SELECT CAST(a AS varchar ( 10 )) FROM t", "VARCHAR(10)"},
		{"SELECT CAST(a AS DECIMAL(10, 2)) FROM t", "DECIMAL(10,2)"},
		{"SELECT CAST(a AS double   precision) FROM t", "DOUBLE PRECISION"},
		{"SELECT CAST('2024-01-01 00:00:00' AS TIMESTAMP(3))", "TIMESTAMP(3)"},
		{"SELECT CAST(x AS BOOLEAN) FROM t", "BOOLEAN"},
		{"SELECT CAST(CAST(x AS INT) AS DATE) FROM t", "DATE"},
	}
	for _, c := range cases {
		e := firstField(t, parseOne(t, c.q))
		arg, typ, try, ok := CastOf(e)
		if !ok || typ != c.typ || try || arg == nil {
			t.Errorf("%s: CastOf = %v %q %v", c.q, ok, typ, try)
		}
	}
	e := firstField(t, parseOne(t, "SELECT TRY_CAST(s AS INT) FROM t"))
	arg, typ, try, ok := CastOf(e)
	if !ok || !try || typ != "INT" {
		t.Errorf("TRY_CAST: %v %q %v", ok, typ, try)
	}
	if cn, ok := arg.(*ast.ColumnNameExpr); !ok || cn.Name.Name.L != "s" {
		t.Errorf("TRY_CAST arg %T", arg)
	}
	// The expression stays in place, nested CASTs included.
	inner, _, _, _ := CastOf(firstField(t, parseOne(t, "SELECT CAST(CAST(x AS INT) AS DATE) FROM t")))
	if _, typ, _, ok := CastOf(inner); !ok || typ != "INT" {
		t.Errorf("nested cast: %q", typ)
	}
	// The AS of a subquery inside the CAST is not the CAST's AS.
	if _, typ, _, ok := CastOf(firstField(t, parseOne(t, "SELECT CAST((SELECT a AS b FROM t) AS BIGINT)"))); !ok || typ != "BIGINT" {
		t.Errorf("cast of subquery: %q", typ)
	}
}

func TestCreateView(t *testing.T) {
	q := `CREATE MATERIALIZED VIEW IF NOT EXISTS v WITH (parallelism = 2) AS
  SELECT window_start, window_end, auction, COUNT(*) AS n, MAX(price) AS top
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, auction
  EMIT ON WINDOW CLOSE`
	s := parseOne(t, q)
	if s.Kind != KindCreateView || s.Name != "v" || !s.IfNotExists || !s.EmitOnClose || !s.Materialized {
		t.Errorf("view %+v", s)
	}
	if _, ok := s.Node.(*ast.SelectStmt); !ok {
		t.Errorf("Node %T", s.Node)
	}
	if !reflect.DeepEqual(s.Options, []Option{{"parallelism", "2", Pos{1, 48}}}) {
		t.Errorf("options %v", s.Options)
	}
	if w := s.Windows["__sx_tvf_0"]; w == nil || w.Pos != (Pos{3, 8}) {
		t.Errorf("windows %v", s.Windows)
	}
	if s.Text != q {
		t.Errorf("Text %q", s.Text)
	}
	s = parseOne(t, "create materialized view u as select a from t union all select a from t2 emit on update")
	if _, ok := s.Node.(*ast.SetOprStmt); !ok || s.EmitOnClose || s.IfNotExists {
		t.Errorf("union view %T %+v", s.Node, s)
	}
	s = parseOne(t, "CREATE MATERIALIZED VIEW w AS WITH c AS (SELECT a FROM t) SELECT a FROM c")
	if sel, ok := s.Node.(*ast.SelectStmt); !ok || sel.With == nil {
		t.Errorf("CTE view %T", s.Node)
	}
	// emit is a name everywhere but in the trailing EMIT clause.
	for _, q := range []string{
		"CREATE MATERIALIZED VIEW w AS SELECT emit, k FROM t",
		"CREATE MATERIALIZED VIEW w AS SELECT k AS emit FROM t",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM t GROUP BY emit",
		"CREATE MATERIALIZED VIEW w AS SELECT k emit FROM t",
		"CREATE MATERIALIZED VIEW w AS SELECT a.k FROM a JOIN b emit ON a.k = emit.k",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM t emit WHERE emit.k > 1 EMIT ON UPDATE",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM t WHERE emit IS NOT NULL",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM t ORDER BY emit DESC",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM t ORDER BY emit NULLS LAST",
		"CREATE MATERIALIZED VIEW w AS SELECT a.k FROM t AS a JOIN t AS emit ON TRUE",
		"CREATE MATERIALIZED VIEW w AS SELECT k FROM b emit EMIT ON UPDATE",
	} {
		if s := parseOne(t, q); s.Kind != KindCreateView || s.EmitOnClose {
			t.Errorf("%s: %+v", q, s)
		}
	}
}

// CREATE VIEW is a logical view: the same statement without MATERIALIZED, options or EMIT.
func TestCreateLogicalView(t *testing.T) {
	s := parseOne(t, "CREATE VIEW IF NOT EXISTS v AS SELECT a FROM t WHERE a > 0")
	if s.Kind != KindCreateView || s.Materialized || s.Name != "v" || !s.IfNotExists {
		t.Errorf("view %+v", s)
	}
	if _, ok := s.Node.(*ast.SelectStmt); !ok {
		t.Errorf("Node %T", s.Node)
	}
	s = parseOne(t, "create view u as select a from t union all select a from t2")
	if _, ok := s.Node.(*ast.SetOprStmt); !ok || s.Materialized || s.IfNotExists {
		t.Errorf("union view %T %+v", s.Node, s)
	}
	for q, want := range map[string]string{
		"CREATE VIEW v WITH (a = 1) AS SELECT 1":                "CREATE VIEW takes no WITH options: a view stores nothing (options belong to CREATE MATERIALIZED VIEW) at line 1, column 15",
		"CREATE VIEW v AS SELECT k FROM t EMIT ON WINDOW CLOSE": "a view takes no EMIT clause: it emits nothing (EMIT belongs to CREATE MATERIALIZED VIEW) at line 1, column 34",
		"CREATE VIEW v SELECT 1":                                "expected AS after CREATE VIEW v at line 1, column 15",
		"CREATE VIEW v AS":                                      "expected a query after AS at line 1, column 17",
		"CREATE VIEW v AS INSERT INTO t VALUES (1)":             "expected a SELECT query after AS at line 1, column 18",
	} {
		if _, err := Parse(q); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", q, err, want)
		}
	}
}

func TestOwnStatements(t *testing.T) {
	cases := []struct {
		q    string
		want Stmt
	}{
		{"SUBSCRIBE v", Stmt{Kind: KindSubscribe, Name: "v"}},
		{"subscribe to `My View` with (snapshot = false)", Stmt{Kind: KindSubscribe, Name: "My View", Options: []Option{{"snapshot", "false", Pos{1, 30}}}}},
		{"FLUSH", Stmt{Kind: KindFlush}},
		{"checkpoint", Stmt{Kind: KindCheckpoint}},
		{"BACKUP TO '/tmp/snap'", Stmt{Kind: KindBackup, Path: "/tmp/snap"}},
		{"SET 'pipeline.name' = 'x'", Stmt{Kind: KindSet, Options: []Option{{"pipeline.name", "x", Pos{1, 5}}}}},
		{"SET checkpoint_interval = 5", Stmt{Kind: KindSet, Options: []Option{{"checkpoint_interval", "5", Pos{1, 5}}}}},
		{"SET checkpoint_interval = 250ms", Stmt{Kind: KindSet, Options: []Option{{"checkpoint_interval", "250ms", Pos{1, 5}}}}},
		{"SET a = -1.5", Stmt{Kind: KindSet, Options: []Option{{"a", "-1.5", Pos{1, 5}}}}},
		{"SET `a`.b = on", Stmt{Kind: KindSet, Options: []Option{{"a.b", "on", Pos{1, 5}}}}},
		{"SET Watermark.Idle_Timeout TO '5s'", Stmt{Kind: KindSet, Options: []Option{{"watermark.idle_timeout", "5s", Pos{1, 5}}}}},
		{"SHOW VIEWS", Stmt{Kind: KindShowViews}},
		{"show materialized views", Stmt{Kind: KindShowViews, Materialized: true}},
		{"SHOW SINKS", Stmt{Kind: KindShowSinks}},
		{"CREATE SINK s FROM v WITH (connector = 'kafka', topic = 'out')", Stmt{Kind: KindCreateSink, Name: "s", From: "v",
			Options: []Option{{"connector", "kafka", Pos{1, 28}}, {"topic", "out", Pos{1, 49}}}}},
		{"CREATE SINK IF NOT EXISTS s FROM v", Stmt{Kind: KindCreateSink, Name: "s", From: "v", IfNotExists: true}},
		{"DROP SINK IF EXISTS s", Stmt{Kind: KindDropSink, Name: "s", IfExists: true}},
		{"DROP MATERIALIZED VIEW v", Stmt{Kind: KindDropView, Name: "v", Materialized: true}},
		{"DROP MATERIALIZED VIEW IF EXISTS v", Stmt{Kind: KindDropView, Name: "v", IfExists: true, Materialized: true}},
	}
	for _, c := range cases {
		s := parseOne(t, c.q)
		got := Stmt{Kind: s.Kind, Name: s.Name, From: s.From, Path: s.Path, IfExists: s.IfExists, IfNotExists: s.IfNotExists, Materialized: s.Materialized, Options: s.Options}
		if !reflect.DeepEqual(got, c.want) || s.Node != nil {
			t.Errorf("%s:\n got %+v\nwant %+v", c.q, got, c.want)
		}
	}
}

func TestTiDBPassThrough(t *testing.T) {
	cases := []struct {
		q    string
		node any
	}{
		{"SELECT a FROM t WHERE b LIKE 'x%' AND c BETWEEN 1 AND 2 AND d IN (1, 2)", &ast.SelectStmt{}},
		{"SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, EXTRACT(HOUR FROM ts) FROM t", &ast.SelectStmt{}},
		{"WITH c AS (SELECT 1 AS x) SELECT x FROM c", &ast.SelectStmt{}},
		{"SELECT a FROM t INTERSECT SELECT a FROM u EXCEPT SELECT a FROM w", &ast.SetOprStmt{}},
		{"SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) FROM t", &ast.SelectStmt{}},
		{"SELECT * FROM (SELECT a FROM t) AS s WHERE a IN (SELECT a FROM u)", &ast.SelectStmt{}},
		{"INSERT INTO t VALUES (1, 'a', lower('X'))", &ast.InsertStmt{}},
		{"INSERT INTO t SELECT * FROM u", &ast.InsertStmt{}},
		{"UPDATE t SET a = a + 1 WHERE k = 'x'", &ast.UpdateStmt{}},
		{"DELETE FROM t WHERE k = 'x'", &ast.DeleteStmt{}},
		{"DROP TABLE IF EXISTS t", &ast.DropTableStmt{}},
		{"SHOW TABLES", &ast.ShowStmt{}},
		{"DESCRIBE t", &ast.ExplainStmt{}},
		{"DESC t", &ast.ExplainStmt{}},
		{"EXPLAIN SELECT * FROM t", &ast.ExplainStmt{}},
	}
	for _, c := range cases {
		s := parseOne(t, c.q)
		if s.Kind != KindTiDB || reflect.TypeOf(s.Node) != reflect.TypeOf(c.node) {
			t.Errorf("%s: kind %v node %T", c.q, s.Kind, s.Node)
		}
	}
	// INSERT of plain literals takes the fast path.
	fast := parseOne(t, "INSERT INTO t (a, b, c) VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:01.500'), (-2.5, ?, NULL), (1e3, TRUE, DATE '2024-01-01')")
	if fast.Kind != KindInsertValues || fast.Name != "t" || len(fast.Columns) != 3 || len(fast.Rows) != 3 || fast.Params != 1 {
		t.Fatalf("fast path: %+v", fast)
	}
	kinds := []LitKind{LitInt, LitString, LitTimestamp, LitDecimal, LitParam, LitNull, LitFloat, LitBool, LitDate}
	for i, k := range kinds {
		if l := fast.Rows[i/3][i%3]; l.Kind != k {
			t.Errorf("literal %d: kind %v, want %v", i, l.Kind, k)
		}
	}
	if l := fast.Rows[1][0]; !l.Neg || l.Text != "2.5" {
		t.Errorf("negative decimal: %+v", l)
	}
	// DESCRIBE t wraps a ShowStmt.
	if ex := parseOne(t, "DESCRIBE t").Node.(*ast.ExplainStmt); reflect.TypeOf(ex.Stmt) != reflect.TypeOf(&ast.ShowStmt{}) {
		t.Errorf("DESCRIBE wraps %T", ex.Stmt)
	}
	// TIMESTAMP and DATE literals, || as concat.
	sel := parseOne(t, "SELECT TIMESTAMP '2024-01-01 00:00:01', DATE '2024-01-01', a || b FROM t").Node.(*ast.SelectStmt)
	for i, want := range []string{ast.TimestampLiteral, ast.DateLiteral, "concat"} {
		fc, ok := sel.Fields.Fields[i].Expr.(*ast.FuncCallExpr)
		if !ok || fc.FnName.L != want {
			t.Errorf("field %d: %T, want %s", i, sel.Fields.Fields[i].Expr, want)
		}
	}
	if v := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr).Args[0].(*test_driver.ValueExpr); v.GetValue() != "2024-01-01 00:00:01" {
		t.Errorf("timestamp literal %v", v.GetValue())
	}
}

func TestParamMarkers(t *testing.T) {
	q := "SELECT CAST(? AS BIGINT), ? FROM t JOIN r FOR SYSTEM_TIME AS OF t.ts AS x ON t.k = x.k WHERE a = ? AND b > ? - INTERVAL '1' SECOND"
	s := parseOne(t, q)
	var offs []int
	for _, n := range walk(s.Node) {
		if p, ok := n.(*test_driver.ParamMarkerExpr); ok {
			offs = append(offs, p.Offset)
		}
	}
	if len(offs) != 4 {
		t.Fatalf("%d markers", len(offs))
	}
	// Offsets, sorted, must map back to the ?s in the order written.
	sorted := append([]int(nil), offs...)
	sort.Ints(sorted)
	var got, want []Pos
	for i, o := range sorted {
		got = append(got, s.src.pos(s.cmap.user(o)))
		want = append(want, posOf(q, "?", i))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("marker positions %v, want %v", got, want)
	}
}

func TestRegexpCall(t *testing.T) {
	// REGEXP( is Flink's function where an operand cannot end before it, else MySQL's operator.
	for _, c := range []struct {
		q     string
		calls int // REGEXP function calls
		ops   int // REGEXP operators
	}{
		{"SELECT REGEXP(s, 'a') FROM t", 1, 0},
		{"SELECT a FROM t WHERE NOT REGEXP(s, 'a') AND (REGEXP(s, 'b'))", 2, 0},
		{"SELECT s REGEXP ('a'), s NOT REGEXP ('b'), 'x' REGEXP('c') FROM t", 0, 3},
		{"SELECT CASE WHEN REGEXP(s, 'a') THEN 1 END, f(s) REGEXP ('a') FROM t", 1, 1},
	} {
		var calls, ops int
		for _, n := range walk(parseOne(t, c.q).Node) {
			switch x := n.(type) {
			case *ast.FuncCallExpr:
				if x.FnName.L == "regexp" {
					calls++
				}
			case *ast.PatternRegexpExpr:
				ops++
			}
		}
		if calls != c.calls || ops != c.ops {
			t.Errorf("%s: %d calls, %d operators; want %d, %d", c.q, calls, ops, c.calls, c.ops)
		}
	}
}

func TestFloorTo(t *testing.T) {
	for _, c := range []struct {
		q, unit string
		ceil    bool
	}{
		{"SELECT FLOOR(ts TO HOUR) FROM t", "HOUR", false},
		{"SELECT ceil(f(ts, (1)) + INTERVAL '1' DAY to day) FROM t", "DAY", true},
		{"SELECT CEILING(CAST(s AS TIMESTAMP) TO Week)::VARCHAR FROM t", "WEEK", true},
	} {
		var got []string
		for _, n := range walk(parseOne(t, c.q).Node) {
			if e, ok := n.(ast.ExprNode); ok {
				if arg, unit, ceil, ok := FloorToOf(e); ok && arg != nil && ceil == c.ceil {
					got = append(got, unit)
				}
			}
		}
		if len(got) != 1 || got[0] != c.unit {
			t.Errorf("%s: units %v, want %s", c.q, got, c.unit)
		}
	}
	// FLOOR without TO stays TiDB's.
	if fc, ok := firstField(t, parseOne(t, "SELECT FLOOR(x) FROM t")).(*ast.FuncCallExpr); !ok || fc.FnName.L != "floor" {
		t.Errorf("FLOOR(x) became %T", fc)
	}
	for q, want := range map[string]string{
		"SELECT FLOOR(TO HOUR)":          "expected an expression before TO in FLOOR(expression TO unit) at line 1, column 14",
		"SELECT CEIL(ts TO 'hour')":      "expected a unit such as HOUR after TO in CEIL(expression TO unit) at line 1, column 19",
		"SELECT CEIL(ts TO HOUR x)":      "expected a unit such as HOUR after TO in CEIL(expression TO unit) at line 1, column 19",
		"SELECT\n  FLOOR(ts TO DAY + 1)": "expected a unit such as HOUR after TO in FLOOR(expression TO unit) at line 2, column 15",
	} {
		if _, err := Parse(q); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", q, err, want)
		}
	}
}

// TestAggregateCalls: the aggregates TiDB takes as plain calls (or, FIRST_VALUE and
// LAST_VALUE, only with OVER) parse as aggregates, with DISTINCT, at the call's position; an
// ORDER BY among their arguments, or OVER after any but FIRST_VALUE and LAST_VALUE, is an
// error at its place.
func TestAggregateCalls(t *testing.T) {
	st := parseOne(t, "SELECT g, bool_and(b), EVERY(b), String_Agg(DISTINCT s, ','), listagg(s), first_value(x), last_value(x) OVER (ORDER BY x), first_value(x) IGNORE NULLS OVER (ORDER BY x) FROM t GROUP BY g")
	var got []string
	for _, n := range walk(st.Node) {
		switch x := n.(type) {
		case *ast.AggregateFuncExpr:
			got = append(got, x.F)
			if x.Distinct {
				got = append(got, "distinct")
			}
			if p := st.PosOf(x); x.F == "string_agg" && p.Col != 34 {
				t.Errorf("STRING_AGG at column %d, want 34", p.Col)
			}
		case *ast.WindowFuncExpr:
			got = append(got, "window "+x.Name)
		}
	}
	want := []string{"bool_and", "every", "string_agg", "distinct", "listagg", "first_value", "window last_value", "window first_value"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for q, msg := range map[string]string{
		"SELECT listagg(s, ';' ORDER BY s) FROM t":       "ORDER BY inside LISTAGG(...) is not supported: it takes the values in arrival order at line 1, column 23",
		"SELECT bool_or(b) OVER (PARTITION BY g) FROM t": "BOOL_OR is not supported as a window function (OVER) at line 1, column 19",
		"SELECT any_value(x) OVER () FROM t":             "ANY_VALUE is not supported as a window function (OVER) at line 1, column 21",
	} {
		if _, err := Parse(q); err == nil || err.Error() != msg {
			t.Errorf("Parse(%q) = %v, want %s", q, err, msg)
		}
	}
}
