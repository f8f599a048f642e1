package shell

import (
	"strings"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		rest string
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}, ""},
		{"SELECT 1; SELECT", []string{"SELECT 1"}, " SELECT"},
		{"SELECT ';' ; x", []string{"SELECT ';'"}, " x"},
		{`SELECT "a;b", ` + "`c;d`;", []string{`SELECT "a;b", ` + "`c;d`"}, ""},
		{"SELECT 'it''s;'; ", []string{"SELECT 'it''s;'"}, " "},
		{`SELECT 'C:\'; SELECT 2;`, []string{`SELECT 'C:\'`, "SELECT 2"}, ""}, // a backslash is ordinary
		{"/*\n*/ SELECT 1 AS a;", []string{"/*\n*/ SELECT 1 AS a"}, ""},
		{"SELECT 1 AS a # x; SELECT 3\n;", []string{"SELECT 1 AS a # x; SELECT 3"}, ""}, // # comments, as the engine's
		{"# it's\n;\nSELECT 2;", []string{"SELECT 2"}, ""},
		{"SELECT 1 -- x; y\n;", []string{"SELECT 1 -- x; y"}, ""},
		{"SELECT /* ; */ 1;", []string{"SELECT /* ; */ 1"}, ""},
		{"SELECT 'open;", nil, "SELECT 'open;"},
		{"SELECT /* open;", nil, "SELECT /* open;"},
		{";;  ; -- only\n;", nil, ""},
		{"a;\n/* c */ ;b;", []string{"a", "b"}, ""},
	}
	for _, c := range cases {
		got, rest := splitStatements(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || rest != c.rest {
			t.Errorf("split(%q) = %q, %q; want %q, %q", c.in, got, rest, c.want, c.rest)
		}
	}
}

func TestReturnsRows(t *testing.T) {
	yes := []string{"SELECT 1", "select 1", "  -- c\n show tables", "# c\nSELECT 1", "/* x */ DESCRIBE t", "desc t",
		"EXPLAIN SELECT 1", "SUBSCRIBE v", "WITH a AS (SELECT 1) SELECT * FROM a", "VALUES (1)", "(SELECT 1)"}
	no := []string{"INSERT INTO t VALUES (1)", "CREATE TABLE t (a INT)", "FLUSH", "DROP VIEW v", "", "-- only"}
	for _, s := range yes {
		if !returnsRows(s) {
			t.Errorf("returnsRows(%q) = false", s)
		}
	}
	for _, s := range no {
		if returnsRows(s) {
			t.Errorf("returnsRows(%q) = true", s)
		}
	}
}

var wide = &result{
	cols:  []string{"a", "b", "c", "d", "e", "f"},
	types: []string{"bigint", "varchar", "varchar", "varchar", "varchar", "bigint"},
	rows: [][]any{
		{int64(1), "a fairly long text value", "cc", "dd", "ee", int64(6)},
		{int64(2), "short", "cc", "dd", "ee", int64(66)},
	},
}

func TestTruncateToWidth(t *testing.T) {
	// Wide columns shrink first.
	got := renderGrid(wide, renderOpts{headers: true, width: 60}, boxChars)
	want := `┌────────┬──────────┬─────────┬─────────┬─────────┬────────┐
│   a    │    b     │    c    │    d    │    e    │   f    │
│ bigint │ varchar  │ varchar │ varchar │ varchar │ bigint │
├────────┼──────────┼─────────┼─────────┼─────────┼────────┤
│      1 │ a fairl… │ cc      │ dd      │ ee      │      6 │
│      2 │ short    │ cc      │ dd      │ ee      │     66 │
└────────┴──────────┴─────────┴─────────┴─────────┴────────┘
2 rows, wide values shortened to fit
`
	if got != want {
		t.Errorf("width 60:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if w := displayWidth(line); w > 60 {
			t.Errorf("line wider than 60 (%d): %s", w, line)
		}
	}
	// Then middle columns are left out.
	got = renderGrid(wide, renderOpts{headers: true, width: 40}, boxChars)
	want = `┌────────┬────────────────┬───┬────────┐
│   a    │       b        │ … │   f    │
│ bigint │    varchar     │ … │ bigint │
├────────┼────────────────┼───┼────────┤
│      1 │ a fairly long… │ … │      6 │
│      2 │ short          │ … │     66 │
└────────┴────────────────┴───┴────────┘
2 rows, 6 columns (3 shown), wide values shortened to fit
`
	if got != want {
		t.Errorf("width 40:\n%s\nwant:\n%s", got, want)
	}
	if w := displayWidth(strings.SplitN(got, "\n", 2)[0]); w != 40 {
		t.Errorf("width 40: table is %d wide", w)
	}
	// No limit: nothing is cut.
	got = renderGrid(wide, renderOpts{headers: true}, boxChars)
	if !strings.Contains(got, "a fairly long text value") || strings.Contains(got, "…") {
		t.Errorf("no width:\n%s", got)
	}
}

