// QA (blind, from SPEC.md §1 "Go API" / "database/sql", §4, §6): the Go API and the
// database/sql driver as a test writer who reads only SPEC.md would drive them.
package streamsql_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

// qaWatchdog crashes the test binary with a stack dump if the test runs longer than d,
// so a hang fails fast and says where.
func qaWatchdog(t *testing.T, d time.Duration) func() {
	t.Helper()
	name := t.Name()
	tm := time.AfterFunc(d, func() { panic(fmt.Sprintf("QA watchdog: %s still running after %v (hang)", name, d)) })
	return func() { tm.Stop() }
}

func qaSQLOpen(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("streamsql", dsn)
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func qaSQLExec(t *testing.T, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("Exec(%q): %v", q, err)
	}
	return r
}

func qaSQLInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("QueryRow(%q): %v", q, err)
	}
	return n
}

func qaOpen(t *testing.T, path string, opts ...streamsql.Option) *streamsql.DB {
	t.Helper()
	db, err := streamsql.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func qaExec(t *testing.T, db *streamsql.DB, q string, args ...any) streamsql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("Exec(%q): %v", q, err)
	}
	return r
}

func qaRows(t *testing.T, db *streamsql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("Query(%q): %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var parts []string
		for _, v := range rows.Values() {
			switch x := v.(type) {
			case nil:
				parts = append(parts, "NULL")
			case time.Time:
				parts = append(parts, x.Format("2006-01-02 15:04:05.000"))
			default:
				parts = append(parts, fmt.Sprint(x))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("Query(%q) rows: %v", q, err)
	}
	return out
}

// ---------------------------------------------------------------- database/sql: DSN forms

func TestQAAPIDSNForms(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	// "" and ":memory:" are in-memory and independent of each other.
	for _, dsn := range []string{"", ":memory:"} {
		a := qaSQLOpen(t, dsn)
		b := qaSQLOpen(t, dsn)
		qaSQLExec(t, a, "CREATE TABLE t (x BIGINT)")
		qaSQLExec(t, a, "INSERT INTO t VALUES (1)")
		if _, err := b.Exec("INSERT INTO t VALUES (2)"); err == nil {
			t.Errorf("dsn %q: two sql.Open share one in-memory database (t visible from the second)", dsn)
		}
		if n := qaSQLInt(t, a, "SELECT COUNT(*) FROM t"); n != 1 {
			t.Errorf("dsn %q: count = %d, want 1", dsn, n)
		}
		// Every connection of one sql.DB shares the one database.
		a.SetMaxIdleConns(0)
		conns := make([]*sql.Conn, 3)
		for i := range conns {
			c, err := a.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = c
		}
		for i, c := range conns {
			if _, err := c.ExecContext(context.Background(), "INSERT INTO t VALUES (?)", int64(10+i)); err != nil {
				t.Fatalf("conn %d: %v", i, err)
			}
		}
		for _, c := range conns {
			c.Close()
		}
		if n := qaSQLInt(t, a, "SELECT COUNT(*) FROM t"); n != 4 {
			t.Errorf("dsn %q: after inserts on 3 connections count = %d, want 4", dsn, n)
		}
	}

	// On-disk path with options as URL query.
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	d := qaSQLOpen(t, p+"?checkpoint_interval=1s&sync=off")
	qaSQLExec(t, d, "CREATE TABLE t (x BIGINT)")
	qaSQLExec(t, d, "INSERT INTO t VALUES (1), (2)")
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	d2 := qaSQLOpen(t, p)
	if n := qaSQLInt(t, d2, "SELECT SUM(x) FROM t"); n != 3 {
		t.Errorf("after reopen SUM = %d, want 3", n)
	}
	// A second sql.DB on a path in use fails (clearly) rather than corrupting it.
	d3, err := sql.Open("streamsql", p)
	if err == nil {
		err = d3.Ping()
		d3.Close()
	}
	if err == nil {
		t.Errorf("a second sql.DB on a path in use opened")
	}
	d2.Close()

	// A bad option is an error naming it, not ignored.
	bad, err := sql.Open("streamsql", filepath.Join(dir, "x")+"?nosuchopt=1")
	if err == nil {
		err = bad.Ping()
		bad.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "nosuchopt") {
		t.Errorf("unknown DSN option: err = %v, want an error naming nosuchopt", err)
	}
	bad, err = sql.Open("streamsql", filepath.Join(dir, "y")+"?checkpoint_interval=banana")
	if err == nil {
		err = bad.Ping()
		bad.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "checkpoint_interval") {
		t.Errorf("bad checkpoint_interval: err = %v, want an error naming it", err)
	}
}

// ---------------------------------------------------------------- database/sql: types

func TestQAAPIScanEveryType(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaSQLOpen(t, "")
	qaSQLExec(t, db, `CREATE TABLE ty (
		b BIGINT, i INT, d DOUBLE, m DECIMAL(10,2), s VARCHAR, s2 STRING, o BOOLEAN,
		ts TIMESTAMP(3), dt DATE)`)
	qaSQLExec(t, db, `INSERT INTO ty VALUES
		(9223372036854775807, -2147483648, 1.5, 12.34, 'héllo ''q''', '', true,
		 TIMESTAMP '2024-02-29 23:59:59.123', DATE '2024-02-29'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)

	rows, err := db.Query("SELECT b, i, d, m, s, s2, o, ts, dt FROM ty ORDER BY b NULLS LAST")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"BIGINT", "INT", "DOUBLE", "DECIMAL", "VARCHAR", "VARCHAR", "BOOLEAN", "TIMESTAMP", "DATE"}
	wantScan := []reflect.Type{reflect.TypeOf(int64(0)), reflect.TypeOf(int64(0)), reflect.TypeOf(float64(0)),
		reflect.TypeOf(""), reflect.TypeOf(""), reflect.TypeOf(""), reflect.TypeOf(false),
		reflect.TypeOf(time.Time{}), reflect.TypeOf(time.Time{})}
	for i, ct := range cts {
		if got := ct.DatabaseTypeName(); got != wantNames[i] {
			t.Errorf("column %s DatabaseTypeName = %q, want %q", ct.Name(), got, wantNames[i])
		}
		if got := ct.ScanType(); got != wantScan[i] {
			t.Errorf("column %s ScanType = %v, want %v", ct.Name(), got, wantScan[i])
		}
	}
	if p, s, ok := cts[3].DecimalSize(); !ok || p != 10 || s != 2 {
		t.Errorf("DECIMAL(10,2) DecimalSize = %d,%d,%v", p, s, ok)
	}
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	var (
		b  int64
		i  int32
		d  float64
		m  string
		s  string
		s2 []byte
		o  bool
		ts time.Time
		dt time.Time
	)
	if err := rows.Scan(&b, &i, &d, &m, &s, &s2, &o, &ts, &dt); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if b != math.MaxInt64 || i != math.MinInt32 || d != 1.5 || m != "12.34" || s != "héllo 'q'" || string(s2) != "" || !o {
		t.Errorf("scanned %v %v %v %q %q %q %v", b, i, d, m, s, s2, o)
	}
	if want := time.Date(2024, 2, 29, 23, 59, 59, 123e6, time.UTC); !ts.Equal(want) || ts.Location() != time.UTC {
		t.Errorf("TIMESTAMP = %v (loc %v), want %v UTC", ts, ts.Location(), want)
	}
	if want := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC); !dt.Equal(want) {
		t.Errorf("DATE = %v, want %v", dt, want)
	}
	// DECIMAL into float64 through database/sql's conversion.
	if !rows.Next() {
		t.Fatalf("no second row: %v", rows.Err())
	}
	var (
		nb  sql.NullInt64
		ni  sql.NullInt32
		nd  sql.NullFloat64
		nm  sql.NullString
		ns  sql.NullString
		ns2 *string
		no  sql.NullBool
		nts sql.NullTime
		ndt sql.NullTime
	)
	if err := rows.Scan(&nb, &ni, &nd, &nm, &ns, &ns2, &no, &nts, &ndt); err != nil {
		t.Fatalf("Scan NULLs: %v", err)
	}
	if nb.Valid || ni.Valid || nd.Valid || nm.Valid || ns.Valid || ns2 != nil || no.Valid || nts.Valid || ndt.Valid {
		t.Errorf("NULL row scanned as valid: %+v %+v %+v %+v %+v %v %+v %+v %+v", nb, ni, nd, nm, ns, ns2, no, nts, ndt)
	}
	if rows.Next() {
		t.Error("third row")
	}
	rows.Close()
	// NULL into a plain int64 is an error, not a zero.
	var x int64
	if err := db.QueryRow("SELECT b FROM ty WHERE b IS NULL").Scan(&x); err == nil {
		t.Error("NULL scanned into int64 without error")
	}
	var f float64
	if err := db.QueryRow("SELECT m FROM ty WHERE m IS NOT NULL").Scan(&f); err != nil || f != 12.34 {
		t.Errorf("DECIMAL into float64: %v, %v", f, err)
	}
	// No rows: sql.ErrNoRows.
	if err := db.QueryRow("SELECT b FROM ty WHERE 1 = 0").Scan(&x); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("empty QueryRow: %v, want sql.ErrNoRows", err)
	}
	// A VARCHAR that is not a number into int64: database/sql's error, no panic.
	if err := db.QueryRow("SELECT s FROM ty WHERE s IS NOT NULL").Scan(&x); err == nil {
		t.Error("VARCHAR 'héllo' scanned into int64")
	}
	// INTERVAL values (SPEC lists INTERVAL literals) are readable.
	var iv any
	if err := db.QueryRow("SELECT INTERVAL '5' SECOND").Scan(&iv); err != nil {
		t.Errorf("SELECT INTERVAL '5' SECOND: %v", err)
	} else if iv == nil {
		t.Errorf("INTERVAL scanned as nil")
	}
	// Expressions' types.
	rows, err = db.Query("SELECT COUNT(*), AVG(i), SUM(i), 7 / 2, 7 % -2, CAST(1 AS DOUBLE) FROM ty")
	if err != nil {
		t.Fatal(err)
	}
	cts, _ = rows.ColumnTypes()
	var got []string
	for _, ct := range cts {
		got = append(got, ct.DatabaseTypeName())
	}
	if want := []string{"BIGINT", "DOUBLE", "BIGINT", "INT", "INT", "DOUBLE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("types of COUNT, AVG(INT), SUM(INT), 7/2, 7%%-2, CAST = %v, want %v", got, want)
	}
	var cnt, sum sql.NullInt64
	var avg sql.NullFloat64
	var q, r int64
	var c float64
	rows.Next()
	if err := rows.Scan(&cnt, &avg, &sum, &q, &r, &c); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if cnt.Int64 != 2 || avg.Float64 != math.MinInt32 || sum.Int64 != math.MinInt32 || q != 3 || r != 1 || c != 1 {
		t.Errorf("aggregates = %v %v %v %v %v %v", cnt, avg, sum, q, r, c)
	}
}

func TestQAAPIPlaceholders(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaSQLOpen(t, "")
	qaSQLExec(t, db, `CREATE TABLE p (b BIGINT, i INT, d DOUBLE, m DECIMAL(10,2), s VARCHAR, o BOOLEAN, ts TIMESTAMP(3), dt DATE)`)
	paris := time.FixedZone("CET", 3600)
	tsIn := time.Date(2024, 3, 1, 13, 0, 0, 456789000, paris) // 12:00:00.456789 UTC
	dtIn := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	evil := "x'); DROP TABLE p; --"
	res := qaSQLExec(t, db, "INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		int64(math.MinInt64), 42, 2.25, "99.95", evil, true, tsIn, dtIn)
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("RowsAffected = %d, %v; want 1", n, err)
	}
	qaSQLExec(t, db, "INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?, ?)", nil, nil, nil, nil, nil, nil, nil, nil)
	qaSQLExec(t, db, "INSERT INTO p (b, s) VALUES (?, ?)", int32(7), []byte("bytes"))

	var (
		b  int64
		i  int
		d  float64
		m  string
		s  string
		o  bool
		ts time.Time
		dt time.Time
	)
	err := db.QueryRow("SELECT b, i, d, m, s, o, ts, dt FROM p WHERE s = ?", evil).Scan(&b, &i, &d, &m, &s, &o, &ts, &dt)
	if err != nil {
		t.Fatal(err)
	}
	if b != math.MinInt64 || i != 42 || d != 2.25 || m != "99.95" || s != evil || !o {
		t.Errorf("round trip: %v %v %v %q %q %v", b, i, d, m, s, o)
	}
	if want := time.Date(2024, 3, 1, 12, 0, 0, 456e6, time.UTC); !ts.Equal(want) {
		t.Errorf("TIMESTAMP from a CET time.Time with µs = %v, want %v (UTC, ms)", ts.UTC(), want)
	}
	if !dt.Equal(dtIn) {
		t.Errorf("DATE = %v, want %v", dt, dtIn)
	}
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM p WHERE b IS NULL AND s IS NULL"); n != 1 {
		t.Errorf("NULL placeholders: %d rows all-NULL, want 1", n)
	}
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM p WHERE s = ? AND b = ?", "bytes", 7); n != 1 {
		t.Errorf("[]byte/int32 placeholders: %d rows, want 1", n)
	}
	// Placeholders in expressions, LIMIT-free comparisons, and time comparisons.
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM p WHERE ts >= ? AND ts < ?", tsIn.Add(-time.Second), tsIn.Add(time.Second)); n != 1 {
		t.Errorf("time range placeholders: %d, want 1", n)
	}
	if n := qaSQLInt(t, db, "SELECT ? + ?", 2, 3); n != 5 {
		t.Errorf("SELECT ? + ? = %d", n)
	}
	// Wrong number of args: an error, the DB usable.
	if _, err := db.Exec("INSERT INTO p (b) VALUES (?)"); err == nil {
		t.Error("missing placeholder arg accepted")
	}
	if _, err := db.Exec("INSERT INTO p (b) VALUES (?)", 1, 2); err == nil {
		t.Error("extra placeholder arg accepted")
	}
	// A value the column cannot hold.
	if _, err := db.Exec("INSERT INTO p (i) VALUES (?)", int64(math.MaxInt32)+1); err == nil {
		t.Error("INT overflow through a placeholder accepted")
	}
	if _, err := db.Exec("INSERT INTO p (b) VALUES (?)", uint64(math.MaxUint64)); err == nil {
		t.Error("uint64 max accepted into BIGINT")
	}
	if _, err := db.Exec("INSERT INTO p (b) VALUES (?)", struct{}{}); err == nil {
		t.Error("struct{} placeholder accepted")
	}
	// Named args are not supported: clear error.
	if _, err := db.Exec("INSERT INTO p (b) VALUES (?)", sql.Named("x", 1)); err == nil {
		t.Error("named arg accepted")
	}
	// DATE from a non-midnight time.Time is refused (README), midnight UTC accepted.
	if _, err := db.Exec("INSERT INTO p (dt) VALUES (?)", time.Date(2024, 3, 1, 5, 0, 0, 0, time.UTC)); err == nil {
		t.Error("non-midnight time.Time into DATE accepted")
	}
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM p"); n != 3 {
		t.Errorf("after refused inserts, %d rows, want 3", n)
	}
	// A '?' inside a string literal is not a placeholder.
	var lit string
	if err := db.QueryRow("SELECT 'what?' || ?", "!").Scan(&lit); err != nil || lit != "what?!" {
		t.Errorf("'?' in a literal: %q, %v", lit, err)
	}
}

// ---------------------------------------------------------------- errors

func TestQAAPIErrorsHavePositionAndDBStaysUsable(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaSQLOpen(t, "")
	qaSQLExec(t, db, "CREATE TABLE orders (id BIGINT, amount DECIMAL(10,2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts)")
	qaSQLExec(t, db, "INSERT INTO orders VALUES (1, 1.50, TIMESTAMP '2024-01-01 00:00:00')")
	pos := regexp.MustCompile(`at line (\d+), column (\d+)`)
	cases := []struct {
		q       string
		mention string
		line    string
		column  string
	}{
		{"SELECT amout FROM orders", "amout", "1", "8"},
		{"SELECT id,\n       amout\nFROM orders", "amout", "2", "8"},
		{"SELECT * FROM ordrs", "ordrs", "1", "15"},
		{"SELEC * FROM orders", "", "1", "1"},
		{"INSERT INTO orders VALUES (1, 'abc', TIMESTAMP '2024-01-01 00:00:00')", "", "", ""},
		{"INSERT INTO orders (id, nope) VALUES (1, 2)", "nope", "", ""},
		{"SELECT id FROM orders WHERE id = 'x'", "", "", ""},
		{"SELECT 1 / 0", "division by zero", "", ""},
		{"SELECT CAST(2147483647 AS INT) + 1", "overflow", "", ""},
	}
	for _, c := range cases {
		_, err := db.Exec(c.q)
		if err == nil {
			rows, qerr := db.Query(c.q)
			if qerr == nil {
				for rows.Next() {
				}
				qerr = rows.Err()
				rows.Close()
			}
			err = qerr
		}
		if err == nil {
			t.Errorf("%q: no error", c.q)
			continue
		}
		if c.mention != "" && !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%q: error %q does not name %q", c.q, err, c.mention)
		}
		m := pos.FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("%q: error %q has no 'at line L, column C'", c.q, err)
			continue
		}
		if c.line != "" && (m[1] != c.line || m[2] != c.column) {
			t.Errorf("%q: error %q, want line %s column %s", c.q, err, c.line, c.column)
		}
	}
	// After all that, the DB holds exactly what it held, and works.
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM orders"); n != 1 {
		t.Errorf("after errors, %d rows, want 1", n)
	}
	qaSQLExec(t, db, "INSERT INTO orders VALUES (2, 2.50, TIMESTAMP '2024-01-01 00:00:01')")
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM orders"); n != 2 {
		t.Errorf("after a good insert, %d rows, want 2", n)
	}
	// A statement with a bad row applies none of its rows.
	if _, err := db.Exec("INSERT INTO orders VALUES (3, 1, TIMESTAMP '2024-01-01 00:00:02'), (4, 'bad', TIMESTAMP '2024-01-01 00:00:03')"); err == nil {
		t.Error("bad row accepted")
	}
	if _, err := db.Exec("INSERT INTO orders VALUES (5, 1, TIMESTAMP '2024-01-01 00:00:02'), (6, 1, NULL)"); err == nil {
		t.Error("NULL event time accepted")
	}
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM orders"); n != 2 {
		t.Errorf("after refused multi-row inserts, %d rows, want 2 (all or none)", n)
	}
}

// ---------------------------------------------------------------- multi-statement Exec, FLUSH

func TestQAAPIMultiStatementExecAndFlush(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaOpen(t, "")
	res := qaExec(t, db, `
		CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
		  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
		CREATE MATERIALIZED VIEW v AS
		  SELECT window_start, window_end, auction, COUNT(*) AS n, MAX(price) AS top
		  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		  GROUP BY window_start, window_end, auction;
		CREATE MATERIALIZED VIEW c AS
		  SELECT window_start, window_end, auction, COUNT(*) AS n
		  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		  GROUP BY window_start, window_end, auction EMIT ON WINDOW CLOSE;
		INSERT INTO bids VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01');
		INSERT INTO bids VALUES (1, 30, TIMESTAMP '2024-01-01 00:00:02'), (2, 5, TIMESTAMP '2024-01-01 00:00:03');
	`)
	if res.RowsAffected != 2 {
		t.Errorf("RowsAffected of the multi-statement Exec = %d, want 2 (the last statement's)", res.RowsAffected)
	}
	qaExec(t, db, "FLUSH")
	if got, want := qaRows(t, db, "SELECT auction, n, top FROM v ORDER BY auction"), []string{"1|2|30", "2|1|5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("view after INSERT; FLUSH = %v, want %v", got, want)
	}
	if got := qaRows(t, db, "SELECT * FROM c"); len(got) != 0 {
		t.Errorf("EMIT ON WINDOW CLOSE view before the window completes = %v, want empty", got)
	}
	// INSERT and FLUSH in one Exec; the watermark (00:00:16 - 5s = 00:00:11) completes [0,10).
	qaExec(t, db, "INSERT INTO bids VALUES (3, 1, TIMESTAMP '2024-01-01 00:00:16'); FLUSH")
	if got, want := qaRows(t, db, "SELECT auction, n FROM c ORDER BY auction"), []string{"1|2", "2|1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("EMIT ON WINDOW CLOSE view after the watermark passed = %v, want %v", got, want)
	}
	// A late row is stored in the table but not applied to the view; it is in system.late_rows.
	qaExec(t, db, "INSERT INTO bids VALUES (1, 99, TIMESTAMP '2024-01-01 00:00:04'); FLUSH")
	if got, want := qaRows(t, db, "SELECT auction, n, top FROM v WHERE auction = 1"), []string{"1|2|30"}; !reflect.DeepEqual(got, want) {
		t.Errorf("view after a late row = %v, want %v", got, want)
	}
	if n := len(qaRows(t, db, "SELECT * FROM bids")); n != 5 {
		t.Errorf("table holds %d rows, want 5 (late rows are stored)", n)
	}
	if got := qaRows(t, db, "SELECT view_name, table_name, event_time FROM system.late_rows ORDER BY view_name"); len(got) != 2 {
		t.Errorf("late_rows = %v, want one per view (v, c)", got)
	}
	// Query returning the last statement's rows.
	if got := qaRows(t, db, "INSERT INTO bids VALUES (4, 4, TIMESTAMP '2024-01-01 00:00:30'); FLUSH; SELECT COUNT(*) FROM bids"); !reflect.DeepEqual(got, []string{"6"}) {
		t.Errorf("Query of INSERT; FLUSH; SELECT = %v, want [6]", got)
	}
}

// ---------------------------------------------------------------- context cancellation

func TestQAAPICancelSubscribeThroughDatabaseSQL(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaSQLOpen(t, "")
	qaSQLExec(t, db, "CREATE TABLE t (k BIGINT PRIMARY KEY, v BIGINT)")
	qaSQLExec(t, db, "CREATE MATERIALIZED VIEW s AS SELECT k, SUM(v) AS total FROM t GROUP BY k")
	qaSQLExec(t, db, "INSERT INTO t VALUES (1, 10)")

	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, "SUBSCRIBE s")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if !reflect.DeepEqual(cols, []string{"op", "k", "total"}) {
		t.Errorf("SUBSCRIBE columns = %v", cols)
	}
	type ch struct {
		op   string
		k, v int64
	}
	got := make(chan ch, 16)
	done := make(chan error, 1)
	go func() {
		for rows.Next() {
			var c ch
			if err := rows.Scan(&c.op, &c.k, &c.v); err != nil {
				done <- err
				return
			}
			got <- c
		}
		done <- rows.Err()
	}()
	recv := func() ch {
		select {
		case c := <-got:
			return c
		case err := <-done:
			t.Fatalf("subscription ended early: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no change within 10s")
		}
		return ch{}
	}
	if c := recv(); c != (ch{"+I", 1, 10}) {
		t.Errorf("snapshot = %+v, want +I 1 10", c)
	}
	// While the subscription holds a connection, the sql.DB still works on others.
	qaSQLExec(t, db, "INSERT INTO t VALUES (1, 15)")
	if c := recv(); c != (ch{"-U", 1, 10}) {
		t.Errorf("change 1 = %+v, want -U 1 10", c)
	}
	if c := recv(); c != (ch{"+U", 1, 15}) {
		t.Errorf("change 2 = %+v, want +U 1 15", c)
	}
	qaSQLExec(t, db, "DELETE FROM t WHERE k = 1")
	if c := recv(); c != (ch{"-D", 1, 15}) {
		t.Errorf("change 3 = %+v, want -D 1 15", c)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("rows.Err after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return within 10s of cancel")
	}
	rows.Close()
	// The DB is fine afterwards.
	qaSQLExec(t, db, "INSERT INTO t VALUES (2, 1)")
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM s"); n != 1 {
		t.Errorf("view has %d rows, want 1", n)
	}

	// A deadline on SUBSCRIBE with no changes: Next returns false at the deadline.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	rows2, err := db.QueryContext(ctx2, "SUBSCRIBE s WITH (snapshot = false)")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n := 0
	for rows2.Next() {
		n++
	}
	if n != 0 {
		t.Errorf("snapshot=false delivered %d rows with no changes", n)
	}
	if !errors.Is(rows2.Err(), context.DeadlineExceeded) {
		t.Errorf("Err = %v, want DeadlineExceeded", rows2.Err())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Next returned %v after a 300ms deadline", el)
	}
	rows2.Close()
	// An already-cancelled context: an error, not a blocking Next.
	ctx3, cancel3 := context.WithCancel(context.Background())
	cancel3()
	if rows3, err := db.QueryContext(ctx3, "SUBSCRIBE s"); err == nil {
		for rows3.Next() {
		}
		if rows3.Err() == nil {
			t.Error("SUBSCRIBE with a cancelled context ended without an error")
		}
		rows3.Close()
	}
}

func TestQAAPICancelLongQuery(t *testing.T) {
	defer qaWatchdog(t, 120*time.Second)()
	db := qaOpen(t, "")
	qaExec(t, db, "CREATE TABLE big (x BIGINT)")
	var sb strings.Builder
	sb.WriteString("INSERT INTO big VALUES ")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d)", i)
	}
	qaExec(t, db, sb.String())
	// 8e9 row combinations: far longer than the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rows, err := db.QueryContext(ctx, "SELECT COUNT(*) FROM big a, big b, big c WHERE a.x + b.x + c.x = -1")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	el := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("long query with a 300ms deadline: err = %v after %v, want DeadlineExceeded", err, el)
	}
	if el > 10*time.Second {
		t.Errorf("long query took %v to notice its 300ms deadline", el)
	}
	// Cancelling a view's backfill leaves no view.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err = db.ExecContext(ctx2, "CREATE MATERIALIZED VIEW slow AS SELECT a.x, COUNT(*) AS n FROM big a, big b, big c WHERE a.x + b.x = c.x GROUP BY a.x")
	if err == nil {
		t.Log("the view's backfill finished within 300ms")
	} else {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled CREATE MATERIALIZED VIEW: %v, want DeadlineExceeded", err)
		}
		if got := qaRows(t, db, "SHOW TABLES"); !reflect.DeepEqual(got, []string{"big"}) {
			t.Errorf("after a cancelled CREATE MATERIALIZED VIEW, SHOW TABLES = %v, want [big]", got)
		}
	}
	// Still usable.
	if got := qaRows(t, db, "SELECT COUNT(*) FROM big"); !reflect.DeepEqual(got, []string{"2000"}) {
		t.Errorf("count = %v", got)
	}
	// Through database/sql too.
	sdb := qaSQLOpen(t, "")
	qaSQLExec(t, sdb, "CREATE TABLE big (x BIGINT)")
	qaSQLExec(t, sdb, sb.String())
	ctx3, cancel3 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel3()
	var n int64
	start = time.Now()
	err = sdb.QueryRowContext(ctx3, "SELECT COUNT(*) FROM big a, big b, big c WHERE a.x + b.x + c.x = -1").Scan(&n)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("database/sql long query: %v after %v, want DeadlineExceeded", err, time.Since(start))
	}
	if n := qaSQLInt(t, sdb, "SELECT COUNT(*) FROM big"); n != 2000 {
		t.Errorf("count = %d", n)
	}
}

// ---------------------------------------------------------------- Append / QueryArrow

func qaField(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

func TestQAAPIAppendConversions(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaOpen(t, "")
	ctx := context.Background()
	qaExec(t, db, `CREATE TABLE a (i INT, b BIGINT, d DOUBLE, m DECIMAL(6,2), s VARCHAR, o BOOLEAN, dt DATE, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts)`)
	qaExec(t, db, "CREATE MATERIALIZED VIEW cnt AS SELECT COUNT(*) AS n, SUM(b) AS sb FROM a")
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		qaField("i", arrow.PrimitiveTypes.Int8),
		qaField("b", arrow.PrimitiveTypes.Int16),
		qaField("d", arrow.PrimitiveTypes.Float32),
		qaField("m", &arrow.Decimal128Type{Precision: 10, Scale: 3}),
		qaField("s", arrow.BinaryTypes.LargeString),
		qaField("o", arrow.FixedWidthTypes.Boolean),
		qaField("dt", arrow.FixedWidthTypes.Date64),
		qaField("ts", &arrow.TimestampType{Unit: arrow.Nanosecond}),
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for r := 0; r < 3; r++ {
		rb.Field(0).(*array.Int8Builder).Append(int8(-100 + r))
		rb.Field(1).(*array.Int16Builder).Append(int16(1000 * r))
		rb.Field(2).(*array.Float32Builder).Append(0.5 * float32(r))
		rb.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(12345 + r*1000))) // 12.345 -> 12.35 (half away from zero)
		rb.Field(4).(*array.LargeStringBuilder).Append(fmt.Sprintf("ü%d", r))
		if r == 1 {
			rb.Field(5).(*array.BooleanBuilder).AppendNull()
		} else {
			rb.Field(5).(*array.BooleanBuilder).Append(r == 0)
		}
		rb.Field(6).(*array.Date64Builder).Append(arrow.Date64FromTime(base.AddDate(0, 0, r).Truncate(24 * time.Hour)))
		rb.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(base.Add(time.Duration(r)*time.Second + 999999999*time.Nanosecond/1).UnixNano()))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	if err := db.Append(ctx, "a", rec); err != nil {
		t.Fatalf("Append: %v", err)
	}
	qaExec(t, db, "FLUSH")
	got := qaRows(t, db, "SELECT i, b, d, m, s, o, dt, ts FROM a ORDER BY i")
	want := []string{
		"-100|0|0|12.35|ü0|true|2024-05-06 00:00:00.000|2024-05-06 07:08:09.999",
		"-99|1000|0.5|13.35|ü1|NULL|2024-05-07 00:00:00.000|2024-05-06 07:08:10.999",
		"-98|2000|1|14.35|ü2|false|2024-05-08 00:00:00.000|2024-05-06 07:08:11.999",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Append:\n got  %v\n want %v", got, want)
	}
	if got := qaRows(t, db, "SELECT n, sb FROM cnt"); !reflect.DeepEqual(got, []string{"3|3000"}) {
		t.Errorf("view after Append = %v, want [3|3000]", got)
	}

	// A sliced record (non-zero array offsets) appends exactly its rows.
	sl := rec.NewSlice(1, 3)
	defer sl.Release()
	if err := db.Append(ctx, "a", sl); err != nil {
		t.Fatalf("Append of a slice: %v", err)
	}
	qaExec(t, db, "FLUSH")
	got = qaRows(t, db, "SELECT i, b, m, s, o FROM a ORDER BY i, b")
	want = []string{"-100|0|12.35|ü0|true", "-99|1000|13.35|ü1|NULL", "-99|1000|13.35|ü1|NULL", "-98|2000|14.35|ü2|false", "-98|2000|14.35|ü2|false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Append of rec[1:3]:\n got  %v\n want %v", got, want)
	}
	// An empty batch is fine and appends nothing.
	empty := rec.NewSlice(0, 0)
	defer empty.Release()
	if err := db.Append(ctx, "a", empty); err != nil {
		t.Errorf("Append of an empty batch: %v", err)
	}
	if got := qaRows(t, db, "SELECT COUNT(*) FROM a"); !reflect.DeepEqual(got, []string{"5"}) {
		t.Errorf("count = %v, want 5", got)
	}

	// Refusals: each names the column, applies nothing, leaves the DB usable.
	mk := func(fields []arrow.Field, fill func(b *array.RecordBuilder)) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
		defer b.Release()
		fill(b)
		return b.NewRecordBatch()
	}
	okFields := schema.Fields()
	fillOK := func(b *array.RecordBuilder, iv int8, tsv int64, tsNull bool) {
		b.Field(0).(*array.Int8Builder).Append(iv)
		b.Field(1).(*array.Int16Builder).Append(1)
		b.Field(2).(*array.Float32Builder).Append(1)
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
		b.Field(4).(*array.LargeStringBuilder).Append("x")
		b.Field(5).(*array.BooleanBuilder).Append(true)
		b.Field(6).(*array.Date64Builder).Append(0)
		if tsNull {
			b.Field(7).(*array.TimestampBuilder).AppendNull()
		} else {
			b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(tsv))
		}
	}
	renamed := append([]arrow.Field(nil), okFields...)
	renamed[1] = qaField("bb", arrow.PrimitiveTypes.Int16)
	wrongType := append([]arrow.Field(nil), okFields...)
	wrongType[1] = qaField("b", arrow.BinaryTypes.String)
	bigDec := append([]arrow.Field(nil), okFields...)
	bigDec[3] = qaField("m", &arrow.Decimal128Type{Precision: 10, Scale: 0})
	cases := []struct {
		name    string
		rec     arrow.RecordBatch
		mention string
	}{
		{"renamed column", mk(renamed, func(b *array.RecordBuilder) { fillOK(b, 1, base.UnixNano(), false) }), "b"},
		{"string into BIGINT", mk(wrongType, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int8Builder).Append(1)
			b.Field(1).(*array.StringBuilder).Append("12")
			b.Field(2).(*array.Float32Builder).Append(1)
			b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
			b.Field(4).(*array.LargeStringBuilder).Append("x")
			b.Field(5).(*array.BooleanBuilder).Append(true)
			b.Field(6).(*array.Date64Builder).Append(0)
			b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(base.UnixNano()))
		}), "b"},
		{"too few columns", mk(okFields[:7], func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int8Builder).Append(1)
			b.Field(1).(*array.Int16Builder).Append(1)
			b.Field(2).(*array.Float32Builder).Append(1)
			b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
			b.Field(4).(*array.LargeStringBuilder).Append("x")
			b.Field(5).(*array.BooleanBuilder).Append(true)
			b.Field(6).(*array.Date64Builder).Append(0)
		}), ""},
		{"decimal too wide for DECIMAL(6,2)", mk(bigDec, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int8Builder).Append(1)
			b.Field(1).(*array.Int16Builder).Append(1)
			b.Field(2).(*array.Float32Builder).Append(1)
			b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(123456))
			b.Field(4).(*array.LargeStringBuilder).Append("x")
			b.Field(5).(*array.BooleanBuilder).Append(true)
			b.Field(6).(*array.Date64Builder).Append(0)
			b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(base.UnixNano()))
		}), "m"},
		{"NULL event time in the second row", mk(okFields, func(b *array.RecordBuilder) {
			fillOK(b, 1, base.UnixNano(), false)
			fillOK(b, 2, 0, true)
		}), "ts"},
	}
	for _, c := range cases {
		err := db.Append(ctx, "a", c.rec)
		c.rec.Release()
		if err == nil {
			t.Errorf("%s: Append accepted", c.name)
			continue
		}
		if c.mention != "" && !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %q does not name column %s", c.name, err, c.mention)
		}
	}
	qaExec(t, db, "FLUSH")
	if got := qaRows(t, db, "SELECT COUNT(*) FROM a"); !reflect.DeepEqual(got, []string{"5"}) {
		t.Errorf("after refused Appends count = %v, want 5", got)
	}
	if got := qaRows(t, db, "SELECT n FROM cnt"); !reflect.DeepEqual(got, []string{"5"}) {
		t.Errorf("after refused Appends view n = %v, want 5", got)
	}
	// A cancelled context: refused, nothing applied.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r2 := mk(okFields, func(b *array.RecordBuilder) { fillOK(b, 3, base.UnixNano(), false) })
	defer r2.Release()
	if err := db.Append(cctx, "a", r2); err == nil {
		t.Log("Append with a cancelled context was accepted")
		qaExec(t, db, "DELETE FROM a WHERE i = 3")
	}
}

func TestQAAPIQueryArrowTypes(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaOpen(t, "")
	ctx := context.Background()
	qaExec(t, db, `CREATE TABLE q (i INT, b BIGINT, d DOUBLE, m DECIMAL(12,3), s VARCHAR, o BOOLEAN, dt DATE, ts TIMESTAMP(3))`)
	qaExec(t, db, `INSERT INTO q VALUES (-5, 5000000000, 0.25, -1234.567, 'x', false, DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.999'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	rr, err := db.QueryArrow(ctx, "SELECT i, b, d, m, s, o, dt, ts FROM q ORDER BY i NULLS LAST")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	wantTypes := []arrow.DataType{
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64,
		&arrow.Decimal128Type{Precision: 12, Scale: 3}, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean,
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
	}
	sch := rr.Schema()
	for i, w := range wantTypes {
		if !arrow.TypeEqual(sch.Field(i).Type, w) {
			t.Errorf("column %s: Arrow type %s, want %s", sch.Field(i).Name, sch.Field(i).Type, w)
		}
	}
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		if rows == 0 && rec.NumRows() > 0 {
			if v := rec.Column(0).(*array.Int32).Value(0); v != -5 {
				t.Errorf("i = %d", v)
			}
			if v := rec.Column(3).(*array.Decimal128).Value(0); v != decimal128.FromI64(-1234567) {
				t.Errorf("m = %v, want -1234567 unscaled", v)
			}
			if v := rec.Column(6).(*array.Date32).Value(0); v != -1 {
				t.Errorf("dt = %d, want -1 (1969-12-31)", v)
			}
			if v := rec.Column(7).(*array.Timestamp).Value(0); v != -1 {
				t.Errorf("ts = %d, want -1 ms", v)
			}
			if rec.NumRows() > 1 {
				for c := 0; c < 8; c++ {
					if !rec.Column(c).IsNull(1) {
						t.Errorf("column %d row 2 not NULL", c)
					}
				}
			}
		}
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		t.Error(err)
	}
	if rows != 2 {
		t.Errorf("QueryArrow rows = %d, want 2", rows)
	}
	// The result round-trips through Append.
	qaExec(t, db, `CREATE TABLE q2 (i INT, b BIGINT, d DOUBLE, m DECIMAL(12,3), s VARCHAR, o BOOLEAN, dt DATE, ts TIMESTAMP(3))`)
	rr2, err := db.QueryArrow(ctx, "SELECT * FROM q")
	if err != nil {
		t.Fatal(err)
	}
	for rr2.Next() {
		if err := db.Append(ctx, "q2", rr2.RecordBatch()); err != nil {
			t.Errorf("Append of QueryArrow's batch: %v", err)
		}
	}
	rr2.Release()
	a := qaRows(t, db, "SELECT * FROM q ORDER BY i NULLS LAST")
	b := qaRows(t, db, "SELECT * FROM q2 ORDER BY i NULLS LAST")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("QueryArrow -> Append round trip:\n %v\n %v", a, b)
	}
	// A query error and an empty result.
	if _, err := db.QueryArrow(ctx, "SELECT nope FROM q"); err == nil {
		t.Error("QueryArrow of a bad query succeeded")
	}
	rr3, err := db.QueryArrow(ctx, "SELECT i FROM q WHERE 1 = 0")
	if err != nil {
		t.Fatal(err)
	}
	for rr3.Next() {
		if rr3.RecordBatch().NumRows() != 0 {
			t.Error("rows from an empty result")
		}
	}
	if rr3.Schema().NumFields() != 1 {
		t.Errorf("empty result schema = %v", rr3.Schema())
	}
	rr3.Release()
}

// ---------------------------------------------------------------- Subscribe (Go API)

type qaChange struct {
	op  string
	row string
}

func qaNext(t *testing.T, rows *streamsql.Rows, n int, within time.Duration) []qaChange {
	t.Helper()
	type res struct {
		c  qaChange
		ok bool
	}
	var out []qaChange
	for len(out) < n {
		ch := make(chan res, 1)
		go func() {
			if !rows.Next() {
				ch <- res{}
				return
			}
			v := rows.Values()
			var parts []string
			for _, x := range v[1:] {
				switch y := x.(type) {
				case nil:
					parts = append(parts, "NULL")
				case time.Time:
					parts = append(parts, y.Format("15:04:05.000"))
				default:
					parts = append(parts, fmt.Sprint(y))
				}
			}
			ch <- res{qaChange{v[0].(string), strings.Join(parts, "|")}, true}
		}()
		select {
		case r := <-ch:
			if !r.ok {
				t.Fatalf("subscription ended after %v: %v", out, rows.Err())
			}
			out = append(out, r.c)
		case <-time.After(within):
			t.Fatalf("no change %d within %v (have %v)", len(out)+1, within, out)
		}
	}
	return out
}

func TestQAAPISubscribeChangelog(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaOpen(t, "")
	qaExec(t, db, `CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW w AS
		SELECT window_start, auction, COUNT(*) AS n, MAX(price) AS top
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW wc AS
		SELECT window_start, auction, COUNT(*) AS n
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction EMIT ON WINDOW CLOSE`)
	qaExec(t, db, `INSERT INTO bids VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01'), (2, 20, TIMESTAMP '2024-01-01 00:00:02')`)
	// No FLUSH: Subscribe's snapshot must still hold every row written before it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.Subscribe(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if got := rows.Columns(); !reflect.DeepEqual(got, []string{"op", "window_start", "auction", "n", "top"}) {
		t.Errorf("columns = %v", got)
	}
	if got := rows.ColumnTypes(); !reflect.DeepEqual(got, []string{"VARCHAR", "TIMESTAMP(3)", "BIGINT", "BIGINT", "BIGINT"}) {
		t.Errorf("column types = %v", got)
	}
	snap := qaNext(t, rows, 2, 10*time.Second)
	sort.Slice(snap, func(i, j int) bool { return snap[i].row < snap[j].row })
	if want := []qaChange{{"+I", "00:00:00.000|1|1|10"}, {"+I", "00:00:00.000|2|1|20"}}; !reflect.DeepEqual(snap, want) {
		t.Errorf("snapshot = %v, want %v", snap, want)
	}
	closing, err := db.Subscribe(ctx, "wc")
	if err != nil {
		t.Fatal(err)
	}
	defer closing.Close()
	qaExec(t, db, `INSERT INTO bids VALUES (1, 5, TIMESTAMP '2024-01-01 00:00:03')`)
	if got, want := qaNext(t, rows, 2, 10*time.Second), []qaChange{{"-U", "00:00:00.000|1|1|10"}, {"+U", "00:00:00.000|1|2|10"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("update = %v, want %v", got, want)
	}
	qaExec(t, db, `INSERT INTO bids VALUES (3, 1, TIMESTAMP '2024-01-01 00:00:15')`)
	if got, want := qaNext(t, rows, 1, 10*time.Second), []qaChange{{"+I", "00:00:10.000|3|1|1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("new window = %v, want %v", got, want)
	}
	// The watermark is now 00:00:10 >= window_time 00:00:09.999: [0,10) closed.
	ec := qaNext(t, closing, 2, 10*time.Second)
	sort.Slice(ec, func(i, j int) bool { return ec[i].row < ec[j].row })
	if want := []qaChange{{"+I", "00:00:00.000|1|2"}, {"+I", "00:00:00.000|2|1"}}; !reflect.DeepEqual(ec, want) {
		t.Errorf("EMIT ON WINDOW CLOSE changelog = %v, want %v", ec, want)
	}
	// Rows.Close from another goroutine unblocks a waiting Next.
	done := make(chan bool, 1)
	go func() { done <- closing.Next() }()
	time.Sleep(50 * time.Millisecond)
	closing.Close()
	select {
	case ok := <-done:
		if ok {
			t.Errorf("Next returned a row after Close: %v", closing.Values())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Rows.Close did not unblock Next")
	}
	if err := closing.Close(); err != nil {
		t.Errorf("second Rows.Close: %v", err)
	}
	// Subscribe to something that is not a materialized view: a clear error.
	for _, name := range []string{"nope", "bids", ""} {
		if r, err := db.Subscribe(ctx, name); err == nil {
			r.Close()
			if name != "bids" {
				t.Errorf("Subscribe(%q) succeeded", name)
			} else {
				t.Logf("Subscribe to a table is accepted")
			}
		}
	}
}

func TestQAAPISubscribeSnapshotFalseAndMany(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaOpen(t, "")
	qaExec(t, db, `CREATE TABLE u (k VARCHAR, v BIGINT, PRIMARY KEY (k) NOT ENFORCED)`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW uv AS SELECT k, v FROM u`)
	qaExec(t, db, `INSERT INTO u VALUES ('a', 1), ('b', 2)`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, "SUBSCRIBE uv WITH (snapshot = false)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	// Many subscribers at once each get the full snapshot.
	subs := make([]*streamsql.Rows, 5)
	for i := range subs {
		subs[i], err = db.Subscribe(ctx, "uv")
		if err != nil {
			t.Fatal(err)
		}
		defer subs[i].Close()
	}
	qaExec(t, db, `INSERT INTO u VALUES ('a', 10)`)
	if got, want := qaNext(t, rows, 2, 10*time.Second), []qaChange{{"-U", "a|1"}, {"+U", "a|10"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot=false: first changes = %v, want %v (no snapshot)", got, want)
	}
	for i, s := range subs {
		got := qaNext(t, s, 4, 10*time.Second)
		first := got[:2]
		sort.Slice(first, func(i, j int) bool { return first[i].row < first[j].row })
		if want := []qaChange{{"+I", "a|1"}, {"+I", "b|2"}, {"-U", "a|1"}, {"+U", "a|10"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("subscriber %d: %v, want %v", i, got, want)
		}
	}
	// Cancelling the shared ctx ends all of them with ctx's error.
	cancel()
	for i, s := range append(subs, rows) {
		done := make(chan bool, 1)
		go func() { done <- s.Next() }()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("subscriber %d: row after cancel", i)
			} else if !errors.Is(s.Err(), context.Canceled) {
				t.Errorf("subscriber %d: Err = %v, want Canceled", i, s.Err())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber %d: Next blocked after cancel", i)
		}
	}
}

// ---------------------------------------------------------------- Close, restart

func TestQAAPICloseSemantics(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db, err := streamsql.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	qaExec(t, db, "CREATE TABLE t (k BIGINT PRIMARY KEY, v BIGINT)")
	qaExec(t, db, "CREATE MATERIALIZED VIEW mv AS SELECT COUNT(*) AS n FROM t")
	qaExec(t, db, "INSERT INTO t VALUES (1, 1)")
	sub, err := db.Subscribe(context.Background(), "mv")
	if err != nil {
		t.Fatal(err)
	}
	qaNext(t, sub, 1, 10*time.Second)
	res, err := db.Query("SELECT k FROM t")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- sub.Next() }()
	time.Sleep(50 * time.Millisecond)
	if err := db.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case ok := <-done:
		if ok {
			t.Error("Subscribe Next returned a row after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("db.Close did not end a waiting Subscribe Next")
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v (Close is idempotent)", err)
	}
	// Everything after Close is an error, never a panic or a hang.
	if _, err := db.Exec("INSERT INTO t VALUES (2, 2)"); err == nil {
		t.Error("Exec after Close succeeded")
	}
	if _, err := db.Query("SELECT 1"); err == nil {
		t.Error("Query after Close succeeded")
	}
	if _, err := db.QueryArrow(context.Background(), "SELECT 1"); err == nil {
		t.Error("QueryArrow after Close succeeded")
	}
	if _, err := db.Subscribe(context.Background(), "mv"); err == nil {
		t.Error("Subscribe after Close succeeded")
	}
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{qaField("k", arrow.PrimitiveTypes.Int64), qaField("v", arrow.PrimitiveTypes.Int64)}, nil))
	b.Field(0).(*array.Int64Builder).Append(5)
	b.Field(1).(*array.Int64Builder).Append(5)
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	if err := db.Append(context.Background(), "t", rec); err == nil {
		t.Error("Append after Close succeeded")
	}
	// Rows materialized before Close are still readable (or end cleanly).
	for res.Next() {
	}
	res.Close()

	// database/sql: Close then use is an error.
	sdb, err := sql.Open("streamsql", "")
	if err != nil {
		t.Fatal(err)
	}
	qaSQLExec(t, sdb, "CREATE TABLE t (x BIGINT)")
	if err := sdb.Close(); err != nil {
		t.Errorf("sql.DB Close: %v", err)
	}
	if _, err := sdb.Exec("SELECT 1"); err == nil {
		t.Error("sql.DB Exec after Close succeeded")
	}
}

func TestQAAPIReopenKeepsEverything(t *testing.T) {
	defer qaWatchdog(t, 90*time.Second)()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	qaExec(t, db, `CREATE TABLE bids (auction BIGINT, price DECIMAL(8,2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)`)
	qaExec(t, db, `CREATE TABLE rates (cur VARCHAR, rate DOUBLE, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts)`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW tot AS SELECT auction, SUM(price) AS s, COUNT(*) AS n FROM bids GROUP BY auction`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW win AS
		SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end EMIT ON WINDOW CLOSE`)
	qaExec(t, db, `CREATE VIEW big_bids AS SELECT * FROM bids WHERE price > 5`)
	qaExec(t, db, `INSERT INTO bids VALUES (1, 1.25, TIMESTAMP '2024-01-01 00:00:01'), (1, 7.50, TIMESTAMP '2024-01-01 00:00:05'), (2, 9.99, TIMESTAMP '2024-01-01 00:00:12')`)
	qaExec(t, db, `INSERT INTO rates VALUES ('EUR', 1.1, TIMESTAMP '2024-01-01 00:00:00'), ('EUR', 1.2, TIMESTAMP '2024-01-01 00:00:01')`)
	qaExec(t, db, `INSERT INTO bids VALUES (3, 1, TIMESTAMP '2024-01-01 00:00:02')`) // late for win (W = 10s)
	qaExec(t, db, "FLUSH")
	queries := []string{
		"SHOW TABLES",
		"SELECT auction, s, n FROM tot ORDER BY auction",
		"SELECT window_start, n FROM win ORDER BY window_start",
		"SELECT auction, price FROM big_bids ORDER BY auction",
		"SELECT cur, rate FROM rates",
		"SELECT COUNT(*) FROM bids",
		"SELECT view_name, event_time FROM system.late_rows ORDER BY view_name",
		"DESCRIBE bids",
	}
	before := map[string][]string{}
	for _, q := range queries {
		before[q] = qaRows(t, db, q)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := streamsql.Open(dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db2.Close()
	for _, q := range queries {
		if got := qaRows(t, db2, q); !reflect.DeepEqual(got, before[q]) {
			t.Errorf("after reopen %q:\n got  %v\n want %v", q, got, before[q])
		}
	}
	// The watermark survived: a row at 00:00:03 is still late for win, and 00:00:25 closes [10,20).
	qaExec(t, db2, `INSERT INTO bids VALUES (4, 2, TIMESTAMP '2024-01-01 00:00:03'), (5, 3, TIMESTAMP '2024-01-01 00:00:25'); FLUSH`)
	if got, want := qaRows(t, db2, "SELECT window_start, n FROM win ORDER BY window_start"), []string{"2024-01-01 00:00:00.000|2", "2024-01-01 00:00:10.000|1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("win after reopen and more rows = %v, want %v", got, want)
	}
	if got := qaRows(t, db2, "SELECT COUNT(*) FROM system.late_rows WHERE view_name = 'win'"); !reflect.DeepEqual(got, []string{"2"}) {
		t.Errorf("late rows for win = %v, want 2", got)
	}
	// Subscribe after reopen: the snapshot is the current view.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := db2.Subscribe(ctx, "tot")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if got := qaNext(t, sub, 5, 10*time.Second); len(got) != 5 {
		t.Errorf("snapshot after reopen = %v", got)
	}
	// The same through database/sql.
	cancel()
	db2.Close()
	sdb := qaSQLOpen(t, dir)
	var s string
	if err := sdb.QueryRow("SELECT s FROM tot WHERE auction = 1").Scan(&s); err != nil || s != "8.75" {
		t.Errorf("database/sql reopen: s = %q, %v; want 8.75", s, err)
	}
}

// ---------------------------------------------------------------- concurrency

func TestQAAPIConcurrentUse(t *testing.T) {
	defer qaWatchdog(t, 120*time.Second)()
	db := qaOpen(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qaExec(t, db, `CREATE TABLE ev (g BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW per AS SELECT g, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY g`)
	sub, err := db.Subscribe(ctx, "per")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Fold the changelog in the background.
	folded := map[string]int{}
	var fmu sync.Mutex
	subDone := make(chan error, 1)
	go func() {
		for sub.Next() {
			v := sub.Values()
			key := fmt.Sprint(v[1:]...)
			fmu.Lock()
			switch v[0] {
			case "+I", "+U":
				folded[key]++
			case "-U", "-D":
				folded[key]--
				if folded[key] == 0 {
					delete(folded, key)
				}
			}
			fmu.Unlock()
		}
		subDone <- sub.Err()
	}()
	const workers, per = 6, 40
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{qaField("g", arrow.PrimitiveTypes.Int64), qaField("v", arrow.PrimitiveTypes.Int64),
		qaField("ts", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})}, nil)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, workers*per*3)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				g := int64(i % 5)
				ts := base.Add(time.Duration(w*per+i) * time.Millisecond)
				if w%2 == 0 {
					if _, err := db.ExecContext(ctx, "INSERT INTO ev VALUES (?, ?, ?)", g, int64(1), ts); err != nil {
						errs <- fmt.Errorf("insert: %w", err)
					}
				} else {
					b := array.NewRecordBuilder(mem, schema)
					b.Field(0).(*array.Int64Builder).Append(g)
					b.Field(1).(*array.Int64Builder).Append(1)
					b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMilli()))
					rec := b.NewRecordBatch()
					b.Release()
					if err := db.Append(ctx, "ev", rec); err != nil {
						errs <- fmt.Errorf("append: %w", err)
					}
					rec.Release()
				}
				if i%10 == 0 {
					rows, err := db.QueryContext(ctx, "SELECT g, n FROM per")
					if err != nil {
						errs <- fmt.Errorf("query: %w", err)
						continue
					}
					for rows.Next() {
						_ = rows.Values()
					}
					rows.Close()
					rr, err := db.QueryArrow(ctx, "SELECT COUNT(*) FROM ev")
					if err != nil {
						errs <- fmt.Errorf("arrow: %w", err)
						continue
					}
					for rr.Next() {
					}
					rr.Release()
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	qaExec(t, db, "FLUSH")
	total := int64(workers * per)
	if got := qaRows(t, db, "SELECT COUNT(*), SUM(v) FROM ev"); !reflect.DeepEqual(got, []string{fmt.Sprintf("%d|%d", total, total)}) {
		t.Errorf("table = %v, want %d rows", got, total)
	}
	view := qaRows(t, db, "SELECT g, n, s FROM per ORDER BY g")
	if len(view) != 5 {
		t.Errorf("view = %v", view)
	}
	want := map[string]int{}
	for _, r := range view {
		want[strings.ReplaceAll(r, "|", " ")]++
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fmu.Lock()
		eq := reflect.DeepEqual(folded, want)
		snapshot := fmt.Sprint(folded)
		fmu.Unlock()
		if eq {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("folded changelog %s != view %v", snapshot, want)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-subDone:
	case <-time.After(10 * time.Second):
		t.Fatal("subscriber did not end after cancel")
	}
}

func TestQAAPIConcurrentDatabaseSQL(t *testing.T) {
	defer qaWatchdog(t, 120*time.Second)()
	db := qaSQLOpen(t, filepath.Join(t.TempDir(), "db")+"?sync=off")
	db.SetMaxOpenConns(8)
	qaSQLExec(t, db, "CREATE TABLE kv (k BIGINT PRIMARY KEY, v VARCHAR)")
	qaSQLExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n FROM kv")
	ins, err := db.Prepare("INSERT INTO kv VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	sel, err := db.Prepare("SELECT v FROM kv WHERE k = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := int64(w*1000 + i)
				if _, err := ins.Exec(k, fmt.Sprintf("v%d", k)); err != nil {
					errs <- err
					return
				}
				var v string
				if err := sel.QueryRow(k).Scan(&v); err != nil || v != fmt.Sprintf("v%d", k) {
					errs <- fmt.Errorf("read back %d: %q %v", k, v, err)
					return
				}
				if i%7 == 0 {
					if _, err := db.Exec("DELETE FROM kv WHERE k = ?", k); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	qaSQLExec(t, db, "FLUSH")
	want := int64(8 * (50 - 8)) // i%7==0 for 8 values of i in [0,50)
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM kv"); n != want {
		t.Errorf("rows = %d, want %d", n, want)
	}
	if n := qaSQLInt(t, db, "SELECT n FROM c"); n != want {
		t.Errorf("view n = %d, want %d", n, want)
	}
}

// ---------------------------------------------------------------- prepared statements, transactions, driver

func TestQAAPIPrepareAndTx(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	db := qaSQLOpen(t, "")
	qaSQLExec(t, db, "CREATE TABLE t (a BIGINT, b VARCHAR)")
	st, err := db.Prepare("INSERT INTO t VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r, err := st.Exec(i, fmt.Sprint("x", i))
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			t.Errorf("RowsAffected = %d", n)
		}
	}
	if _, err := st.Exec(1); err == nil {
		t.Error("prepared INSERT with 1 of 2 args accepted")
	}
	st.Close()
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM t"); n != 5 {
		t.Errorf("count = %d, want 5", n)
	}
	// A bad statement fails at Prepare or at first use, with a positioned error.
	if st, err := db.Prepare("SELECT nope FROM t WHERE a = ?"); err == nil {
		var x int64
		err = st.QueryRow(1).Scan(&x)
		st.Close()
		if err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("prepared bad column: %v", err)
		}
	}
	// RowsAffected of UPDATE / DELETE on a keyed table.
	qaSQLExec(t, db, "CREATE TABLE k (id BIGINT PRIMARY KEY, v BIGINT)")
	qaSQLExec(t, db, "INSERT INTO k VALUES (1, 1), (2, 2), (3, 3)")
	if n, _ := qaSQLExec(t, db, "UPDATE k SET v = v + 10 WHERE id >= ?", 2).RowsAffected(); n != 2 {
		t.Errorf("UPDATE RowsAffected = %d, want 2", n)
	}
	if n, _ := qaSQLExec(t, db, "DELETE FROM k WHERE id = ?", 1).RowsAffected(); n != 1 {
		t.Errorf("DELETE RowsAffected = %d, want 1", n)
	}
	if n, _ := qaSQLExec(t, db, "DELETE FROM k WHERE id = ?", 99).RowsAffected(); n != 0 {
		t.Errorf("DELETE of no row RowsAffected = %d, want 0", n)
	}
	r := qaSQLExec(t, db, "INSERT INTO k VALUES (9, 9)")
	if _, err := r.LastInsertId(); err == nil {
		t.Log("LastInsertId returned no error")
	}
	// Transactions: not promised by SPEC; Begin must fail clearly (or work), never panic or hang,
	// and the DB stays usable.
	tx, err := db.Begin()
	if err == nil {
		_, err1 := tx.Exec("INSERT INTO t VALUES (100, 'tx')")
		err2 := tx.Rollback()
		t.Logf("Begin accepted; exec %v rollback %v", err1, err2)
	} else if !strings.Contains(strings.ToLower(err.Error()), "transaction") {
		t.Errorf("Begin error %q does not say transactions are unsupported", err)
	}
	if n := qaSQLInt(t, db, "SELECT COUNT(*) FROM t"); n != 5 {
		t.Errorf("after Begin, count = %d, want 5", n)
	}
	// A dedicated connection works like the pool.
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got int64
	if err := c.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t WHERE a < ?", 3).Scan(&got); err != nil || got != 3 {
		t.Errorf("Conn query = %d, %v", got, err)
	}
	if err := c.PingContext(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestQAAPIDriverOpenDirect(t *testing.T) {
	defer qaWatchdog(t, 60*time.Second)()
	dir := filepath.Join(t.TempDir(), "db")
	d := &streamsql.Driver{}
	cn, err := d.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// While it is open the path is held.
	if db2, err := streamsql.Open(dir); err == nil {
		db2.Close()
		t.Error("streamsql.Open of a path a driver connection holds succeeded")
	}
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing the connection releases the database.
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatalf("Open after the driver connection closed: %v", err)
	}
	db.Close()
	// sql.OpenDB with the connector.
	conn, err := d.OpenConnector(dir + "?sync=off")
	if err != nil {
		t.Fatal(err)
	}
	sdb := sql.OpenDB(conn)
	qaSQLExec(t, sdb, "CREATE TABLE t (x BIGINT)")
	qaSQLExec(t, sdb, "INSERT INTO t VALUES (1)")
	if err := sdb.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = streamsql.Open(dir)
	if err != nil {
		t.Fatalf("Open after sql.DB.Close: %v", err)
	}
	defer db.Close()
	if got := qaRows(t, db, "SELECT x FROM t"); !reflect.DeepEqual(got, []string{"1"}) {
		t.Errorf("rows = %v", got)
	}
}

// ---------------------------------------------------------------- durability across kill -9 (SPEC §4)

func TestQAAPIKill9KeepsAcknowledgedStatements(t *testing.T) {
	if p := os.Getenv("QA_API_KILL_CHILD"); p != "" {
		qaKillChild(p)
		return
	}
	defer qaWatchdog(t, 120*time.Second)()
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestQAAPIKill9KeepsAcknowledgedStatements$", "-test.count=1")
	cmd.Env = append(os.Environ(), "QA_API_KILL_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := -1
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "ACK %d", &n); err == nil {
			acked = n
			if acked >= 60 {
				break
			}
		}
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	if acked < 0 {
		t.Fatal("child acknowledged nothing")
	}
	db := qaOpen(t, path)
	qaExec(t, db, "FLUSH")
	rows := qaRows(t, db, "SELECT COUNT(*), COUNT(DISTINCT batch), MAX(batch) FROM ev")
	var cnt, distinct, max int
	fmt.Sscanf(strings.ReplaceAll(rows[0], "|", " "), "%d %d %d", &cnt, &distinct, &max)
	if max < acked {
		t.Errorf("after kill -9: max batch %d < last acknowledged %d (acknowledged rows lost)", max, acked)
	}
	if cnt != 10*distinct || distinct != max+1 {
		t.Errorf("after kill -9: %d rows in %d batches, max %d: a statement applied partly or a gap", cnt, distinct, max)
	}
	view := qaRows(t, db, "SELECT SUM(n) FROM per_batch")
	if want := fmt.Sprint(cnt); len(view) != 1 || view[0] != want {
		t.Errorf("view after kill -9 = %v, want %s (equal to a clean run over the table)", view, want)
	}
	// Rows arrive in event-time order, so none is late: the window view counts every row.
	if win := qaRows(t, db, "SELECT SUM(n) FROM per_sec"); len(win) != 1 || win[0] != fmt.Sprint(cnt) {
		t.Errorf("windowed view after kill -9 = %v, want %d", win, cnt)
	}
}

func qaKillChild(path string) {
	db, err := streamsql.Open(path, streamsql.WithCheckpointInterval(50*time.Millisecond))
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	if _, err := db.Exec(`CREATE TABLE ev (batch BIGINT, i BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
		CREATE MATERIALIZED VIEW per_batch AS SELECT batch, COUNT(*) AS n FROM ev GROUP BY batch;
		CREATE MATERIALIZED VIEW per_sec AS SELECT window_start, COUNT(*) AS n
		  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end`); err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for b := 0; ; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO ev VALUES ")
		for i := 0; i < 10; i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%d, %d, TIMESTAMP '%s')", b, i, base.Add(time.Duration(b*10+i)*100*time.Millisecond).Format("2006-01-02 15:04:05.000"))
		}
		if _, err := db.Exec(sb.String()); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Printf("ACK %d\n", b)
	}
}

// Subscribing while rows stream in: snapshot + changes fold to exactly the view.
func TestQAAPISubscribeMidStreamFoldsToView(t *testing.T) {
	defer qaWatchdog(t, 120*time.Second)()
	db := qaOpen(t, "")
	qaExec(t, db, `CREATE TABLE u (k BIGINT PRIMARY KEY, v BIGINT)`)
	qaExec(t, db, `CREATE MATERIALIZED VIEW agg AS SELECT v % 7 AS g, COUNT(*) AS n, SUM(v) AS s FROM u GROUP BY v % 7`)
	stop := make(chan struct{})
	wdone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				wdone <- nil
				return
			default:
			}
			var err error
			switch i % 3 {
			case 0, 1:
				_, err = db.Exec("INSERT INTO u VALUES (?, ?)", int64(i%50), int64(i))
			case 2:
				_, err = db.Exec("DELETE FROM u WHERE k = ?", int64((i*7)%50))
			}
			if err != nil {
				wdone <- err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := db.Subscribe(ctx, "agg")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	folded := map[string]int{}
	var mu sync.Mutex
	var bad []string
	go func() {
		for sub.Next() {
			v := sub.Values()
			key := fmt.Sprint(v[1:]...)
			mu.Lock()
			switch v[0] {
			case "+I", "+U":
				folded[key]++
			default:
				folded[key]--
				if folded[key] < 0 {
					bad = append(bad, fmt.Sprint(v[0], " ", key, " retracts a row not there"))
				}
				if folded[key] == 0 {
					delete(folded, key)
				}
			}
			mu.Unlock()
		}
	}()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	if err := <-wdone; err != nil {
		t.Fatal(err)
	}
	qaExec(t, db, "FLUSH")
	want := map[string]int{}
	for _, r := range qaRows(t, db, "SELECT g, n, s FROM agg") {
		want[strings.ReplaceAll(r, "|", " ")]++
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		eq := reflect.DeepEqual(folded, want)
		got := fmt.Sprint(folded)
		mu.Unlock()
		if eq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("folded changelog %s\n != view %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("changelog retracted rows it never inserted: %v", bad[:min(len(bad), 5)])
	}
}
