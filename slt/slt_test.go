package slt

import (
	"errors"
	"math"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

// run runs text against canned answers and returns the result.
func run(t *testing.T, text string, answers map[string]fakeResult) (*Result, *fakeDB) {
	t.Helper()
	f, open := openFake(t.Name(), answers)
	res, err := Run("t.slt", strings.NewReader(text), Options{Engine: "streamsql", Open: open})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, f
}

func expectCounts(t *testing.T, res *Result, records, passed, skipped, failed int) {
	t.Helper()
	if res.Records != records || res.Passed != passed || res.Skipped != skipped || len(res.Failures) != failed {
		t.Errorf("records/passed/skipped/failed = %d/%d/%d/%d, want %d/%d/%d/%d; failures: %v",
			res.Records, res.Passed, res.Skipped, len(res.Failures), records, passed, skipped, failed, res.Failures)
	}
}

func TestParse(t *testing.T) {
	text := `# description: parse test
hash-threshold 8

statement ok
CREATE TABLE t (
  a INT)

skipif duckdb
onlyif streamsql
statement error no such table: \w+
SELECT * FROM nope

query IT rowsort lbl # a comment
SELECT a,
  b FROM t
----
1
x

query error division
SELECT 1/0

halt
`
	recs, err := parse("p.slt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("got %d records, want 6", len(recs))
	}
	if recs[0].kind != kindHashThreshold || recs[0].threshold != 8 || recs[0].line != 2 {
		t.Errorf("hash-threshold record: %+v", recs[0])
	}
	if r := recs[1]; r.kind != kindStatement || r.expectErr || r.sql != "CREATE TABLE t (\n  a INT)" || r.line != 4 {
		t.Errorf("statement ok record: %+v", r)
	}
	r := recs[2]
	if !r.expectErr || r.errRe == nil || r.errRe.String() != `no such table: \w+` || r.line != 10 {
		t.Errorf("statement error record: %+v", r)
	}
	if len(r.conds) != 2 || r.conds[0] != (cond{only: false, engine: "duckdb"}) || r.conds[1] != (cond{only: true, engine: "streamsql"}) {
		t.Errorf("conds: %+v", r.conds)
	}
	q := recs[3]
	if q.kind != kindQuery || q.types != "IT" || q.sort != rowSort || q.label != "lbl" ||
		q.sql != "SELECT a,\n  b FROM t" || strings.Join(q.expected, ",") != "1,x" || len(q.conds) != 0 {
		t.Errorf("query record: %+v", q)
	}
	if e := recs[4]; e.kind != kindQuery || !e.expectErr || e.errRe.String() != "division" {
		t.Errorf("query error record: %+v", e)
	}
	if recs[5].kind != kindHalt {
		t.Errorf("halt record: %+v", recs[5])
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"frobnicate\nSELECT 1\n",
		"statement maybe\nSELECT 1\n",
		"statement ok\n\n",
		"hash-threshold x\n",
		"statement error (\nSELECT 1\n",
		"query\nSELECT 1\n",
	} {
		if _, err := Run("bad.slt", strings.NewReader(text), Options{}); err == nil {
			t.Errorf("%q: no parse error", text)
		} else if !strings.Contains(err.Error(), "bad.slt:1") {
			t.Errorf("%q: error %q lacks position", text, err)
		}
	}
	if _, err := RunFile(filepath.Join(t.TempDir(), "missing.slt"), Options{}); err == nil {
		t.Error("RunFile of a missing file: no error")
	}
}

func TestPassAndWrongValue(t *testing.T) {
	answers := map[string]fakeResult{
		"SELECT a, b FROM t": {cols: []string{"a", "b"}, types: []string{"BIGINT", "VARCHAR"},
			rows: [][]any{{int64(1), "x"}, {int64(2), nil}}},
	}
	text := `statement ok
INSERT INTO t VALUES (1, 'x'), (2, NULL)

query IT
SELECT a, b FROM t
----
1
x
2
NULL

query IT
SELECT a, b FROM t
----
1
x
2
y
`
	res, f := run(t, text, answers)
	expectCounts(t, res, 3, 2, 0, 1)
	fl := res.Failures[0]
	if fl.Line != 12 || fl.File != "t.slt" || fl.SQL != "SELECT a, b FROM t" {
		t.Errorf("failure position: %+v", fl)
	}
	want := "wrong result\n--- expected\n1\nx\n2\ny\n--- got\n1\nx\n2\nNULL"
	if fl.Msg != want {
		t.Errorf("failure message:\n%s\nwant:\n%s", fl.Msg, want)
	}
	if !f.closed {
		t.Error("database not closed after the file")
	}
}

func TestSortModes(t *testing.T) {
	answers := map[string]fakeResult{
		"q": {cols: []string{"a", "b"}, rows: [][]any{{int64(2), "b"}, {int64(10), "a"}, {int64(1), "c"}}},
	}
	cases := []struct {
		mode, exp string
		ok        bool
	}{
		{"nosort", "2 b 10 a 1 c", true},
		{"nosort", "1 c 2 b 10 a", false},
		// rowsort compares strings: "10" < "2".
		{"rowsort", "1 c 10 a 2 b", true},
		// rowsort expected in another order is the same multiset of rows.
		{"rowsort", "2 b 1 c 10 a", true},
		{"rowsort", "1 c 10 b 2 a", false},
		{"valuesort", "1 10 2 a b c", true},
		{"valuesort", "a b c 1 2 10", true},
		{"valuesort", "1 10 2 a b d", false},
	}
	for _, c := range cases {
		text := "query IT " + c.mode + "\nq\n----\n" + strings.ReplaceAll(c.exp, " ", "\n") + "\n"
		res, _ := run(t, text, answers)
		if ok := len(res.Failures) == 0; ok != c.ok {
			t.Errorf("%s with %q: passed=%v, want %v; %v", c.mode, c.exp, ok, c.ok, res.Failures)
		}
	}
}

func TestRowPerLineFallback(t *testing.T) {
	answers := map[string]fakeResult{
		"q": {cols: []string{"a", "b", "c"}, rows: [][]any{{int64(2), "b", 1.5}, {int64(1), "", nil}}},
	}
	pass := []string{
		"query ITR\nq\n----\n2 b 1.500\n1 (empty) NULL\n",
		"query ITR\nq\n----\n2\tb\t1.500\n1\t(empty)\tNULL\n",
		"query ITR rowsort\nq\n----\n1 (empty) NULL\n2 b 1.500\n",
		"query ITR rowsort\nq\n----\n2 b 1.500\n1 (empty) NULL\n",
	}
	for _, text := range pass {
		if res, _ := run(t, text, answers); len(res.Failures) != 0 {
			t.Errorf("%q: %v", text, res.Failures)
		}
	}
	res, _ := run(t, "query ITR\nq\n----\n2 b 1.500\n1 (empty) 0.000\n", answers)
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Msg, "--- got\n2 b 1.500\n1 (empty) NULL") {
		t.Errorf("row-per-line mismatch not reported in row form: %v", res.Failures)
	}
}

