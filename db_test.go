package streamsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

// ---- helpers shared by the root test files ----

func openT(t testing.TB, path string, opts ...streamsql.Option) *streamsql.DB {
	t.Helper()
	db, err := streamsql.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db *streamsql.DB, q string, args ...any) streamsql.Result {
	t.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("Exec(%s): %v", q, err)
	}
	return res
}

// queryRows runs q and returns every row's values.
func queryRows(t testing.TB, db *streamsql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("Query(%s): %v", q, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v := rows.Values()
		out = append(out, append([]any(nil), v...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("Query(%s): rows: %v", q, err)
	}
	return out
}

// queryStrings renders every row as one string (values joined with |), in result order.
func queryStrings(t testing.TB, db *streamsql.DB, q string, args ...any) []string {
	t.Helper()
	var out []string
	for _, r := range queryRows(t, db, q, args...) {
		out = append(out, rowString(r))
	}
	return out
}

func rowString(r []any) string {
	parts := make([]string, len(r))
	for i, v := range r {
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case time.Time:
			parts[i] = x.UTC().Format("2006-01-02 15:04:05.000")
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, "|")
}

func queryInt(t testing.TB, db *streamsql.DB, q string, args ...any) int64 {
	t.Helper()
	rows := queryRows(t, db, q, args...)
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("Query(%s): want one value, got %v", q, rows)
	}
	v, ok := rows[0][0].(int64)
	if !ok {
		t.Fatalf("Query(%s): want int64, got %T %v", q, rows[0][0], rows[0][0])
	}
	return v
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return t
}

// ---- Open ----

func TestDBOpenInMemory(t *testing.T) {
	for _, path := range []string{"", ":memory:"} {
		t.Run(fmt.Sprintf("%q", path), func(t *testing.T) {
			db := openT(t, path)
			mustExec(t, db, "CREATE TABLE t (a BIGINT)")
			mustExec(t, db, "INSERT INTO t VALUES (1), (2)")
			if n := queryInt(t, db, "SELECT COUNT(*) FROM t"); n != 2 {
				t.Fatalf("count = %d, want 2", n)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatalf("second Close: %v (Close should be idempotent)", err)
			}
			if _, err := db.Exec("SELECT 1"); err == nil {
				t.Fatal("Exec after Close succeeded")
			}
		})
	}
	// Two in-memory databases are independent.
	a, b := openT(t, ""), openT(t, ":memory:")
	mustExec(t, a, "CREATE TABLE t (a BIGINT)")
	if _, err := b.Exec("SELECT * FROM t"); err == nil {
		t.Fatal("table of one in-memory database visible in another")
	}
}

func TestDBOpenOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "db")
	db := openT(t, dir)
	mustExec(t, db, "CREATE TABLE t (a BIGINT, s VARCHAR)")
	res := mustExec(t, db, "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL)")
	if res.RowsAffected != 3 {
		t.Fatalf("RowsAffected = %d, want 3", res.RowsAffected)
	}
	got := queryStrings(t, db, "SELECT a, s FROM t ORDER BY a")
	want := []string{"1|x", "2|y", "3|NULL"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(matches) == 0 {
		t.Fatalf("nothing written under %s", dir)
	}
}

// ---- types ----

func TestDBAllTypesRoundTrip(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, `CREATE TABLE ty (b BOOLEAN, i INT, bi BIGINT, d DOUBLE, amt DECIMAL(10,2),
		s VARCHAR, dt DATE, ts TIMESTAMP(3))`)
	mustExec(t, db, `INSERT INTO ty VALUES
		(true, 42, 9000000000, 2.5, 12.34, 'héllo', DATE '2024-02-29', TIMESTAMP '2024-03-01 12:34:56.789'),
		(false, -7, -1, -0.125, -0.05, '', DATE '1970-01-01', TIMESTAMP '1999-12-31 23:59:59'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	rows, err := db.Query("SELECT b, i, bi, d, amt, s, dt, ts FROM ty ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	wantCols := []string{"b", "i", "bi", "d", "amt", "s", "dt", "ts"}
	if got := rows.Columns(); !reflect.DeepEqual(got, wantCols) {
		t.Errorf("Columns = %v, want %v", got, wantCols)
	}
	wantTypes := []string{"BOOLEAN", "INT", "BIGINT", "DOUBLE", "DECIMAL(10,2)", "VARCHAR", "DATE", "TIMESTAMP(3)"}
	if got := rows.ColumnTypes(); !reflect.DeepEqual(got, wantTypes) {
		t.Errorf("ColumnTypes = %v, want %v", got, wantTypes)
	}
	want := [][]any{
		// ORDER BY puts NULLs first ascending.
		{nil, nil, nil, nil, nil, nil, nil, nil},
		{false, int64(-7), int64(-1), -0.125, "-0.05", "", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{true, int64(42), int64(9000000000), 2.5, "12.34", "héllo", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 1, 12, 34, 56, 789e6, time.UTC)},
	}
	var got [][]any
	for rows.Next() {
		got = append(got, append([]any(nil), rows.Values()...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %v", len(got), len(want), got)
	}
	for r := range want {
		for c := range want[r] {
			g, w := got[r][c], want[r][c]
			if gt, ok := g.(time.Time); ok {
				if gt.Location() != time.UTC {
					t.Errorf("row %d col %s: time %v is not in UTC", r, wantCols[c], gt)
				}
				if wt, ok := w.(time.Time); !ok || !gt.Equal(wt) {
					t.Errorf("row %d col %s: got %v, want %v", r, wantCols[c], g, w)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("row %d col %s: got %#v (%T), want %#v (%T)", r, wantCols[c], g, g, w, w)
			}
		}
	}

	// Scan into typed destinations, and placeholders with Go values of every type.
	mustExec(t, db, "DELETE FROM ty")
	tsv := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	mustExec(t, db, "INSERT INTO ty VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		true, int64(5), int64(1)<<40, 1.5, "99.90", "p", "2020-01-02", tsv)
	rows2, err := db.Query("SELECT b, i, bi, d, amt, s, dt, ts, s AS raw FROM ty")
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	if !rows2.Next() {
		t.Fatalf("no row: %v", rows2.Err())
	}
	var (
		b      bool
		i, bi  int64
		d      float64
		dec, s string
		dt, tt time.Time
		raw    []byte
	)
	if err := rows2.Scan(&b, &i, &bi, &d, &dec, &s, &dt, &tt, &raw); err != nil {
		t.Fatal(err)
	}
	if !b || i != 5 || bi != 1<<40 || d != 1.5 || dec != "99.90" || s != "p" || string(raw) != "p" ||
		!dt.Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)) || !tt.Equal(tsv) {
		t.Fatalf("Scan got %v %v %v %v %q %q %v %v", b, i, bi, d, dec, s, dt, tt)
	}
	if rows2.Next() {
		t.Fatal("more than one row")
	}
}

// A DATE value read back as time.Time can be written back through a placeholder: time.Time
// is the only Go type the API gives DATE values.
func TestDBTimePlaceholderIntoDate(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE d (dt DATE)")
	mustExec(t, db, "INSERT INTO d VALUES (DATE '2020-01-02')")
	v := queryRows(t, db, "SELECT dt FROM d")[0][0]
	if _, err := db.Exec("INSERT INTO d VALUES (?)", v); err != nil {
		t.Fatalf("inserting the time.Time read from a DATE column back into it: %v", err)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM d WHERE dt = DATE '2020-01-02'"); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
}

// Placeholders take the Go types a user naturally passes: int, int32, float32... (the
// database/sql driver converts them; the Go API must accept them too).
func TestDBPlaceholderGoTypes(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (a BIGINT, b INT, c DOUBLE, s VARCHAR)")
	for _, args := range [][]any{
		{1, 2, 1.5, "x"},
		{int32(3), int16(4), float32(2.5), []byte("y")},
		{int8(5), uint8(6), 3.5, "z"},
		{uint32(7), uint16(8), 4, "w"},
	} {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?)", args...); err != nil {
			t.Errorf("INSERT with %T %T %T %T: %v", args[0], args[1], args[2], args[3], err)
		}
	}
	if _, err := db.Query("SELECT a FROM t WHERE a = ?", 1); err != nil {
		t.Errorf("WHERE a = ? with an int: %v", err)
	}
	if _, err := db.Exec("INSERT INTO t (a) VALUES (?)", struct{}{}); err == nil {
		t.Error("a struct placeholder value was accepted")
	}
}

// TestDBPlaceholdersWhereTheFrontPassRewrites: placeholders bind in the order written where
// the front pass moves text (OFFSET/FETCH, FILTER (WHERE ...)) or reads a primary expression
// (IS DISTINCT FROM, ::T), as the same query with the values written in.
func TestDBPlaceholdersWhereTheFrontPassRewrites(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE n (x BIGINT); INSERT INTO n VALUES (1), (2), (3), (4), (5), (6), (7)")
	for _, c := range []struct {
		q, lit string
		args   []any
	}{
		{"SELECT x FROM n ORDER BY x OFFSET ? ROWS FETCH FIRST ? ROWS ONLY", "SELECT x FROM n ORDER BY x OFFSET 1 ROWS FETCH FIRST 2 ROWS ONLY", []any{1, 2}},
		{"SELECT x FROM n ORDER BY x OFFSET ? ROWS FETCH NEXT ? ROWS ONLY", "SELECT x FROM n ORDER BY x OFFSET 4 ROWS FETCH NEXT 1 ROWS ONLY", []any{4, 1}},
		{"SELECT SUM(x + ?) FILTER (WHERE x > ?) FROM n", "SELECT SUM(x + 100) FILTER (WHERE x > 5) FROM n", []any{100, 5}},
		{"SELECT x FROM n WHERE x IS NOT DISTINCT FROM ?", "SELECT x FROM n WHERE x IS NOT DISTINCT FROM 3", []any{3}},
		{"SELECT x FROM n WHERE x IS DISTINCT FROM ? ORDER BY x", "SELECT x FROM n WHERE x IS DISTINCT FROM 3 ORDER BY x", []any{3}},
		{"SELECT x FROM n WHERE x IS DISTINCT FROM -? ORDER BY x", "SELECT x FROM n WHERE x IS DISTINCT FROM 3 ORDER BY x", []any{-3}},
		{"SELECT ?::BIGINT + x FROM n WHERE x = ?", "SELECT '10'::BIGINT + x FROM n WHERE x = 2", []any{"10", 2}},
	} {
		got, want := queryStrings(t, db, c.q, c.args...), queryStrings(t, db, c.lit)
		if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
			t.Errorf("%s with %v: %v, want %v (%s)", c.q, c.args, got, want, c.lit)
		}
	}
}

// ---- persistence ----

// TestDBViewOverViewAfterRestart: a view's rows keep, through a checkpoint and a restart,
// the watermark each was judged against, so a window over the view created after the restart
// finds late what it would have found late before.
func TestDBViewOverViewAfterRestart(t *testing.T) {
	dir := t.TempDir()
	const window = `SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE f, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end`
	db := openT(t, dir)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
		CREATE MATERIALIZED VIEW f AS SELECT v, ts FROM t WHERE v > 0;
		INSERT INTO t VALUES (1, 1, TIMESTAMP '2024-01-01 00:00:30');
		INSERT INTO t VALUES (2, 2, TIMESTAMP '2024-01-01 00:00:02');
		CREATE MATERIALIZED VIEW w1 AS `+window+`;
		CHECKPOINT`)
	want := fmt.Sprint(queryStrings(t, db, "SELECT window_start, n FROM w1"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, dir)
	mustExec(t, db, "CREATE MATERIALIZED VIEW w2 AS "+window)
	if got := fmt.Sprint(queryStrings(t, db, "SELECT window_start, n FROM w2")); got != want {
		t.Errorf("a window over f created after a restart holds %s; before it, %s", got, want)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM system.late_rows WHERE view_name = 'w2'"); n != 1 {
		t.Errorf("w2 has %d late rows, want 1 (the 00:00:02 row)", n)
	}
}

