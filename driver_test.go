package streamsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

func sqlOpenT(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("streamsql", dsn)
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", dsn, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		t.Fatalf("Ping(%q): %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqlExec(t testing.TB, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("Exec(%s): %v", q, err)
	}
	return res
}

// sqlStrings runs q and renders each row as values joined with |.
func sqlStrings(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("Query(%s): %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, rowString(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDriverRoundTrip(t *testing.T) {
	db := sqlOpenT(t, ":memory:")
	sqlExec(t, db, `CREATE TABLE t (id BIGINT, i INT, ok BOOLEAN, x DOUBLE, amt DECIMAL(10,2),
		name VARCHAR, d DATE, ts TIMESTAMP(3))`)
	t1 := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC)
	// A non-UTC time.Time is the same instant.
	t2 := time.Date(2024, 1, 2, 12, 0, 0, 0, time.FixedZone("X", 2*3600))
	res := sqlExec(t, db, `INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, DATE '2024-01-02', ?), (?, ?, ?, ?, ?, ?, NULL, ?)`,
		int64(1), 10, true, 1.25, "3.50", "a'b", t1,
		2, int32(-3), false, float32(0.5), "-0.01", nil, t2)
	if n, err := res.RowsAffected(); err != nil || n != 2 {
		t.Fatalf("RowsAffected = %d, %v; want 2", n, err)
	}
	rows, err := db.Query("SELECT id, i, ok, x, amt, name, d, ts FROM t WHERE id >= ? ORDER BY id", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ct := range cts {
		names = append(names, ct.DatabaseTypeName())
	}
	wantNames := []string{"BIGINT", "INT", "BOOLEAN", "DOUBLE", "DECIMAL", "VARCHAR", "DATE", "TIMESTAMP"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("DatabaseTypeName = %v, want %v", names, wantNames)
	}
	wantScan := []reflect.Type{
		reflect.TypeOf(int64(0)), reflect.TypeOf(int64(0)), reflect.TypeOf(false), reflect.TypeOf(0.0),
		reflect.TypeOf(""), reflect.TypeOf(""), reflect.TypeOf(time.Time{}), reflect.TypeOf(time.Time{}),
	}
	for i, ct := range cts {
		if ct.ScanType() != wantScan[i] {
			t.Errorf("column %s ScanType = %v, want %v", ct.Name(), ct.ScanType(), wantScan[i])
		}
		p, sc, ok := ct.DecimalSize()
		if want := names[i] == "DECIMAL"; ok != want || ok && (p != 10 || sc != 2) {
			t.Errorf("column %s DecimalSize = %d, %d, %v", ct.Name(), p, sc, ok)
		}
		if _, ok := ct.Nullable(); ok {
			t.Errorf("column %s: Nullable claims to know", ct.Name())
		}
	}
	type row struct {
		id, i int64
		ok    bool
		x     float64
		amt   string
		name  sql.NullString
		d     sql.NullTime
		ts    time.Time
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.i, &r.ok, &r.x, &r.amt, &r.name, &r.d, &r.ts); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	r0, r1 := got[0], got[1]
	if r0.id != 1 || r0.i != 10 || !r0.ok || r0.x != 1.25 || r0.amt != "3.50" || r0.name != (sql.NullString{String: "a'b", Valid: true}) ||
		!r0.d.Valid || !r0.d.Time.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) || !r0.ts.Equal(t1) {
		t.Errorf("row 0 = %+v", r0)
	}
	if r1.id != 2 || r1.i != -3 || r1.ok || r1.x != 0.5 || r1.amt != "-0.01" || r1.name.Valid || r1.d.Valid || !r1.ts.Equal(t2) {
		t.Errorf("row 1 = %+v", r1)
	}
	if r1.ts.Location() != time.UTC || !r1.ts.Equal(time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("row 1 ts = %v, want 2024-01-02 10:00:00 UTC", r1.ts)
	}
	// QueryRow with a parameter in the WHERE clause, and a []byte argument.
	var name string
	if err := db.QueryRow("SELECT name FROM t WHERE id = ? AND ts = ?", 1, t1).Scan(&name); err != nil || name != "a'b" {
		t.Fatalf("QueryRow: %q, %v", name, err)
	}
	sqlExec(t, db, "INSERT INTO t (id, name) VALUES (?, ?)", 3, []byte("bytes"))
	if err := db.QueryRow("SELECT name FROM t WHERE id = 3").Scan(&name); err != nil || name != "bytes" {
		t.Fatalf("[]byte argument: %q, %v", name, err)
	}
	// Wrong argument count is an error, not a panic, and the DB is still usable.
	if _, err := db.Exec("INSERT INTO t (id) VALUES (?)", 1, 2); err == nil {
		t.Error("extra argument accepted")
	}
	if _, err := db.Exec("INSERT INTO t (id) VALUES (?)", sql.Named("x", 1)); err == nil {
		t.Error("named argument accepted")
	}
	if _, err := db.Begin(); err == nil {
		t.Error("Begin succeeded; transactions are documented as unsupported")
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("count = %d, %v", n, err)
	}
}