func TestHashThreshold(t *testing.T) {
	answers := map[string]fakeResult{
		"q": {cols: []string{"a", "b"}, rows: [][]any{{int64(3), int64(4)}, {int64(1), int64(2)}}},
	}
	good := "4 values hashing to 302c28003d487124d97c242de94da856"
	res, _ := run(t, "hash-threshold 3\n\nquery II rowsort\nq\n----\n"+good+"\n", answers)
	expectCounts(t, res, 1, 1, 0, 0)

	bad := "4 values hashing to d8b14206c9ebc5399fb0ec39771ee333"
	res, _ = run(t, "hash-threshold 3\n\nquery II rowsort\nq\n----\n"+bad+"\n", answers)
	expectCounts(t, res, 1, 0, 0, 1)
	if !strings.Contains(res.Failures[0].Msg, "--- got\n"+good) {
		t.Errorf("hash mismatch message: %s", res.Failures[0].Msg)
	}
	// Over the threshold, a wrong value list is reported as the hash.
	res, _ = run(t, "hash-threshold 3\n\nquery II rowsort\nq\n----\n1\n2\n3\n5\n", answers)
	if len(res.Failures) != 1 || !strings.HasSuffix(res.Failures[0].Msg, "--- got\n"+good) {
		t.Errorf("over-threshold mismatch: %v", res.Failures)
	}
}