func TestDBReopenKeepsTablesRowsAndViews(t *testing.T) {
	dir := t.TempDir()
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	mustExec(t, db, `CREATE TABLE dim (id INT, name VARCHAR, price DECIMAL(10,2), d DATE)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW per10s AS
		SELECT window_start, window_end, auction, COUNT(*) AS n, SUM(price) AS total
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW closed AS
		SELECT window_start, auction, COUNT(*) AS n
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction EMIT ON WINDOW CLOSE`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW totals AS SELECT auction, COUNT(*) AS n, SUM(price) AS s FROM bids GROUP BY auction`)
	mustExec(t, db, `INSERT INTO bids VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01'),
		(1, 20, TIMESTAMP '2024-01-01 00:00:09.500'), (2, 5, TIMESTAMP '2024-01-01 00:00:10')`)
	mustExec(t, db, `INSERT INTO bids VALUES (2, 7, TIMESTAMP '2024-01-01 00:00:11'),
		(3, 1, TIMESTAMP '2024-01-01 00:00:02')`) // the last row is late for the windowed views
	mustExec(t, db, `INSERT INTO dim VALUES (1, 'one', 1.50, DATE '2024-01-01'), (2, NULL, NULL, NULL)`)
	mustExec(t, db, "FLUSH")

	queries := []string{
		"SELECT auction, price, ts FROM bids ORDER BY ts, auction",
		"SELECT id, name, price, d FROM dim ORDER BY id",
		"SELECT window_start, window_end, auction, n, total FROM per10s ORDER BY window_start, auction",
		"SELECT window_start, auction, n FROM closed ORDER BY window_start, auction",
		"SELECT auction, n, s FROM totals ORDER BY auction",
		"SELECT view_name, table_name, event_time FROM system.late_rows ORDER BY view_name",
	}
	before := map[string][]string{}
	for _, q := range queries {
		before[q] = queryStrings(t, db, q)
	}
	// Sanity: the views hold what the spec says before we compare across the reopen.
	if got, want := before[queries[2]], []string{
		"2024-01-01 00:00:00.000|2024-01-01 00:00:10.000|1|2|30",
		"2024-01-01 00:00:10.000|2024-01-01 00:00:20.000|2|2|12",
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("per10s = %v, want %v", got, want)
	}
	if got, want := before[queries[3]], []string{"2024-01-01 00:00:00.000|1|2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("closed = %v, want %v", got, want)
	}
	if got, want := before[queries[4]], []string{"1|2|30", "2|2|12", "3|1|1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("totals = %v, want %v", got, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for round := 0; round < 2; round++ {
		db2, err := streamsql.Open(dir)
		if err != nil {
			t.Fatalf("reopen %d: %v", round, err)
		}
		for _, q := range queries {
			if got := queryStrings(t, db2, q); !reflect.DeepEqual(got, before[q]) {
				t.Errorf("reopen %d: %s\n got  %v\n want %v", round, q, got, before[q])
			}
		}
		if round == 0 {
			// The reopened views keep following inserts.
			mustExec(t, db2, "INSERT INTO bids VALUES (1, 100, TIMESTAMP '2024-01-01 00:00:25')")
			mustExec(t, db2, "FLUSH")
			before[queries[0]] = queryStrings(t, db2, queries[0])
			before[queries[2]] = queryStrings(t, db2, queries[2])
			before[queries[3]] = queryStrings(t, db2, queries[3])
			before[queries[4]] = queryStrings(t, db2, queries[4])
			if got, want := before[queries[3]], []string{"2024-01-01 00:00:00.000|1|2", "2024-01-01 00:00:10.000|2|2"}; !reflect.DeepEqual(got, want) {
				t.Errorf("closed after reopen+insert = %v, want %v", got, want)
			}
			if got, want := before[queries[4]], []string{"1|3|130", "2|2|12", "3|1|1"}; !reflect.DeepEqual(got, want) {
				t.Errorf("totals after reopen+insert = %v, want %v", got, want)
			}
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDBSecondOpenOfPathInUse(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir)
	mustExec(t, db, "CREATE TABLE t (a BIGINT)")
	mustExec(t, db, "INSERT INTO t VALUES (1)")

	for i := 0; i < 2; i++ {
		db2, err := streamsql.Open(dir)
		if err == nil {
			db2.Close()
			t.Fatal("second Open of a path in use succeeded")
		}
		msg := strings.ToLower(err.Error())
		if !strings.Contains(msg, "lock") && !strings.Contains(msg, "in use") {
			t.Errorf("second Open error does not mention the lock or that the path is in use: %v", err)
		}
	}
	// The first DB still works.
	mustExec(t, db, "INSERT INTO t VALUES (2)")
	if n := queryInt(t, db, "SELECT COUNT(*) FROM t"); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// And after it is closed the path opens again with everything in it.
	db3 := openT(t, dir)
	if got := queryStrings(t, db3, "SELECT a FROM t ORDER BY a"); !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Fatalf("after reopen: %v", got)
	}
}

// ---- atomicity and errors ----

func TestDBStatementsAreAtomic(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			path := ""
			if disk {
				path = t.TempDir()
			}
			db := openT(t, path)
			mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, n INT, s VARCHAR, ts TIMESTAMP(3),
				WATERMARK FOR ts AS ts)`)
			mustExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n, SUM(id) AS s FROM t")
			mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'a', TIMESTAMP '2024-01-01 00:00:00')")
			bad := []struct{ name, sql string }{
				{"not null", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (NULL, 3, 'c', TIMESTAMP '2024-01-01 00:00:02')"},
				{"type error", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 'notanint', 'c', TIMESTAMP '2024-01-01 00:00:02')"},
				{"INT overflow", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 3000000000, 'c', TIMESTAMP '2024-01-01 00:00:02')"},
				{"null event time", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 3, 'c', NULL)"},
				{"bad timestamp", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 3, 'c', 'yesterday')"},
				{"arity", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 3, 'c')"},
				{"division by zero", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'), (3, 1/0, 'c', TIMESTAMP '2024-01-01 00:00:02')"},
				{"second statement fails", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01'); INSERT INTO t VALUES (NULL, 3, 'c', TIMESTAMP '2024-01-01 00:00:02')"},
				{"syntax error", "INSERT INTO t VALUES (2, 2, 'b', TIMESTAMP '2024-01-01 00:00:01') (3"},
			}
			for _, b := range bad {
				_, err := db.Exec(b.sql)
				if err == nil {
					t.Errorf("%s: Exec succeeded, want an error", b.name)
					continue
				}
				t.Logf("%s: %v", b.name, err)
				got := queryStrings(t, db, "SELECT id FROM t ORDER BY id")
				if b.name == "second statement fails" {
					// Statements of a multi-statement Exec are each atomic; the first one is
					// allowed to have been applied. Remove it again if so.
					if len(got) == 2 {
						mustExec(t, db, "DELETE FROM t WHERE id = 2")
						got = queryStrings(t, db, "SELECT id FROM t ORDER BY id")
					}
				}
				if !reflect.DeepEqual(got, []string{"1"}) {
					t.Fatalf("%s: after failed statement table holds %v, want [1]", b.name, got)
				}
				if got := queryStrings(t, db, "SELECT n, s FROM c"); !reflect.DeepEqual(got, []string{"1|1"}) {
					t.Fatalf("%s: after failed statement view holds %v, want [1|1]", b.name, got)
				}
			}
			// The database stays open and usable after the errors.
			mustExec(t, db, "INSERT INTO t VALUES (5, 5, 'e', TIMESTAMP '2024-01-01 00:00:05')")
			mustExec(t, db, "FLUSH")
			if got := queryStrings(t, db, "SELECT n, s FROM c"); !reflect.DeepEqual(got, []string{"2|6"}) {
				t.Fatalf("view after recovery from errors = %v, want [2|6]", got)
			}
			if disk {
				// Nothing of the refused statements reached the disk either.
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db2 := openT(t, path)
				if got := queryStrings(t, db2, "SELECT id FROM t ORDER BY id"); !reflect.DeepEqual(got, []string{"1", "5"}) {
					t.Fatalf("after reopen table holds %v, want [1 5]", got)
				}
				if got := queryStrings(t, db2, "SELECT n, s FROM c"); !reflect.DeepEqual(got, []string{"2|6"}) {
					t.Fatalf("after reopen view holds %v, want [2|6]", got)
				}
			}
		})
	}
}

