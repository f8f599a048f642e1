package sql

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		q         string
		line, col int
		msg       string
	}{
		{"SELECT * FROM t WHERE", 1, 22, "syntax error: unexpected end of statement"},
		{"SELECT 1;\nSELECT 2;\n  SELECT * FROM t WHERE x = = 1;", 3, 29, `syntax error near "= 1"`},
		{"SELECT * FROM t\n  WHERE x = 1 AND ts < NOW() - INTERVAL 5 FORTNIGHT", 2, 32, "invalid interval unit FORTNIGHT"},
		{"SELECT INTERVAL 'abc' SECOND", 1, 8, "invalid interval value 'abc'"},
		{"SELECT INTERVAL x SECOND", 1, 8, "INTERVAL needs a literal value"},
		{"SELECT INTERVAL '1' MONTH", 1, 8, "invalid interval unit MONTH"},
		{"SELECT INTERVAL '0.0001' SECOND", 1, 8, "not a whole number of milliseconds"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), 5))", 1, 53, "argument 3 of TUMBLE must be an interval literal"},
		{"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 21, "HOP takes 2 interval argument(s), got 1: expected HOP(TABLE t, DESCRIPTOR(col), slide, size)"},
		{"SELECT * FROM TABLE(TUMBLE(t, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 28, "expected TUMBLE(TABLE t, DESCRIPTOR(col), size)"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))", 1, 76, "TUMBLE takes 1 interval argument(s), got more"},
		{"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES))", 1, 72, "HOP size must be a multiple of the slide"},
		{"SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES))", 1, 77, "CUMULATE size must be a multiple of the step"},
		{"SELECT * FROM TABLE(SLIDE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 21, "expected TUMBLE, HOP, SESSION or CUMULATE"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t PARTITION BY a, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 36, "PARTITION BY is only supported in SESSION"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '0' SECOND))", 1, 53, "must be positive"},
		{"SELECT * FROM a STRAIGHT_JOIN b", 1, 17, "STRAIGHT_JOIN is not supported"},
		{"SELECT __sx_interval(5)", 1, 8, "reserved prefix __sx_"},
		{"SELECT `__SX_x` FROM t", 1, 8, "reserved prefix __sx_"},
		{"SUBSCRIBE", 1, 10, "expected view name after SUBSCRIBE"},
		{"SUBSCRIBE TO", 1, 13, "expected view name after SUBSCRIBE TO"},
		{"SUBSCRIBE v extra", 1, 13, "unexpected extra after SUBSCRIBE v"},
		{"FLUSH TABLES", 1, 7, "unexpected TABLES after FLUSH"},
		{"BACKUP TO dir", 1, 8, "expected BACKUP TO 'directory'"},
		{"SET x", 1, 6, "expected = or TO after SET x"},
		{"SET x = 5 s", 1, 11, "unexpected s after SET x"},
		{"SET x = (", 1, 9, "expected a value for option x"},
		{"CREATE SINK s v", 1, 15, "expected FROM after CREATE SINK s"},
		{"CREATE SINK s FROM v WITH (a = 1, a = 2)", 1, 35, "duplicate option a"},
		{"CREATE SINK s FROM v WITH (a 1)", 1, 30, "expected = after option a"},
		{"DROP SINK", 1, 10, "expected sink name after DROP SINK"},
		{"CREATE MATERIALIZED VIEW v SELECT 1", 1, 28, "expected AS after CREATE MATERIALIZED VIEW v"},
		{"CREATE MATERIALIZED VIEW v AS SELECT 1 EMIT AFTER WATERMARK", 1, 40, "unsupported EMIT clause"},
		{"CREATE MATERIALIZED VIEW v AS SELECT 1 EMIT ON WINDOW CLOSED", 1, 40, "unsupported EMIT clause"},
		{"CREATE MATERIALIZED VIEW v AS INSERT INTO t VALUES (1)", 1, 31, "expected a SELECT query after AS"},
		{"CREATE MATERIALIZED VIEW v AS\n  SELECT a FROM t WHERE", 2, 24, "syntax error: unexpected end of statement"},
		{"CREATE TABLE t (a INT,\n  WATERMARK FOR a AS a +)", 2, 25, "syntax error: unexpected end of watermark expression"},
		{"CREATE TABLE t (a INT,\n  WATERMARK FOR a AS a * * 2)", 2, 26, `syntax error near "* 2"`},
		{"CREATE TABLE t (a INT, WATERMARK FOR a AS a, WATERMARK FOR a AS a)", 1, 46, "only one WATERMARK"},
		{"CREATE TABLE t (a INT, WATERMARK FOR a a)", 1, 40, "expected AS after WATERMARK FOR a"},
		{"CREATE TABLE t (a INT,, b INT)", 1, 23, "expected a column definition"},
		{"CREATE TABLE t (a INT) WITH (connector)", 1, 39, "expected = after option connector"},
		{"CREATE TABLE t (a FOO)", 1, 19, `syntax error near "FOO)"`},
		{"SELECT CAST(a) FROM t", 1, 8, "expected CAST(expression AS type)"},
		{"SELECT CAST(a AS) FROM t", 1, 17, "expected a type after AS in CAST"},
		{"SELECT * FROM t FOR SYSTEM_TIME AS OF", 1, 38, "expected an expression after FOR SYSTEM_TIME AS OF"},
		{"SELECT 'abc", 1, 8, "unterminated string literal"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) WHERE", 1, 80, "syntax error: unexpected end of statement"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) x y z", 1, 77, `syntax error near "y z"`},
		{"SELECT * FROM t FULL OUTER JOIN u ON t.a = u.a FULL JOIN", 1, 57, "syntax error: unexpected end of statement"},
		{"SELECT x FROM t WHERE a = 'é' AND b = ==", 1, 39, `syntax error near "=="`},
	}
	for _, c := range cases {
		_, err := Parse(c.q)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v is not a *Error", c.q, err)
			continue
		}
		if e.Line != c.line || e.Col != c.col || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q:\n got %v\nwant %s at line %d, column %d", c.q, e, c.msg, c.line, c.col)
		}
		if !strings.Contains(c.q, "__sx_") && !strings.Contains(c.q, "__SX_") && strings.Contains(strings.ToLower(e.Msg), "__sx_") {
			t.Errorf("%q: carrier text leaked: %v", c.q, e)
		}
		if !strings.HasSuffix(e.Error(), " at line "+itoa(c.line)+", column "+itoa(c.col)) {
			t.Errorf("Error() = %q", e.Error())
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// posOf is the position of the n-th (0-based) occurrence of needle in q,
// computed independently of the tokenizer.
func posOf(q, needle string, n int) Pos {
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(q[off+1:], needle)
		if j < 0 {
			panic("posOf: " + needle)
		}
		off += 1 + j
	}
	line := 1 + strings.Count(q[:off], "\n")
	col := len([]rune(q[strings.LastIndex(q[:off], "\n")+1 : off]))
	return Pos{line, col + 1}
}