func TestSkipifOnlyifHalt(t *testing.T) {
	boom := errors.New("boom")
	answers := map[string]fakeResult{"bad": {err: boom}}
	text := `skipif streamsql
statement ok
bad

onlyif duckdb
statement ok
bad

onlyif STREAMSQL
statement error boom
bad

skipif duckdb
statement ok
good

onlyif duckdb
halt

halt

statement ok
bad
`
	res, f := run(t, text, answers)
	expectCounts(t, res, 4, 2, 2, 0)
	if got := strings.Join(f.seen, ","); got != "bad,good" {
		t.Errorf("executed %q, want bad,good", got)
	}
}

func TestErrors(t *testing.T) {
	answers := map[string]fakeResult{
		"bad":  {err: errors.New(`table "nope" not found at line 1, column 15`)},
		"good": {cols: []string{"a"}, rows: [][]any{{int64(1)}}},
	}
	cases := []struct {
		text string
		fail string // "" = pass, else a substring of the failure message
	}{
		{"statement error\nbad\n", ""},
		{"statement error not found\nbad\n", ""},
		{`statement error table "\w+" not found at line \d+`, ""},
		{"statement error ^not found\nbad\n", `expected an error matching /^not found/, got: table "nope"`},
		{"statement error\ngood\n", "expected an error, but it succeeded"},
		{"statement ok\nbad\n", `expected success, got error: table "nope" not found`},
		{"query error column 15\nbad\n", ""},
		{"query error\ngood\n", "but it succeeded"},
		{"query I\nbad\n----\n1\n", "expected success, got error"},
		{"statement error\nbad\n----\nnot found at line 1\n", ""},
		{"statement error\nbad\n----\nsomething else\n", `an error containing "something else"`},
	}
	for _, c := range cases {
		text := c.text
		if !strings.Contains(text, "\n") {
			text += "\nbad\n"
		}
		res, _ := run(t, text, answers)
		switch {
		case c.fail == "" && len(res.Failures) != 0:
			t.Errorf("%q: unexpected failure %v", c.text, res.Failures)
		case c.fail != "" && (len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Msg, c.fail)):
			t.Errorf("%q: failures %v, want one containing %q", c.text, res.Failures, c.fail)
		}
	}
}

func TestUnexpectedErrorContinues(t *testing.T) {
	answers := map[string]fakeResult{
		"bad": {err: errors.New("boom")},
		"one": {cols: []string{"a"}, rows: [][]any{{int64(1)}}},
	}
	text := "statement ok\nbad\n\nquery I\nbad\n----\n1\n\nquery I\none\n----\n1\n\nquery II\none\n----\n1\n"
	res, _ := run(t, text, answers)
	expectCounts(t, res, 4, 1, 0, 3)
	if msg := res.Failures[2].Msg; !strings.Contains(msg, "declares 2 columns (II), got 1") {
		t.Errorf("column count failure: %s", msg)
	}
}

func TestLabels(t *testing.T) {
	answers := map[string]fakeResult{
		"a": {cols: []string{"x"}, rows: [][]any{{int64(1)}}},
		"b": {cols: []string{"x"}, rows: [][]any{{int64(1)}}},
		"c": {cols: []string{"x"}, rows: [][]any{{int64(2)}}},
	}
	text := "query I nosort same\na\n----\n1\n\nquery I nosort same\nb\n----\n1\n\nquery I nosort same\nc\n----\n2\n"
	res, _ := run(t, text, answers)
	expectCounts(t, res, 3, 2, 0, 1)
	if !strings.Contains(res.Failures[0].Msg, "label same") {
		t.Errorf("label failure: %v", res.Failures)
	}
}

type decimal struct{ s string }