func TestDBStaysOpenAfterErrors(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (a BIGINT)")
	for _, q := range []string{
		"SELEC 1",
		"SELECT * FROM nope",
		"SELECT nope FROM t",
		"CREATE TABLE t (a BIGINT)",
		"INSERT INTO t VALUES ('x')",
		"SELECT 1/0",
		"CREATE MATERIALIZED VIEW v AS SELECT * FROM nope",
		"SUBSCRIBE nope",
	} {
		if _, err := db.Exec(q); err == nil {
			t.Errorf("%s: no error", q)
		} else if err.Error() == "" {
			t.Errorf("%s: empty error", q)
		}
	}
	if _, err := db.Query("SELECT * FROM nope"); err == nil {
		t.Error("Query of a missing table: no error")
	}
	// Exec of SUBSCRIBE is refused (it returns rows) but leaves the DB usable.
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM t")
	if _, err := db.Exec("SUBSCRIBE v"); err == nil {
		t.Error("Exec(SUBSCRIBE) succeeded")
	}
	// Placeholder count mismatch.
	if _, err := db.Exec("INSERT INTO t VALUES (?)"); err == nil {
		t.Error("missing argument: no error")
	}
	if _, err := db.Exec("INSERT INTO t VALUES (?)", 1, 2); err == nil {
		t.Error("extra argument: no error")
	}
	// A cancelled context is refused.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (9)"); !errors.Is(err, context.Canceled) {
		t.Errorf("ExecContext with a cancelled context: err = %v, want context.Canceled", err)
	}
	mustExec(t, db, "INSERT INTO t VALUES (1)")
	mustExec(t, db, "FLUSH")
	if got := queryStrings(t, db, "SELECT n FROM v"); !reflect.DeepEqual(got, []string{"1"}) {
		t.Fatalf("view = %v, want [1]", got)
	}
}

// ---- Arrow ----

func readAll(t testing.TB, rr array.RecordReader) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	var recs []arrow.RecordBatch
	for rr.Next() {
		r := rr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return rr.Schema(), recs
}

func TestDBQueryArrowExternalTypes(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, `CREATE TABLE ty (b BOOLEAN, i INT, bi BIGINT, d DOUBLE, amt DECIMAL(10,2),
		s VARCHAR, dt DATE, ts TIMESTAMP(3))`)
	mustExec(t, db, `INSERT INTO ty VALUES
		(true, 42, 9000000000, 2.5, 12.34, 'x', DATE '2024-02-29', TIMESTAMP '2024-03-01 12:34:56.789'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(false, -7, -1, -0.125, -0.05, 'yy', DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.999')`)
	rr, err := db.QueryArrow(context.Background(), "SELECT b, i, bi, d, amt, s, dt, ts FROM ty ORDER BY bi DESC")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	schema, recs := readAll(t, rr)
	wantTypes := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float64,
		&arrow.Decimal128Type{Precision: 10, Scale: 2},
		arrow.BinaryTypes.String,
		arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
	}
	if schema.NumFields() != len(wantTypes) {
		t.Fatalf("schema %v", schema)
	}
	for i, w := range wantTypes {
		f := schema.Field(i)
		if !arrow.TypeEqual(f.Type, w) {
			t.Errorf("column %s: Arrow type %s, want %s", f.Name, f.Type, w)
		}
	}
	// Collect values per column across batches.
	var n int64
	for _, r := range recs {
		n += r.NumRows()
		for i := range wantTypes {
			if !arrow.TypeEqual(r.Column(i).DataType(), schema.Field(i).Type) {
				t.Errorf("batch column %d has type %s, schema says %s", i, r.Column(i).DataType(), schema.Field(i).Type)
			}
		}
	}
	if n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
	// Single-batch check of values (small result): find row positions across batches.
	type cell struct {
		rec arrow.RecordBatch
		row int
	}
	var cells []cell
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			cells = append(cells, cell{r, i})
		}
	}
	// ORDER BY bi DESC: NULLs last descending.
	r0, r1, r2 := cells[0], cells[1], cells[2]
	col := func(c cell, i int) arrow.Array { return c.rec.Column(i) }
	if v := col(r0, 0).(*array.Boolean).Value(r0.row); !v {
		t.Error("b row0")
	}
	if v := col(r0, 1).(*array.Int32).Value(r0.row); v != 42 {
		t.Errorf("i row0 = %d", v)
	}
	if v := col(r0, 2).(*array.Int64).Value(r0.row); v != 9000000000 {
		t.Errorf("bi row0 = %d", v)
	}
	if v := col(r0, 3).(*array.Float64).Value(r0.row); v != 2.5 {
		t.Errorf("d row0 = %v", v)
	}
	if v := col(r0, 4).(*array.Decimal128).Value(r0.row); v != decimal128.FromI64(1234) {
		t.Errorf("dec row0 = %v, want 1234 (scale 2)", v)
	}
	if v := col(r1, 4).(*array.Decimal128).Value(r1.row); v != decimal128.FromI64(-5) {
		t.Errorf("dec row1 = %v, want -5 (scale 2)", v)
	}
	if v := col(r0, 5).(*array.String).Value(r0.row); v != "x" {
		t.Errorf("s row0 = %q", v)
	}
	if v := col(r0, 6).(*array.Date32).Value(r0.row); v != arrow.Date32FromTime(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("dt row0 = %v", v)
	}
	if v := col(r1, 6).(*array.Date32).Value(r1.row); v != -1 {
		t.Errorf("dt row1 = %v, want -1 (1969-12-31)", v)
	}
	if v := col(r0, 7).(*array.Timestamp).Value(r0.row); int64(v) != time.Date(2024, 3, 1, 12, 34, 56, 789e6, time.UTC).UnixMilli() {
		t.Errorf("ts row0 = %v", v)
	}
	if v := col(r1, 7).(*array.Timestamp).Value(r1.row); v != -1 {
		t.Errorf("ts row1 = %v, want -1", v)
	}
	if v := col(r1, 1).(*array.Int32).Value(r1.row); v != -7 {
		t.Errorf("i row1 = %d", v)
	}
	for i := range wantTypes {
		if !col(r2, i).IsNull(r2.row) {
			t.Errorf("column %d of the NULL row is not null", i)
		}
		if col(r0, i).IsNull(r0.row) {
			t.Errorf("column %d of row 0 is null", i)
		}
	}

	// An empty result still has the schema.
	rr2, err := db.QueryArrow(context.Background(), "SELECT i, amt FROM ty WHERE false")
	if err != nil {
		t.Fatal(err)
	}
	defer rr2.Release()
	s2, recs2 := readAll(t, rr2)
	if s2.NumFields() != 2 || !arrow.TypeEqual(s2.Field(0).Type, arrow.PrimitiveTypes.Int32) {
		t.Errorf("empty result schema %v", s2)
	}
	for _, r := range recs2 {
		if r.NumRows() != 0 {
			t.Errorf("empty result has %d rows", r.NumRows())
		}
	}
}