func TestSplitAndText(t *testing.T) {
	q := "-- setup\nCREATE TABLE t (a INT); ; /* c; */ INSERT INTO t VALUES (';');\n\nSELECT a -- x;\n FROM t  ;  "
	stmts, err := Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	var pos []Pos
	for _, s := range stmts {
		texts = append(texts, s.Text)
		pos = append(pos, s.Pos)
	}
	wantT := []string{"CREATE TABLE t (a INT)", "INSERT INTO t VALUES (';')", "SELECT a -- x;\n FROM t"}
	wantP := []Pos{{2, 1}, {2, 36}, {4, 1}}
	if !reflect.DeepEqual(texts, wantT) || !reflect.DeepEqual(pos, wantP) {
		t.Errorf("texts %q pos %v", texts, pos)
	}
	if stmts, err := Parse("  -- only a comment\n ; ;"); err != nil || len(stmts) != 0 {
		t.Errorf("empty script: %v %v", stmts, err)
	}
}

func TestErrorAtAndPosOf(t *testing.T) {
	s := parseOne(t, "SELECT a,\n  `Bogus` + 1\nFROM t")
	e := s.ErrorAt("bogus", "unknown column %s", "bogus")
	if e.Line != 2 || e.Col != 3 || e.Error() != "unknown column bogus at line 2, column 3" {
		t.Errorf("ErrorAt: %v", e)
	}
	if e := s.ErrorAt("nothere", "x"); e.Line != 1 || e.Col != 1 {
		t.Errorf("ErrorAt fallback: %v", e)
	}
	if e := s.ErrorAtPos(Pos{3, 6}, "bad %d", 7); e.Error() != "bad 7 at line 3, column 6" {
		t.Errorf("ErrorAtPos: %v", e)
	}
	// PosOf maps TiDB offsets in the carrier back to the user's text, even
	// after a rewrite lengthened the text before the node.
	s = parseOne(t, "SELECT CAST(a AS BIGINT),\n  INTERVAL '1' SECOND,\n  zed FROM t")
	var zed ast.Node
	for _, n := range walk(s.Node) {
		if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Name.L == "zed" {
			zed = c
		}
	}
	if p := s.PosOf(zed); p != (Pos{3, 3}) {
		t.Errorf("PosOf(zed) = %v", p)
	}
}