func (d decimal) String() string { return d.s }

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v      any
		letter byte
		dbType string
		want   string
	}{
		{nil, 'I', "", "NULL"},
		{nil, 'T', "", "NULL"},
		{"", 'T', "", "(empty)"},
		{"", 'I', "", "(empty)"},
		{[]byte(""), 'T', "", "(empty)"},
		{"hello world", 'T', "", "hello world"},
		{" padded ", 'T', "", " padded "},
		{"a\nb", 'T', "", "a\nb"},
		{"abc", 'I', "", "abc"},
		{[]byte("bytes"), 'T', "", "bytes"},
		{true, 'T', "", "true"},
		{false, 'I', "", "false"},
		{int64(-42), 'I', "", "-42"},
		{int8(7), 'I', "", "7"},
		{int32(7), 'T', "", "7"},
		{uint64(math.MaxUint64), 'I', "", "18446744073709551615"},
		{int64(3), 'R', "", "3.000"},
		{uint16(3), 'R', "", "3.000"},
		{2.5, 'R', "", "2.500"},
		{float32(0.25), 'R', "", "0.250"},
		{2.0004, 'R', "", "2.000"},
		{-0.0001, 'R', "", "0.000"},
		{3.0, 'I', "", "3"},
		{3.9, 'I', "", "3"},
		{-3.9, 'I', "", "-3"},
		{1e20, 'I', "", "100000000000000000000"},
		{0.1, 'T', "", "0.1"},
		{1e6, 'T', "", "1000000"},
		{float32(1.5), 'T', "", "1.5"},
		{math.NaN(), 'R', "", "NaN"},
		{math.Inf(1), 'T', "", "Infinity"},
		{math.Inf(-1), 'I', "", "-Infinity"},
		{"12.50", 'R', "DECIMAL(10,2)", "12.500"},
		{"12.50", 'T', "DECIMAL(10,2)", "12.50"},
		{decimal{"1.25"}, 'T', "DECIMAL", "1.25"},
		{decimal{"1.25"}, 'R', "DECIMAL", "1.250"},
		{decimal{""}, 'T', "", "(empty)"},
		{big.NewInt(12345), 'I', "HUGEINT", "12345"},
		{ts("2024-01-01 00:00:01"), 'T', "TIMESTAMP", "2024-01-01 00:00:01"},
		{ts("2024-01-01 00:00:09.5"), 'T', "TIMESTAMP(3)", "2024-01-01 00:00:09.500"},
		{ts("2024-01-01 00:00:09.007"), 'T', "", "2024-01-01 00:00:09.007"},
		{ts("2024-01-01 00:00:09.000123"), 'T', "TIMESTAMP", "2024-01-01 00:00:09.000123"},
		{ts("2024-03-05 00:00:00"), 'T', "TIMESTAMP", "2024-03-05 00:00:00"},
		{ts("2024-03-05 00:00:00"), 'T', "DATE", "2024-03-05"},
		{ts("2024-03-05 00:00:00"), 'T', "date", "2024-03-05"},
		{ts("2024-03-05 10:00:00"), 'T', "DATETIME", "2024-03-05 10:00:00"},
		{time.Date(2024, 1, 1, 2, 0, 0, 0, time.FixedZone("X", 3600)), 'T', "TIMESTAMP", "2024-01-01 01:00:00"},
		{struct{ A int }{1}, 'T', "", "{1}"},
	}
	for _, c := range cases {
		if got := formatValue(c.v, c.letter, c.dbType); got != c.want {
			t.Errorf("formatValue(%#v, %c, %q) = %q, want %q", c.v, c.letter, c.dbType, got, c.want)
		}
	}
}

func TestEmptyResult(t *testing.T) {
	answers := map[string]fakeResult{
		"none": {cols: []string{"a", "b"}},
		"one":  {cols: []string{"a", "b"}, rows: [][]any{{int64(1), int64(2)}}},
	}
	// "----" followed by a blank line, and no "----" at all, both expect no rows.
	text := "query II\nnone\n----\n\nquery II\nnone\n\nquery II\none\n----\n\n# trailing\n"
	res, _ := run(t, text, answers)
	expectCounts(t, res, 3, 2, 0, 1)
	if len(res.Failures) == 1 && res.Failures[0].Line != 8 {
		t.Errorf("failure at line %d, want 8", res.Failures[0].Line)
	}
}