// arrowEvBatch builds an external-typed batch for table ev(k INT, v BIGINT, amt DECIMAL(10,2),
// d DATE, ts TIMESTAMP(3), s VARCHAR).
func arrowEvBatch(t testing.TB, names []string, ks []int32, vs []int64, ms []int64) arrow.RecordBatch {
	t.Helper()
	if names == nil {
		names = []string{"k", "v", "amt", "d", "ts", "s"}
	}
	mem := memory.NewGoAllocator()
	fields := []arrow.Field{
		{Name: names[0], Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: names[1], Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: names[2], Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: names[3], Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: names[4], Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: names[5], Type: arrow.BinaryTypes.String, Nullable: true},
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range ks {
		b.Field(0).(*array.Int32Builder).Append(ks[i])
		b.Field(1).(*array.Int64Builder).Append(vs[i])
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(vs[i]*100 + 25))
		b.Field(3).(*array.Date32Builder).Append(arrow.Date32FromTime(time.UnixMilli(ms[i]).UTC()))
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(ms[i]))
		if i%2 == 0 {
			b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i))
		} else {
			b.Field(5).(*array.StringBuilder).AppendNull()
		}
	}
	return b.NewRecordBatch()
}

func TestDBAppendArrow(t *testing.T) {
	db := openT(t, "")
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE ev (k INT, v BIGINT, amt DECIMAL(10,2), d DATE, ts TIMESTAMP(3), s VARCHAR,
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW w AS
		SELECT window_start, k, COUNT(*) AS n, SUM(v) AS sv
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k`)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	rec := arrowEvBatch(t, nil, []int32{1, 2, 1, 1}, []int64{10, 20, 30, 40},
		[]int64{base + 1000, base + 2000, base + 9000, base + 12000})
	defer rec.Release()
	if err := db.Append(ctx, "ev", rec); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "FLUSH")
	got := queryStrings(t, db, "SELECT k, v, amt, d, ts, s FROM ev ORDER BY v")
	want := []string{
		"1|10|10.25|2024-01-01 00:00:00.000|2024-01-01 00:00:01.000|s0",
		"2|20|20.25|2024-01-01 00:00:00.000|2024-01-01 00:00:02.000|NULL",
		"1|30|30.25|2024-01-01 00:00:00.000|2024-01-01 00:00:09.000|s2",
		"1|40|40.25|2024-01-01 00:00:00.000|2024-01-01 00:00:12.000|NULL",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("table after Append:\n got  %v\n want %v", got, want)
	}
	gotV := queryStrings(t, db, "SELECT window_start, k, n, sv FROM w ORDER BY window_start, k")
	wantV := []string{
		"2024-01-01 00:00:00.000|1|2|40",
		"2024-01-01 00:00:00.000|2|1|20",
		"2024-01-01 00:00:10.000|1|1|40",
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("view after Append:\n got  %v\n want %v", gotV, wantV)
	}
	// The types read back through QueryArrow equal what was appended.
	rr, err := db.QueryArrow(ctx, "SELECT * FROM ev")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Schema().Equal(rec.Schema()) {
		// Field nullability/metadata may differ; compare types only.
		for i := 0; i < rec.Schema().NumFields(); i++ {
			if !arrow.TypeEqual(rr.Schema().Field(i).Type, rec.Schema().Field(i).Type) {
				t.Errorf("column %d: QueryArrow type %s, Append type %s", i, rr.Schema().Field(i).Type, rec.Schema().Field(i).Type)
			}
		}
	}
	if err := db.Append(ctx, "nope", rec); err == nil || !strings.Contains(err.Error(), "table nope does not exist") {
		t.Errorf("Append to a missing table: %v", err)
	}
	if err := db.Append(ctx, "w", rec); err == nil || !strings.Contains(err.Error(), "w is a materialized view, not a table") {
		t.Errorf("Append to a view: %v", err)
	}
}

func TestDBAppendValidation(t *testing.T) {
	db := openT(t, "")
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE ev (k INT, v BIGINT, amt DECIMAL(10,2), d DATE, ts TIMESTAMP(3), s VARCHAR,
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	mustExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n FROM ev")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	mem := memory.NewGoAllocator()

	check := func(name string, rec arrow.RecordBatch, mention string) {
		t.Helper()
		defer rec.Release()
		err := db.Append(ctx, "ev", rec)
		if err == nil {
			t.Errorf("%s: Append succeeded", name)
			return
		}
		t.Logf("%s: %v", name, err)
		if mention != "" && !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: error %q does not name %q", name, err, mention)
		}
		if n := queryInt(t, db, "SELECT COUNT(*) FROM ev"); n != 0 {
			t.Fatalf("%s: %d rows inserted by a refused Append", name, n)
		}
		if got := queryStrings(t, db, "SELECT n FROM c"); !reflect.DeepEqual(got, []string{"0"}) {
			t.Fatalf("%s: view = %v after a refused Append", name, got)
		}
	}

	if err := db.Append(ctx, "ev", nil); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("Append of a nil record: %v, want an error naming nil", err)
	}

	// Wrong column count.
	{
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
		b := array.NewRecordBuilder(mem, schema)
		b.Field(0).(*array.Int32Builder).Append(1)
		check("column count", b.NewRecordBatch(), "")
		b.Release()
	}
	// Wrong name.
	check("wrong name", arrowEvBatch(t, []string{"k", "value", "amt", "d", "ts", "s"}, []int32{1}, []int64{1}, []int64{base}), "v")
	// Wrong types, one column at a time.
	goodTypes := []arrow.DataType{
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 10, Scale: 2},
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, arrow.BinaryTypes.String,
	}
	names := []string{"k", "v", "amt", "d", "ts", "s"}
	badTypes := map[string]arrow.DataType{
		"v":   arrow.BinaryTypes.String,
		"amt": arrow.PrimitiveTypes.Float64,
		"d":   arrow.BinaryTypes.String,
		"ts":  arrow.BinaryTypes.String,
		"s":   arrow.PrimitiveTypes.Int64,
		"k":   arrow.FixedWidthTypes.Boolean,
	}
	for bi, bn := range names {
		fields := make([]arrow.Field, len(names))
		for i, n := range names {
			fields[i] = arrow.Field{Name: n, Type: goodTypes[i], Nullable: true}
		}
		fields[bi].Type = badTypes[bn]
		schema := arrow.NewSchema(fields, nil)
		b := array.NewRecordBuilder(mem, schema)
		// One valid row then... just one row of placeholder values; the type is what's wrong.
		for i := range fields {
			b.Field(i).AppendNull()
		}
		// Make the event-time column non-null when it has the right type so that only the
		// type error can refuse the batch.
		check("wrong type of "+bn, b.NewRecordBatch(), bn)
		b.Release()
	}
	// A batch with a good first row and a NULL event time in the second applies nothing.
	{
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "amt", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
			{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
			{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
			{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil)
		b := array.NewRecordBuilder(mem, schema)
		for i := 0; i < 4; i++ {
			b.Field(i).AppendNull()
			b.Field(i).AppendNull()
		}
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(base))
		b.Field(4).AppendNull()
		b.Field(5).AppendNull()
		b.Field(5).AppendNull()
		check("null event time", b.NewRecordBatch(), "ts")
		b.Release()
	}
	// An INT column given an int64 value out of range.
	{
		fields := make([]arrow.Field, len(names))
		for i, n := range names {
			fields[i] = arrow.Field{Name: n, Type: goodTypes[i], Nullable: true}
		}
		fields[0].Type = arrow.PrimitiveTypes.Int64
		b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
		b.Field(0).(*array.Int64Builder).Append(1 << 40)
		for i := 1; i < len(fields); i++ {
			if i == 4 {
				b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(base))
				continue
			}
			b.Field(i).AppendNull()
		}
		check("INT out of range", b.NewRecordBatch(), "k")
		b.Release()
	}
	// After all the refusals the table still takes a good batch.
	rec := arrowEvBatch(t, nil, []int32{1}, []int64{1}, []int64{base})
	defer rec.Release()
	if err := db.Append(ctx, "ev", rec); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM ev"); n != 1 {
		t.Fatalf("count = %d, want 1", n)
	}
}

// ---- Subscribe ----

type change struct {
	op  string
	row string
}

// nextChange reads one change or fails the test if none comes within a generous deadline.
// (Deadline only bounds a hang; correctness does not depend on timing.)
func nextChanges(t *testing.T, rows *streamsql.Rows, n int) []change {
	t.Helper()
	type res struct {
		c  []change
		ok bool
	}
	done := make(chan res, 1)
	go func() {
		var out []change
		for len(out) < n {
			if !rows.Next() {
				done <- res{out, false}
				return
			}
			v := rows.Values()
			out = append(out, change{op: v[0].(string), row: rowString(v[1:])})
		}
		done <- res{out, true}
	}()
	select {
	case r := <-done:
		if !r.ok {
			t.Fatalf("subscription ended after %v: %v", r.c, rows.Err())
		}
		return r.c
	case <-time.After(20 * time.Second):
		t.Fatalf("no %d changes within 20s", n)
	}
	return nil
}

func TestDBSubscribe(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, `CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW per10s AS
		SELECT window_start, auction, COUNT(*) AS n, SUM(price) AS total
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction`)
	mustExec(t, db, `INSERT INTO bids VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01'), (2, 5, TIMESTAMP '2024-01-01 00:00:02')`)
	mustExec(t, db, "FLUSH")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.Subscribe(ctx, "per10s")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if got, want := rows.Columns(), []string{"op", "window_start", "auction", "n", "total"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Columns = %v, want %v", got, want)
	}
	snap := nextChanges(t, rows, 2)
	sort.Slice(snap, func(i, j int) bool { return snap[i].row < snap[j].row })
	wantSnap := []change{
		{"+I", "2024-01-01 00:00:00.000|1|1|10"},
		{"+I", "2024-01-01 00:00:00.000|2|1|5"},
	}
	if !reflect.DeepEqual(snap, wantSnap) {
		t.Fatalf("snapshot = %v, want %v", snap, wantSnap)
	}
	// A new group: +I.
	mustExec(t, db, `INSERT INTO bids VALUES (3, 7, TIMESTAMP '2024-01-01 00:00:03')`)
	if got, want := nextChanges(t, rows, 1), []change{{"+I", "2024-01-01 00:00:00.000|3|1|7"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after insert of a new group: %v, want %v", got, want)
	}
	// An existing group: -U then +U.
	mustExec(t, db, `INSERT INTO bids VALUES (1, 20, TIMESTAMP '2024-01-01 00:00:04')`)
	if got, want := nextChanges(t, rows, 2), []change{
		{"-U", "2024-01-01 00:00:00.000|1|1|10"},
		{"+U", "2024-01-01 00:00:00.000|1|2|30"},
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after update of a group: %v, want %v", got, want)
	}

	// Cancelling the context ends the subscription: Next returns false, Err is Canceled.
	done := make(chan bool, 1)
	go func() { done <- rows.Next() }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatalf("Next returned a row after cancel: %v", rows.Values())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Next did not return after the context was cancelled")
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err after cancel = %v, want context.Canceled", err)
	}
	if rows.Next() {
		t.Fatal("Next after the end returned true")
	}
	// The DB is unaffected; inserts after the subscription ended still work.
	mustExec(t, db, `INSERT INTO bids VALUES (1, 1, TIMESTAMP '2024-01-01 00:00:05')`)
	mustExec(t, db, "FLUSH")
	if got := queryStrings(t, db, "SELECT n FROM per10s WHERE auction = 1"); !reflect.DeepEqual(got, []string{"3"}) {
		t.Fatalf("view = %v", got)
	}

	// Subscribe to a missing view fails; so does a name with a quote.
	if _, err := db.Subscribe(context.Background(), "nope"); err == nil {
		t.Error("Subscribe to a missing view succeeded")
	} else if want := "materialized view nope does not exist"; err.Error() != want {
		t.Errorf("Subscribe to a missing view: %q, want %q (no place in text the caller did not write)", err, want)
	}
}

func TestDBSubscribeEndsOnCloseAndRowsClose(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (a BIGINT)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT a, COUNT(*) AS n FROM t GROUP BY a")

	// Rows.Close unblocks a waiting Next.
	rows, err := db.Subscribe(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- rows.Next() }()
	// The waiting Next must not see anything: the view is empty.
	rows.Close()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("Next returned a row after Rows.Close")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Next did not return after Rows.Close")
	}
	// A later insert works even though a subscriber went away (no blocked publisher).
	for i := 0; i < 100; i++ {
		mustExec(t, db, "INSERT INTO t VALUES (?)", int64(i%3))
	}

	// db.Close ends a subscription too.
	rows2, err := db.Subscribe(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	snap := nextChanges(t, rows2, 3)
	if len(snap) != 3 {
		t.Fatal(snap)
	}
	done2 := make(chan bool, 1)
	go func() { done2 <- rows2.Next() }()
	db.Close()
	select {
	case ok := <-done2:
		if ok {
			t.Fatal("Next returned a row after db.Close")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Next did not return after db.Close")
	}
}

// foldChangelog reads changes from rows and applies them to a multiset until stop reports
// the last change it expects; a retraction of a row that is not there is an error.
func foldChangelog(rows *streamsql.Rows, stop func(op, row string) bool) (map[string]int, error) {
	state := map[string]int{}
	for rows.Next() {
		v := rows.Values()
		op, row := v[0].(string), rowString(v[1:])
		switch op {
		case "+I", "+U":
			state[row]++
		case "-U", "-D":
			if state[row] == 0 {
				return state, fmt.Errorf("%s of a row the subscriber does not have: %s", op, row)
			}
			state[row]--
			if state[row] == 0 {
				delete(state, row)
			}
		default:
			return state, fmt.Errorf("unknown op %q", op)
		}
		if stop(op, row) {
			return state, nil
		}
	}
	return state, fmt.Errorf("subscription ended: %v", rows.Err())
}

// The changelog a subscriber sees, folded, equals the view's contents — for windowed views in
// both emit modes and for a non-windowed aggregate over a table with DELETE and UPDATE.
func TestDBSubscribeChangelogMatchesView(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW tw AS
		SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS mx
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW twc AS
		SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k EMIT ON WINDOW CLOSE`)
	mustExec(t, db, `CREATE TABLE kv (k BIGINT, v BIGINT)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW kagg AS SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn FROM kv GROUP BY k`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW kfil AS SELECT k, v FROM kv WHERE v % 3 = 0`)

	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 7))
	tsAt := func(i int) time.Time {
		return base.Add(time.Duration(i*300-rng.IntN(4000)) * time.Millisecond)
	}
	step := 0
	ri := func(n int) int64 { return int64(rng.IntN(n)) } // the Go API takes int64 (see TestDBPlaceholderGoTypes)
	write := func(n int) {
		for ; n > 0; n-- {
			step++
			switch r := ri(10); {
			case r < 6:
				mustExec(t, db, "INSERT INTO ev VALUES (?, ?, ?), (?, ?, ?)",
					ri(4), ri(100), tsAt(step), ri(4), ri(100), tsAt(step))
			case r < 8:
				mustExec(t, db, "INSERT INTO kv VALUES (?, ?), (?, ?)", ri(5), ri(30), ri(5), ri(30))
			case r < 9:
				mustExec(t, db, "DELETE FROM kv WHERE k = ? AND v < ?", ri(5), ri(30))
			default:
				mustExec(t, db, "UPDATE kv SET v = v + 1 WHERE k = ?", ri(5))
			}
		}
	}
	write(60) // the subscribers start with a snapshot of these
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		view  string
		state map[string]int
		err   error
	}
	results := make(chan result, 4)
	subscribe := func(view string, stop func(op, row string) bool) {
		rows, err := db.Subscribe(ctx, view)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer rows.Close()
			st, err := foldChangelog(rows, stop)
			results <- result{view, st, err}
		}()
	}
	// Sentinels, written last: k = -1 at a far-ahead time, then k = -2 20 s later, which
	// closes k = -1's window. kv gets k = -1 with v = 3.
	subscribe("tw", func(op, row string) bool { return op == "+I" && strings.Contains(row, "|-2|") })
	subscribe("twc", func(op, row string) bool { return op == "+I" && strings.Contains(row, "|-1|") })
	subscribe("kagg", func(op, row string) bool { return op == "+I" && strings.HasPrefix(row, "-1|") })
	subscribe("kfil", func(op, row string) bool { return op == "+I" && strings.HasPrefix(row, "-1|") })
	write(300)
	far := base.Add(time.Hour)
	mustExec(t, db, "INSERT INTO ev VALUES (-1, 0, ?)", far)
	mustExec(t, db, "INSERT INTO ev VALUES (-2, 0, ?)", far.Add(20*time.Second))
	mustExec(t, db, "INSERT INTO kv VALUES (-1, 3)")
	mustExec(t, db, "FLUSH")
	queries := map[string]string{
		"tw":   "SELECT window_start, k, n, s, mx FROM tw",
		"twc":  "SELECT window_start, k, n, s FROM twc",
		"kagg": "SELECT k, n, s, mn FROM kagg",
		"kfil": "SELECT k, v FROM kfil",
	}
	for i := 0; i < 4; i++ {
		var r result
		select {
		case r = <-results:
		case <-time.After(30 * time.Second):
			t.Fatal("a subscriber did not see its sentinel within 30s")
		}
		if r.err != nil {
			t.Errorf("%s: %v", r.view, r.err)
			continue
		}
		var folded []string
		for row, n := range r.state {
			for ; n > 0; n-- {
				folded = append(folded, row)
			}
		}
		want := queryStrings(t, db, queries[r.view])
		if got, want := sortedCopy(folded), sortedCopy(want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: folded changelog (%d rows) differs from the view (%d rows)\n got  %v\n want %v", r.view, len(got), len(want), got, want)
		}
	}
}