func TestNoPanicOnOddInput(t *testing.T) {
	for _, q := range []string{
		"", ";", "\xff", "TABLE(", "SELECT * FROM TABLE(TUMBLE(", "CREATE TABLE", "CREATE TABLE t (", "CREATE MATERIALIZED VIEW",
		"CREATE MATERIALIZED VIEW v AS", "SELECT CAST(", "SELECT INTERVAL", "SELECT INTERVAL '1'", "FOR SYSTEM_TIME AS OF",
		"SET", "BACKUP", "CREATE SINK", "SELECT * FROM t FULL", "CREATE TABLE t (WATERMARK FOR", "SUBSCRIBE TO",
		"CREATE TABLE t (a INT) WITH (", "SELECT TRY_CAST(x AS", "SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY",
	} {
		_, err := Parse(q)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Col < 1 {
				t.Errorf("%q: %v", q, err)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"SELECT * FROM t WHERE a = 1",
		"CREATE TABLE bids (a BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (a) NOT ENFORCED) WITH (connector = 'kafka')",
		"CREATE MATERIALIZED VIEW v AS SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start EMIT ON WINDOW CLOSE",
		"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts AS x ON o.k = x.k",
		"SELECT CAST(a AS BIGINT), TRY_CAST(b AS DECIMAL(10,2)) FROM a FULL JOIN b ON a.x = b.x",
		"SUBSCRIBE v; FLUSH; SET 'a' = 'b'; BACKUP TO 'x'; SHOW VIEWS",
		"SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
		"SELECT 'a''b', `c``d`, \"e\" /* x */ -- y\n# z\n",
		"SELECT * FROM (VALUES (1, 'a'), (2, CAST(3 AS INT))) AS t(x, y) WHERE x IN (VALUES (1))",
		"SELECT x FROM (SELECT a FROM t) s(x) ORDER BY x DESC NULLS LAST, 2 NULLS FIRST",
		"SELECT COUNT(*) FILTER (WHERE a > 1), SUM(DISTINCT b) FILTER (WHERE c) FROM t",
		"SELECT a::BIGINT::VARCHAR, f(x)::DECIMAL(10,2), (a + 1)::DOUBLE, EXTRACT(EPOCH FROM ts) FROM t ORDER BY a::INT NULLS LAST",
		"SELECT a IS DISTINCT FROM b.c, x IS NOT DISTINCT FROM (1 + 2), y IS DISTINCT FROM -1::INT FROM t",
		"(SELECT 1) UNION ALL (SELECT 2 ORDER BY 1 LIMIT 1) ORDER BY 1 OFFSET 1",
		"SELECT FLOOR(ts TO HOUR), CEIL(CAST(a AS DATE) TO MONTH)::VARCHAR, FLOOR(x), REGEXP(s, 'a'), s NOT REGEXP ('b') FROM t",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		stmts, err := Parse(q)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error %T %v", q, err, err)
			}
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("%q: bad position %v", q, e)
			}
			if strings.HasPrefix(e.Msg, "internal parser error") {
				t.Fatalf("%q: %v", q, e) // a panic, recovered
			}
			return
		}
		for _, s := range stmts {
			if s.Text == "" {
				t.Fatalf("%q: empty statement text", q)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	q := `CREATE MATERIALIZED VIEW v AS
  SELECT window_start, window_end, auction, COUNT(*) AS n, MAX(price) AS top
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, auction
  EMIT ON WINDOW CLOSE`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}