func TestTruncateViaShell(t *testing.T) {
	useFake(map[string]fakeResult{"SELECT * FROM wide": {cols: wide.cols, types: wide.types, rows: wide.rows}})
	var out strings.Builder
	code := Main(Env{Args: []string{"-c", "SELECT * FROM wide"}, Stdin: strings.NewReader(""), Stdout: &out,
		Stderr: &out, Driver: "shellfake", Width: func() int { return 40 }})
	if code != 0 || !strings.HasSuffix(out.String(), "2 rows, 6 columns (3 shown), wide values shortened to fit\n") {
		t.Errorf("code %d:\n%s", code, out.String())
	}
}

func TestFitColumns(t *testing.T) {
	shown, gap, widths := fitColumns([]int{3, 3, 3, 3}, 0)
	if len(shown) != 4 || gap != -1 || widths[0] != 3 {
		t.Errorf("no limit: %v %d %v", shown, gap, widths)
	}
	// Two columns of 10 in width 20: the last is dropped, ellipsis at the end.
	shown, gap, widths = fitColumns([]int{10, 10}, 20)
	if len(shown) != 1 || shown[0] != 0 || gap != 1 || widths[0] != 10 {
		t.Errorf("two columns: %v %d %v", shown, gap, widths)
	}
	// A single huge column shrinks to fit.
	shown, gap, widths = fitColumns([]int{100}, 30)
	if len(shown) != 1 || gap != -1 || widths[0] != 26 {
		t.Errorf("one column: %v %d %v", shown, gap, widths)
	}
}

func TestDimNullOnTTY(t *testing.T) {
	res := &result{cols: []string{"a"}, types: []string{"bigint"}, rows: [][]any{{nil}}}
	got := renderGrid(res, renderOpts{headers: true, tty: true}, boxChars)
	if !strings.Contains(got, "│   \x1b[2mNULL\x1b[0m │") {
		t.Errorf("NULL not dimmed on a terminal:\n%q", got)
	}
	if got := renderGrid(res, renderOpts{headers: true}, boxChars); strings.Contains(got, "\x1b") {
		t.Errorf("escape codes when not a terminal:\n%q", got)
	}
}

func TestCellText(t *testing.T) {
	cases := []struct {
		v    any
		typ  string
		want string
	}{
		{nil, "", "NULL"},
		{int64(-3), "", "-3"},
		{0.1, "", "0.1"},
		{1e6, "", "1000000"},
		{1e20, "", "1e+20"},
		{true, "", "true"},
		{[]byte("b"), "", "b"},
		{ts("2024-02-03 00:00:00"), "date", "2024-02-03"},
		{ts("2024-02-03 04:05:06.7"), "timestamp(3)", "2024-02-03 04:05:06.700"},
	}
	for _, c := range cases {
		if got := cellText(c.v, c.typ); got != c.want {
			t.Errorf("cellText(%#v, %q) = %q, want %q", c.v, c.typ, got, c.want)
		}
	}
	if got := escapeCell("a\nb\tc"); got != `a\nb\tc` {
		t.Errorf("escapeCell = %q", got)
	}
	if got := truncate("日本語テキスト", 7); got != "日本語…" || displayWidth(got) != 7 {
		t.Errorf("truncate wide runes = %q", got)
	}
}