// Append converts other Arrow timestamp units to milliseconds (rounding toward the past), and
// DATE64 and smaller integer types to the table's types.
func TestDBAppendOtherArrowUnits(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE u (k INT, ts TIMESTAMP(3), d DATE)")
	mem := memory.NewGoAllocator()
	want := time.Date(2024, 6, 1, 12, 0, 0, 123e6, time.UTC)
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "k", Type: arrow.PrimitiveTypes.Int16},
			{Name: "ts", Type: &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}},
			{Name: "d", Type: arrow.FixedWidthTypes.Date64},
		}, nil)
		b := array.NewRecordBuilder(mem, schema)
		b.Field(0).(*array.Int16Builder).Append(int16(unit))
		v, err := arrow.TimestampFromTime(want, unit)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(1).(*array.TimestampBuilder).Append(v)
		b.Field(2).(*array.Date64Builder).Append(arrow.Date64FromTime(want))
		rec := b.NewRecordBatch()
		if err := db.Append(context.Background(), "u", rec); err != nil {
			t.Errorf("unit %s: %v", unit, err)
		}
		rec.Release()
		b.Release()
	}
	got := queryStrings(t, db, "SELECT k, ts, d FROM u ORDER BY k")
	wantRows := []string{
		"0|2024-06-01 12:00:00.000|2024-06-01 00:00:00.000",
		"1|2024-06-01 12:00:00.123|2024-06-01 00:00:00.000",
		"2|2024-06-01 12:00:00.123|2024-06-01 00:00:00.000",
		"3|2024-06-01 12:00:00.123|2024-06-01 00:00:00.000",
	}
	if !reflect.DeepEqual(got, wantRows) {
		t.Fatalf("got %v, want %v", got, wantRows)
	}
}