func TestDriverPreparedStatements(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
	sqlExec(t, db, `CREATE MATERIALIZED VIEW w AS
		SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k`)
	ins, err := db.Prepare("INSERT INTO ev VALUES (?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 50; i++ {
		if _, err := ins.Exec(i%2, i, base.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("Exec %d: %v", i, err)
		}
	}
	if _, err := ins.Exec(1, 2); err == nil {
		t.Error("prepared Exec with too few arguments succeeded")
	}
	q, err := db.Prepare("SELECT n, s FROM w WHERE k = ? AND window_start = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	sqlExec(t, db, "FLUSH")
	for w := 0; w < 5; w++ {
		for k := 0; k < 2; k++ {
			var n, s int64
			if err := q.QueryRow(k, base.Add(time.Duration(w)*10*time.Second)).Scan(&n, &s); err != nil {
				t.Fatalf("window %d k %d: %v", w, k, err)
			}
			var wantS int64
			for i := w * 10; i < w*10+10; i++ {
				if i%2 == k {
					wantS += int64(i)
				}
			}
			if n != 5 || s != wantS {
				t.Errorf("window %d k %d: n=%d s=%d, want 5 %d", w, k, n, s, wantS)
			}
		}
	}
	// A syntax error is reported by Prepare.
	if _, err := db.Prepare("SELEC ?"); err == nil {
		t.Error("Prepare of bad SQL succeeded")
	}
}

// TestDriverPlaceholdersDistinct: two placeholders are two expressions, whatever their values
// (an aggregate, a FILTER, a GROUP BY key), as two different literals would be.
func TestDriverPlaceholdersDistinct(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, "CREATE TABLE t (k BIGINT, c VARCHAR)")
	sqlExec(t, db, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'b')")
	var a, b int64
	if err := db.QueryRow("SELECT COUNT(*) FILTER (WHERE c = ?), COUNT(*) FILTER (WHERE c = ?) FROM t", "a", "b").Scan(&a, &b); err != nil || a != 1 || b != 2 {
		t.Errorf("FILTER (WHERE c = ?) twice: %d %d, %v; want 1 2", a, b, err)
	}
	if err := db.QueryRow("SELECT SUM(k + ?), SUM(k + ?) FROM t", 0, 100).Scan(&a, &b); err != nil || a != 6 || b != 306 {
		t.Errorf("SUM(k + ?) twice: %d %d, %v; want 6 306", a, b, err)
	}
	if _, err := db.Query("SELECT k + ?, COUNT(*) FROM t GROUP BY k + ?", 0, 100); err == nil || !strings.Contains(err.Error(), "GROUP BY") {
		t.Errorf("k + ? grouped by another k + ?: %v, want an error that k is not grouped", err)
	}
	if err := db.QueryRow("SELECT MAX(k) FROM t WHERE c <> '?' AND k > ?", 1).Scan(&a); err != nil || a != 3 {
		t.Errorf("a ? in a string beside a placeholder: %d, %v; want 3", a, err)
	}
}