// TestDBAppendIntegersIntoDouble checks that Arrow integers of every width go into a DOUBLE
// column as an INSERT of the same integers does, NULLs kept.
func TestDBAppendIntegersIntoDouble(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE f (x DOUBLE)")
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		typ    arrow.DataType
		append func(b array.Builder)
	}{
		{arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(-8) }},
		{arrow.PrimitiveTypes.Int16, func(b array.Builder) { b.(*array.Int16Builder).Append(16) }},
		{arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(-32) }},
		{arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(1 << 53) }},
	} {
		b := array.NewBuilder(mem, c.typ)
		c.append(b)
		b.AppendNull()
		col := b.NewArray()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: c.typ, Nullable: true}}, nil), []arrow.Array{col}, 2)
		if err := db.Append(context.Background(), "f", rec); err != nil {
			t.Errorf("%s into DOUBLE: %v", c.typ, err)
		}
	}
	got := queryStrings(t, db, "SELECT x, COUNT(*) FROM f GROUP BY x ORDER BY x")
	want := []string{"NULL|4", "-32|1", "-8|1", "16|1", "9.007199254740992e+15|1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// INSERT ... VALUES of plain literals takes a fast path that skips the SQL parser; any value
// must give the same stored value (or the same refusal) as the general path, which a
// non-literal in another row forces.
func TestDBInsertFastPathMatchesGeneralPath(t *testing.T) {
	cases := map[string][]string{
		"BIGINT": {"0", "-0", "007", "+5", "- 5", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
			"99999999999999999999", "1.5", "-1.5", "2.5", "1e3", "'12'", "' 12 '", "TRUE", "NULL", "'x'"},
		"INT":    {"2147483647", "2147483648", "-2147483648", "-2147483649", "1.9", "'3'", "1e2"},
		"DOUBLE": {"1.5", "1e308", "1e309", "-0.0", "3", "'2.5'", ".5", "5.", "-1E-3", "9223372036854775807"},
		"DECIMAL(10,2)": {"1.005", "1.015", "-1.005", "12345678.99", "123456789.99", "-0.01", "1e2", "3", "'4.5'",
			"0.001", "99999999.995"},
		"VARCHAR": {"'it''s'", "''", `'back\\slash'`, `'a\nb'`, `'a\'b'`, `"dq"`, "'é'", "12", "1.50", "TRUE", "DATE '2024-01-01'"},
		"BOOLEAN": {"TRUE", "false", "1", "0", "2", "'true'", "'no'", "NULL"},
		"DATE": {"DATE '2024-02-29'", "DATE '2023-02-29'", "'2024-01-01'", "TIMESTAMP '2024-01-01 10:00:00'",
			"DATE '2024-1-5'", "DATE '0001-01-01'", "DATE '2024-01-01 '"},
		"TIMESTAMP(3)": {"TIMESTAMP '2024-01-01 00:00:00.1234'", "TIMESTAMP '2024-01-01 00:00:00.1235'", "TIMESTAMP '2024-01-01'",
			"'2024-01-01 00:00:00'", "TIMESTAMP '2024-13-01 00:00:00'", "DATE '2024-01-01'", "TIMESTAMP '2024-01-01T10:00:00'",
			"TIMESTAMP '2024-01-01 24:00:00'", "TIMESTAMP '1969-12-31 23:59:59.999'", "TIMESTAMP '2024-01-01 00:00:00.5'"},
	}
	db := openT(t, "")
	n := 0
	for typ, lits := range cases {
		for _, lit := range lits {
			n++
			fast, slow := fmt.Sprintf("f%d", n), fmt.Sprintf("s%d", n)
			mustExec(t, db, fmt.Sprintf("CREATE TABLE %s (id BIGINT, x %s)", fast, typ))
			mustExec(t, db, fmt.Sprintf("CREATE TABLE %s (id BIGINT, x %s)", slow, typ))
			_, errF := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", fast, lit))
			_, errS := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (1, %s), (0 + 2, NULL)", slow, lit))
			if (errF == nil) != (errS == nil) {
				t.Errorf("%s %s: fast path error %v, general path error %v", typ, lit, errF, errS)
				continue
			}
			if errF != nil {
				continue
			}
			gf := queryStrings(t, db, fmt.Sprintf("SELECT x FROM %s WHERE id = 1", fast))
			gs := queryStrings(t, db, fmt.Sprintf("SELECT x FROM %s WHERE id = 1", slow))
			if !reflect.DeepEqual(gf, gs) {
				t.Errorf("%s %s: fast path stored %v, general path %v", typ, lit, gf, gs)
			}
		}
	}
}

// DROP and re-CREATE under the same names survive a reopen: dropped rows and views do not
// come back, and the new definitions are the ones restored.
func TestDBReopenAfterDropAndRecreate(t *testing.T) {
	dir := t.TempDir()
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE a (x BIGINT)")
	mustExec(t, db, "INSERT INTO a VALUES (1), (2), (3)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM a")
	mustExec(t, db, "CREATE MATERIALIZED VIEW w AS SELECT SUM(x) AS s FROM a")
	mustExec(t, db, "DROP MATERIALIZED VIEW v")
	mustExec(t, db, "DROP MATERIALIZED VIEW w")
	mustExec(t, db, "DROP TABLE a")
	mustExec(t, db, "CREATE TABLE a (y VARCHAR, x BIGINT)")
	mustExec(t, db, "INSERT INTO a VALUES ('p', 10)")
	mustExec(t, db, "CREATE TABLE b (x BIGINT)")
	mustExec(t, db, "INSERT INTO b VALUES (100)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT SUM(x) AS total FROM b")
	mustExec(t, db, "INSERT INTO a VALUES ('q', 20)")
	mustExec(t, db, "INSERT INTO b VALUES (200)")
	check := func(db *streamsql.DB, when string) {
		t.Helper()
		mustExec(t, db, "FLUSH")
		if got := queryStrings(t, db, "SELECT y, x FROM a ORDER BY x"); !reflect.DeepEqual(got, []string{"p|10", "q|20"}) {
			t.Errorf("%s: a = %v", when, got)
		}
		if got := queryStrings(t, db, "SELECT total FROM v"); !reflect.DeepEqual(got, []string{"300"}) {
			t.Errorf("%s: v = %v", when, got)
		}
		if _, err := db.Query("SELECT * FROM w"); err == nil {
			t.Errorf("%s: dropped view w is back", when)
		}
		// (SHOW TABLES lists views too.)
		if got := strings.Join(sortedCopy(queryStrings(t, db, "SHOW TABLES")), ","); got != "a,b" && got != "a,b,v" {
			t.Errorf("%s: SHOW TABLES = %v", when, got)
		}
	}
	check(db, "before reopen")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openT(t, dir)
	check(db2, "after reopen")
	// And the view keeps following b after the reopen.
	mustExec(t, db2, "INSERT INTO b VALUES (1)")
	mustExec(t, db2, "FLUSH")
	if got := queryStrings(t, db2, "SELECT total FROM v"); !reflect.DeepEqual(got, []string{"301"}) {
		t.Errorf("after reopen and insert: v = %v", got)
	}
}

// An upsert table (PRIMARY KEY) with new versions, UPDATE and DELETE, and views over it, are
// the same after a reopen: the current row of a key is the last one accepted.
func TestDBReopenUpsertTable(t *testing.T) {
	dir := t.TempDir()
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE rates (cur VARCHAR, rate DOUBLE, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW cnt AS SELECT COUNT(*) AS n, SUM(rate) AS s FROM rates`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW hi AS SELECT cur, rate FROM rates WHERE rate > 1`)
	rng := rand.New(rand.NewPCG(3, 3))
	curs := []string{"EUR", "USD", "GBP", "JPY", "CHF"}
	for i := 0; i < 200; i++ {
		c := curs[rng.IntN(len(curs))]
		ts := time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC)
		switch r := rng.IntN(10); {
		case r < 6:
			mustExec(t, db, "INSERT INTO rates VALUES (?, ?, ?), (?, ?, ?)", c, float64(rng.IntN(300))/100, ts,
				curs[rng.IntN(len(curs))], float64(rng.IntN(300))/100, ts)
		case r < 8:
			mustExec(t, db, "UPDATE rates SET rate = rate + 0.5 WHERE cur = ?", c)
		default:
			mustExec(t, db, "DELETE FROM rates WHERE cur = ?", c)
		}
	}
	mustExec(t, db, "FLUSH")
	qs := []string{"SELECT cur, rate, ts FROM rates ORDER BY cur", "SELECT n, s FROM cnt", "SELECT cur, rate FROM hi ORDER BY cur"}
	before := map[string][]string{}
	for _, q := range qs {
		before[q] = queryStrings(t, db, q)
	}
	// The aggregate view agrees with the table.
	var n int
	var sum float64
	for _, r := range queryRows(t, db, "SELECT rate FROM rates") {
		n++
		sum += r[0].(float64)
	}
	if got := queryRows(t, db, "SELECT n, s FROM cnt")[0]; got[0].(int64) != int64(n) || (n > 0 && math.Abs(got[1].(float64)-sum) > 1e-9) {
		t.Errorf("cnt = %v, table has %d rows summing to %v", got, n, sum)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openT(t, dir)
	for _, q := range qs {
		got := queryStrings(t, db2, q)
		if q == qs[1] { // float sums may associate differently after a replay
			if len(got) != 1 || len(before[q]) != 1 || strings.Split(got[0], "|")[0] != strings.Split(before[q][0], "|")[0] {
				t.Errorf("after reopen %s = %v, want %v", q, got, before[q])
			}
			continue
		}
		if !reflect.DeepEqual(got, before[q]) {
			t.Errorf("after reopen %s\n got  %v\n want %v", q, got, before[q])
		}
	}
}

// TestSubscribeOpLabels: a retraction and an insertion are an update (-U, +U) only when they
// share the view's key; a row moving from one group to another is a delete and an insert.
func TestSubscribeOpLabels(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE s (k BIGINT PRIMARY KEY, g BIGINT, v BIGINT)")
	mustExec(t, db, "INSERT INTO s VALUES (1, 1, 10), (2, 2, 20)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW sg AS SELECT g, SUM(v) AS total FROM s GROUP BY g")
	mustExec(t, db, "CREATE MATERIALIZED VIEW copy AS SELECT v, k FROM s WHERE v > 0")
	mustExec(t, db, "CREATE MATERIALIZED VIEW dg AS SELECT DISTINCT g FROM s")
	sg, cp, dg := subscribeChanges(t, db, "sg"), subscribeChanges(t, db, "copy"), subscribeChanges(t, db, "dg")
	// A change that leaves a group's row as it was sends nothing: another row of group 1
	// (DISTINCT), then the one of group 4.
	mustExec(t, db, "INSERT INTO s VALUES (3, 1, 0)")
	mustExec(t, db, "INSERT INTO s VALUES (4, 4, 0)")
	if got, want := nextChanges(t, dg, 1), []change{{"+I", "4"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("DISTINCT over a row already there, then a new one: %v, want %v", got, want)
	}
	mustExec(t, db, "DELETE FROM s WHERE k IN (3, 4)")
	if got, want := nextChanges(t, dg, 1), []change{{"-D", "4"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("DISTINCT after deletes: %v, want %v", got, want)
	}
	// Group 1's SUM is unchanged by a 0 coming and going: only group 4 changes.
	if got, want := nextChanges(t, sg, 2), []change{{"+I", "4|0"}, {"-D", "4|0"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("SUM over rows adding 0: %v, want %v", got, want)
	}
	mustExec(t, db, "UPDATE s SET g = 3 WHERE k = 2")
	if got, want := nextChanges(t, sg, 2), []change{{"-D", "2|20"}, {"+I", "3|20"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a row moving to another group: %v, want %v", got, want)
	}
	mustExec(t, db, "UPDATE s SET v = 15 WHERE k = 1")
	if got, want := nextChanges(t, sg, 2), []change{{"-U", "1|10"}, {"+U", "1|15"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a group's new total: %v, want %v", got, want)
	}
	// The upsert table's key passes through the projection: an update by key.
	if got := nextChanges(t, cp, 4); got[0].op != "-U" || got[1].op != "+U" || got[2] != (change{"-U", "10|1"}) || got[3] != (change{"+U", "15|1"}) {
		t.Errorf("a projection of an upsert table: %v, want -U/+U pairs", got)
	}
	// A Top-N sends only the rows that changed: a row entering the top 2 replaces the second,
	// the first row, which keeps its place, is not sent again; a row below the top sends nothing.
	// Its key is the partition and the row number (as in Flink): a place taken by another row
	// is an update; without the number in the view, a delete and an insert.
	mustExec(t, db, "CREATE TABLE sc (p BIGINT, v BIGINT)")
	mustExec(t, db, "INSERT INTO sc VALUES (1, 50), (1, 40)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW top2 AS SELECT p, v, rn FROM (SELECT p, v, ROW_NUMBER() OVER (PARTITION BY p ORDER BY v DESC) AS rn FROM sc) WHERE rn <= 2")
	mustExec(t, db, "CREATE MATERIALIZED VIEW top2v AS SELECT p, v FROM (SELECT p, v, ROW_NUMBER() OVER (PARTITION BY p ORDER BY v DESC) AS rn FROM sc) WHERE rn <= 2")
	top, topv := subscribeChanges(t, db, "top2"), subscribeChanges(t, db, "top2v")
	mustExec(t, db, "INSERT INTO sc VALUES (1, 10)")
	mustExec(t, db, "INSERT INTO sc VALUES (1, 45)")
	if got, want := nextChanges(t, top, 2), []change{{"-U", "1|40|2"}, {"+U", "1|45|2"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Top-N after a row below the top, then one into it: %v, want %v", got, want)
	}
	if got, want := nextChanges(t, topv, 2), []change{{"-D", "1|40"}, {"+I", "1|45"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Top-N without its row number: %v, want %v", got, want)
	}
	// A new first row moves every place: each place's old row, then its new one.
	mustExec(t, db, "INSERT INTO sc VALUES (1, 60), (2, 5)")
	want := []change{{"-U", "1|50|1"}, {"+U", "1|60|1"}, {"-U", "1|45|2"}, {"+U", "1|50|2"}, {"+I", "2|5|1"}}
	if got := nextChanges(t, top, 5); !reflect.DeepEqual(got, want) {
		t.Errorf("Top-N after a new first row: %v, want %v", got, want)
	}
}

// TestRowsScanDestinations: the Go API's Scan takes what database/sql's does for NULLs —
// sql.Scanner types and pointers to pointers — and narrower numbers.
func TestRowsScanDestinations(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (a BIGINT, s VARCHAR, ts TIMESTAMP(3), x DOUBLE)")
	mustExec(t, db, "INSERT INTO t VALUES (7, 'x', TIMESTAMP '2024-01-01 00:00:01', 1.5), (NULL, NULL, NULL, NULL)")
	rows, err := db.Query("SELECT a, s, ts, x, a, x FROM t ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var a sql.NullInt64
		var s sql.NullString
		var ts *time.Time
		var x **float64
		var a32 *int32
		var x32 *float32
		x = new(*float64)
		if err := rows.Scan(&a, &s, &ts, x, &a32, &x32); err != nil {
			t.Fatal(err)
		}
		if ts == nil {
			got = append(got, fmt.Sprint(a, s, ts, *x, a32, x32))
			continue
		}
		got = append(got, fmt.Sprint(a, s, ts.UnixMilli(), **x, *a32, *x32))
	}
	want := "{0 false} { false} <nil> <nil> <nil> <nil> | {7 true} {x true} 1704067201000 1.5 7 1.5"
	if strings.Join(got, " | ") != want {
		t.Fatalf("scanned %v, want %v", got, want)
	}
}

// TestRowsScanConvertsAsDatabaseSQL checks that the package's Rows.Scan converts as
// database/sql's Scan does over the same query: a DECIMAL into numbers, a TIMESTAMP into a
// string; text that is no number is refused by both; and after the last row there is no
// current row to scan.
func TestRowsScanConvertsAsDatabaseSQL(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, filepath.Join(dir, "db"))
	mustExec(t, db, "CREATE TABLE t (d DECIMAL(10,2), n DECIMAL(10,0), ts TIMESTAMP(3), s VARCHAR)")
	mustExec(t, db, "INSERT INTO t VALUES (1.25, 42, TIMESTAMP '2024-01-01 00:00:00.5', 'abc')")
	const q = "SELECT d, d, n, n, ts FROM t"
	scan := func(sc func(...any) error) string {
		var f64 float64
		var f32 float32
		var i64 int64
		var i int
		var s string
		if err := sc(&f64, &f32, &i64, &i, &s); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v %v %v %v %v", f64, f32, i64, i, s)
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal("no row")
	}
	got := scan(rows.Scan)
	if rows.Next() || rows.Values() != nil || rows.Scan(new(any), new(any), new(any), new(any), new(any)) == nil {
		t.Fatalf("after the last row: Next true, or Values %v, or Scan succeeded", rows.Values())
	}
	var bad float64
	if r, err := db.Query("SELECT s FROM t"); err != nil || !r.Next() || r.Scan(&bad) == nil {
		t.Fatalf("a VARCHAR 'abc' scanned into a float64: %v", err)
	}
	rows.Close()
	db.Close()

	sdb, err := sql.Open("streamsql", filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	srows, err := sdb.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer srows.Close()
	if !srows.Next() {
		t.Fatal("no row through database/sql")
	}
	if want := scan(srows.Scan); got != want {
		t.Fatalf("Rows.Scan gave %s, database/sql's Scan %s", got, want)
	}
	if got != "1.25 1.25 42 42 2024-01-01T00:00:00.5Z" {
		t.Fatalf("scanned %s", got)
	}
}

// TestAppendWatermarkShift checks the watermark a `ts - INTERVAL` declaration gives an Append
// (computed without evaluating the expression), and that a value it cannot shift is refused
// as the expression refuses it, the statement applying nothing.
func TestAppendWatermarkShift(t *testing.T) {
	db := openT(t, "")
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE wt (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	mustExec(t, db, `CREATE TABLE wp (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '2' SECOND)`)
	batch := func(ms ...int64) arrow.RecordBatch {
		b := array.NewTimestampBuilder(memory.NewGoAllocator(), &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})
		defer b.Release()
		for _, m := range ms {
			b.Append(arrow.Timestamp(m))
		}
		col := b.NewArray()
		defer col.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: col.DataType(), Nullable: true}}, nil)
		return array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(ms)))
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		table string
		bad   int64
		want  string
	}{
		{"wt", math.MinInt64 + 500, "2024-01-01 00:00:04.000"},
		{"wp", math.MaxInt64 - 500, "2024-01-01 00:00:07.000"},
	} {
		rec := batch(base, tc.bad)
		err := db.Append(ctx, tc.table, rec)
		rec.Release()
		if err == nil || !strings.Contains(err.Error(), "WATERMARK expression: timestamp out of range") {
			t.Fatalf("%s: Append of an unshiftable time: %v", tc.table, err)
		}
		rec = batch(base+5000, base+1000)
		if err := db.Append(ctx, tc.table, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if n := queryInt(t, db, "SELECT COUNT(*) FROM "+tc.table); n != 2 {
			t.Errorf("%s: %d rows, want the 2 of the second Append", tc.table, n)
		}
		if got := queryStrings(t, db, "SELECT watermark FROM system.watermarks WHERE name = ?", tc.table); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: watermark %v, want %s", tc.table, got, tc.want)
		}
	}
}

// outerJoinTables makes a (id PRIMARY KEY, g) and b (g PRIMARY KEY, label): a's row 0 matches
// b's row 'd', its row 4 matches nothing.
func outerJoinTables(t *testing.T, db *streamsql.DB) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE a (id BIGINT PRIMARY KEY, g VARCHAR)")
	mustExec(t, db, "CREATE TABLE b (g VARCHAR PRIMARY KEY, label VARCHAR)")
	mustExec(t, db, "INSERT INTO a VALUES (0, 'd'), (4, 'x')")
	mustExec(t, db, "INSERT INTO b VALUES ('d', 'L1')")
}

// An outer join's changelog, when the only match of a preserved row is updated, is the
// joined row's retraction and insertion: no padded row comes and goes around them (before
// the fix, a -D of a padded row never inserted, then a +I of it, stayed in a consumer that
// applied them in order).
func TestOuterJoinChangelogUpdatedSide(t *testing.T) {
	db := openT(t, "")
	outerJoinTables(t, db)
	mustExec(t, db, "CREATE MATERIALIZED VIEW lj AS SELECT a.id, b.label FROM a LEFT JOIN b ON a.g = b.g")
	mustExec(t, db, "CREATE MATERIALIZED VIEW fj AS SELECT a.id, b.g, b.label FROM a FULL JOIN b ON a.g = b.g")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lj, err := db.Subscribe(ctx, "lj")
	if err != nil {
		t.Fatal(err)
	}
	defer lj.Close()
	fj, err := db.Subscribe(ctx, "fj")
	if err != nil {
		t.Fatal(err)
	}
	defer fj.Close()
	nextChanges(t, lj, 2) // the snapshots: ids 0 and 4
	nextChanges(t, fj, 2)

	mustExec(t, db, "UPDATE b SET label = 'L2' WHERE g = 'd'")
	mustExec(t, db, "INSERT INTO b VALUES ('d', 'L3')") // an upsert
	mustExec(t, db, "INSERT INTO a VALUES (5, 'none')") // a row with no match ends each changelog
	for _, c := range []struct {
		rows *streamsql.Rows
		want []change
	}{
		{lj, []change{{"-D", "0|L1"}, {"+I", "0|L2"}, {"-D", "0|L2"}, {"+I", "0|L3"}, {"+I", "5|NULL"}}},
		{fj, []change{{"-D", "0|d|L1"}, {"+I", "0|d|L2"}, {"-D", "0|d|L2"}, {"+I", "0|d|L3"}, {"+I", "5|NULL|NULL"}}},
	} {
		if got := nextChanges(t, c.rows, len(c.want)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("changes = %v, want %v", got, c.want)
		}
	}
}

// Append of a decimal128 column wider than the table's DECIMAL: a value that fits is taken,
// one that does not is an error — also one too wide to raise to the table's scale in 128
// bits (it panicked; found by review) — and the database stays open.
func TestDBAppendWideDecimal(t *testing.T) {
	db := openT(t, "")
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE d (x DECIMAL(38,2))`)
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	rec := func(v decimal128.Num) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil))
		defer b.Release()
		b.Field(0).(*array.Decimal128Builder).Append(v)
		return b.NewRecordBatch()
	}
	huge, err := decimal128.FromString("99999999999999999999999999999999999999", 38, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v   decimal128.Num
		err string
	}{
		{decimal128.FromI64(123), ""},
		{decimal128.FromI64(1e16), "value out of range for DECIMAL(18,2)"},
		{huge, "value out of range for DECIMAL(18,2)"},
	} {
		r := rec(c.v)
		err := db.Append(ctx, "d", r)
		r.Release()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Append of %v: %v, want %q", c.v, err, c.err)
		}
	}
	if got := queryStrings(t, db, "SELECT x FROM d"); !reflect.DeepEqual(got, []string{"123.00"}) {
		t.Errorf("d holds %v, want [123.00]", got)
	}
}

// A view's ORDER BY ... LIMIT sends a subscriber only the rows that leave or enter it: a
// row that stays but moves up a place is neither retracted nor inserted again (found by
// review: it was inserted again before its retraction came).
func TestSubscribeOrderLimitView(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30), (4, 25)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW top2 AS SELECT id, v FROM t ORDER BY v DESC LIMIT 2")
	mustExec(t, db, "CREATE MATERIALIZED VIEW second AS SELECT id FROM t ORDER BY v DESC LIMIT 2 OFFSET 1")
	top2, second := subscribeChanges(t, db, "top2"), subscribeChanges(t, db, "second")
	mustExec(t, db, "UPDATE t SET v = 5 WHERE id = 3") // 4 moves up from second to first
	if got, want := nextChanges(t, top2, 2), []change{{"-D", "3|30"}, {"+I", "2|20"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("top2: %v, want %v", got, want)
	}
	// Places 2 and 3 were 4 and 2; now 2 and 1: 4 leaves, 1 enters, 2 stays.
	if got, want := nextChanges(t, second, 2), []change{{"-D", "4"}, {"+I", "1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("second: %v, want %v", got, want)
	}
}

// subscribeChanges subscribes to view's changes from now on (no snapshot), until the test
// ends.
func subscribeChanges(t *testing.T, db *streamsql.DB, view string) *streamsql.Rows {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, "SUBSCRIBE "+view+" WITH (snapshot = false)")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { rows.Close(); cancel() })
	return rows
}