func TestDriverSubscribeCancel(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, "CREATE TABLE t (k BIGINT, v BIGINT)")
	sqlExec(t, db, "CREATE MATERIALIZED VIEW s AS SELECT k, SUM(v) AS total FROM t GROUP BY k")
	sqlExec(t, db, "INSERT INTO t VALUES (1, 10)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, "SUBSCRIBE s")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !reflect.DeepEqual(cols, []string{"op", "k", "total"}) {
		t.Errorf("columns = %v", cols)
	}
	type res struct {
		op   string
		k, v int64
		ok   bool
	}
	next := func() chan res {
		ch := make(chan res, 1)
		go func() {
			var r res
			if r.ok = rows.Next(); r.ok {
				if err := rows.Scan(&r.op, &r.k, &r.v); err != nil {
					r.ok = false
				}
			}
			ch <- r
		}()
		return ch
	}
	wait := func(ch chan res) res {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("rows.Next did not return within 20s")
		}
		return res{}
	}
	if r := wait(next()); !r.ok || r.op != "+I" || r.k != 1 || r.v != 10 {
		t.Fatalf("snapshot row = %+v, err %v", r, rows.Err())
	}
	sqlExec(t, db, "INSERT INTO t VALUES (2, 5)")
	if r := wait(next()); !r.ok || r.op != "+I" || r.k != 2 || r.v != 5 {
		t.Fatalf("change row = %+v, err %v", r, rows.Err())
	}
	ch := next() // blocks: no change pending
	cancel()
	if r := wait(ch); r.ok {
		t.Fatalf("rows.Next returned a row after cancel: %+v", r)
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("rows.Err() = %v, want context.Canceled", err)
	}
	// The pool is healthy afterwards.
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count = %d, %v", n, err)
	}
}

func TestDriverFileDSNReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	for round := 0; round < 3; round++ {
		dsn := dir
		if round == 1 {
			dsn = dir + "?sync=off"
		}
		db, err := sql.Open("streamsql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			sqlExec(t, db, "CREATE TABLE t (a BIGINT, s VARCHAR)")
			sqlExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n, SUM(a) AS s FROM t")
		}
		sqlExec(t, db, "INSERT INTO t VALUES (?, ?)", round, fmt.Sprint("r", round))
		want := []string{fmt.Sprintf("%d|%d", round+1, round*(round+1)/2)}
		if got := sqlStrings(t, db, "SELECT n, s FROM c"); !reflect.DeepEqual(got, want) {
			t.Errorf("round %d: view = %v, want %v", round, got, want)
		}
		// sql.DB.Close closes the database: the same path opens again in this process.
		if err := db.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
	}
	db := sqlOpenT(t, dir)
	if got, want := sqlStrings(t, db, "SELECT a, s FROM t ORDER BY a"), []string{"0|r0", "1|r1", "2|r2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows after reopen = %v, want %v", got, want)
	}
}

func TestDriverPathInUse(t *testing.T) {
	dir := t.TempDir()
	db1 := sqlOpenT(t, dir)
	sqlExec(t, db1, "CREATE TABLE t (a BIGINT)")
	db2, err := sql.Open("streamsql", dir)
	if err != nil {
		t.Fatal(err) // sql.Open is lazy; the error comes on first use
	}
	defer db2.Close()
	err = db2.Ping()
	if err == nil {
		t.Fatal("a second sql.DB on a path in use connected")
	}
	if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "lock") && !strings.Contains(msg, "in use") {
		t.Errorf("error does not say the path is in use: %v", err)
	}
	sqlExec(t, db1, "INSERT INTO t VALUES (1)")
}

// TestDriverOpenClosesWithItsConn: Driver.Open's one-connection database is closed with its
// connection, so the path can be opened again.
func TestDriverOpenClosesWithItsConn(t *testing.T) {
	dir := t.TempDir()
	d := &streamsql.Driver{}
	for i := 0; i < 2; i++ {
		c, err := d.Open(dir)
		if err != nil {
			t.Fatalf("Driver.Open, time %d: %v", i+1, err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatalf("Open after Driver.Open and Close: %v", err)
	}
	db.Close()
}

func TestDriverDSNOptions(t *testing.T) {
	dir := t.TempDir()
	// sync=off (and its spellings) works.
	for i, opt := range []string{"sync=off", "sync=false", "sync=0", "sync=on", "sync=OFF", "checkpoint_interval=1s"} {
		p := filepath.Join(dir, fmt.Sprint(i))
		db := sqlOpenT(t, p+"?"+opt)
		sqlExec(t, db, "CREATE TABLE t (a BIGINT)")
		sqlExec(t, db, "INSERT INTO t VALUES (1), (2)")
		if got := sqlStrings(t, db, "SELECT COUNT(*) FROM t"); !reflect.DeepEqual(got, []string{"2"}) {
			t.Errorf("%s: count %v", opt, got)
		}
		db.Close()
	}
	// In memory with an option.
	db := sqlOpenT(t, ":memory:?sync=off")
	sqlExec(t, db, "CREATE TABLE t (a BIGINT)")

	bad := map[string]string{
		"bogus=1":                 "bogus",
		"sync=maybe":              "sync",
		"checkpoint_interval=abc": "checkpoint_interval",
	}
	for opt, mention := range bad {
		db, err := sql.Open("streamsql", filepath.Join(dir, "bad")+"?"+opt)
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			t.Errorf("DSN option %q accepted", opt)
			continue
		}
		if !strings.Contains(err.Error(), mention) {
			t.Errorf("DSN option %q: error %q does not name %q", opt, err, mention)
		}
	}
}

func TestDriverConcurrentUse(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, "CREATE TABLE t (w BIGINT, i BIGINT)")
	sqlExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT w, COUNT(*) AS n FROM t GROUP BY w")
	db.SetMaxOpenConns(4)
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func(w int) {
			for i := 0; i < 50; i++ {
				if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", w, i); err != nil {
					errs <- err
					return
				}
				var n int64
				if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE w = ?", w).Scan(&n); err != nil {
					errs <- err
					return
				}
				if n != int64(i+1) {
					errs <- fmt.Errorf("writer %d: count %d after %d inserts (connections must share one database)", w, n, i+1)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	sqlExec(t, db, "FLUSH")
	if got, want := sqlStrings(t, db, "SELECT w, n FROM c ORDER BY w"), []string{"0|50", "1|50", "2|50", "3|50"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("view = %v, want %v", got, want)
	}
}

// TestDriverDecimalTextPlaceholder: DECIMAL scans as text, so text is how a Go program sends
// one back exactly — in a comparison or arithmetic as in an INSERT.
func TestDriverDecimalTextPlaceholder(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, "CREATE TABLE m (id INT, amount DECIMAL(10,2))")
	sqlExec(t, db, "INSERT INTO m VALUES (?, ?)", 1, "12.34")
	var amount string
	if err := db.QueryRow("SELECT amount FROM m WHERE amount = ?", amount+"12.34").Scan(&amount); err != nil || amount != "12.34" {
		t.Fatalf("WHERE amount = '12.34': %q, %v", amount, err)
	}
	sqlExec(t, db, "UPDATE m SET amount = amount + ? WHERE id = ?", "0.01", "1")
	if err := db.QueryRow("SELECT amount FROM m").Scan(&amount); err != nil || amount != "12.35" {
		t.Fatalf("after amount + '0.01': %q, %v", amount, err)
	}
}

// TestDriverSubscribeNeedsQuery: Exec refuses SUBSCRIBE through database/sql as the Go API
// does, a SUBSCRIBE before another statement is refused (its rows would be lost), and a nil
// []byte placeholder is NULL.
func TestDriverSubscribeNeedsQuery(t *testing.T) {
	db := sqlOpenT(t, "")
	sqlExec(t, db, "CREATE TABLE t (k BIGINT, s VARCHAR); CREATE MATERIALIZED VIEW v AS SELECT k FROM t")
	if _, err := db.Exec("SUBSCRIBE v"); err == nil || !strings.Contains(err.Error(), "use Query") {
		t.Errorf("Exec(SUBSCRIBE v): %v, want an error saying to use Query", err)
	}
	if _, err := db.Query("SUBSCRIBE v; SELECT 1"); err == nil || !strings.Contains(err.Error(), "SUBSCRIBE must be the last statement") {
		t.Errorf("Query(SUBSCRIBE v; SELECT 1): %v, want a refusal", err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (9, 'z'); SUBSCRIBE v"); err == nil {
		t.Error("Exec(INSERT ...; SUBSCRIBE v) was accepted")
	}
	if got := fmt.Sprint(sqlStrings(t, db, "SELECT COUNT(*) FROM t")); got != "[0]" {
		t.Errorf("after a refused Exec(INSERT ...; SUBSCRIBE v), t holds %s rows, want [0]: nothing runs", got)
	}
	sqlExec(t, db, "INSERT INTO t VALUES (1, ?), (2, ?)", []byte(nil), []byte("x"))
	if got := fmt.Sprint(sqlStrings(t, db, "SELECT k FROM t WHERE s IS NULL")); got != "[1]" {
		t.Errorf("rows with s NULL: %s, want [1] (a nil []byte is NULL)", got)
	}
}
