package streamsql_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// logicalViewSetup makes a table, a logical view over it, a logical view over that one and a
// materialized window over the first: rows before and after the views, and a late row that
// the view passes on.
const logicalViewSetup = `CREATE TABLE t (k VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
	INSERT INTO t VALUES ('a', 1, TIMESTAMP '2024-01-01 00:00:01'), ('b', -1, TIMESTAMP '2024-01-01 00:00:02');
	CREATE VIEW pos AS SELECT k, v * 10 AS v10, ts FROM t WHERE v > 0;
	CREATE VIEW names AS SELECT DISTINCT k FROM pos;
	CREATE MATERIALIZED VIEW w AS SELECT window_start, COUNT(*) AS n, SUM(v10) AS s
		FROM TABLE(TUMBLE(TABLE pos, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;
	INSERT INTO t VALUES ('c', 2, TIMESTAMP '2024-01-01 00:00:15');
	INSERT INTO t VALUES ('d', 3, TIMESTAMP '2024-01-01 00:00:03')`

// logicalViewQueries read the views, the catalog's listings and the late rows.
var logicalViewQueries = []string{
	"SELECT k, v10, ts FROM pos ORDER BY k",
	"SELECT k FROM names ORDER BY k",
	"SELECT window_start, n, s FROM w ORDER BY window_start",
	"SHOW VIEWS",
	"SHOW TABLES",
	"DESCRIBE pos",
	"SELECT view_name, table_name, row_json FROM system.late_rows",
}

func logicalViewState(t *testing.T, db *streamsql.DB) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, q := range logicalViewQueries {
		m[q] = queryStrings(t, db, q)
	}
	return m
}

// TestLogicalViewSurvivesReopen: a logical view is a catalog object — after Close and Open it
// is still there, with its columns, in SHOW VIEWS, readable, read by the materialized view
// over it (which keeps following inserts through it), and kept from being dropped by its
// readers; DROP VIEW is as durable.
func TestLogicalViewSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir)
	mustExec(t, db, logicalViewSetup)
	before := logicalViewState(t, db)
	if got, want := before["SHOW VIEWS"], []string{"names", "pos", "w"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SHOW VIEWS = %v, want %v", got, want)
	}
	if got, want := before["SELECT window_start, n, s FROM w ORDER BY window_start"],
		[]string{"2024-01-01 00:00:00.000|1|10", "2024-01-01 00:00:10.000|1|20"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("w = %v, want %v (the 00:00:03 row is late)", got, want)
	}
	if got := before["SELECT view_name, table_name, row_json FROM system.late_rows"]; len(got) != 1 || !strings.HasPrefix(got[0], "w|t|") {
		t.Fatalf("late rows = %v, want the 00:00:03 row under w", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openT(t, dir)
	for q, want := range before {
		if got := queryStrings(t, db, q); !reflect.DeepEqual(got, want) {
			t.Errorf("after reopen: %s\n got  %v\n want %v", q, got, want)
		}
	}
	mustExec(t, db, "INSERT INTO t VALUES ('e', 4, TIMESTAMP '2024-01-01 00:00:16')")
	if got, want := queryStrings(t, db, "SELECT window_start, n, s FROM w ORDER BY window_start"),
		[]string{"2024-01-01 00:00:00.000|1|10", "2024-01-01 00:00:10.000|2|60"}; !reflect.DeepEqual(got, want) {
		t.Errorf("w after reopen and an insert = %v, want %v", got, want)
	}
	if got, want := queryStrings(t, db, "SELECT k FROM names ORDER BY k"), []string{"a", "c", "d", "e"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names after reopen and an insert = %v, want %v", got, want)
	}
	for _, q := range []string{"DROP VIEW pos", "DROP TABLE t", "CREATE VIEW pos AS SELECT 1 AS x", "INSERT INTO pos VALUES ('x', 1, NULL)"} {
		if _, err := db.Exec(q); err == nil {
			t.Errorf("%s after reopen: no error", q)
		}
	}
	mustExec(t, db, "DROP VIEW names; DROP MATERIALIZED VIEW w")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openT(t, dir)
	if got, want := queryStrings(t, db, "SHOW VIEWS"), []string{"pos"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SHOW VIEWS after DROP VIEW and a reopen = %v, want %v", got, want)
	}
	mustExec(t, db, "DROP VIEW pos; DROP TABLE t")
}

// TestLogicalViewSurvivesCrash: CREATE VIEW and DROP VIEW are durable when they return — a
// process killed right after them (no Close, no checkpoint) reopens with the view, and the
// materialized view over it, as they were.
func TestLogicalViewSurvivesCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	for _, script := range []string{logicalViewSetup, "DROP VIEW names"} {
		cmd, lines, stderr := startChild(t, envCrashDir+"="+dir, envCrashMode+"=script", envCrashSQL+"="+script)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v\n%s", err, stderr)
		}
	}
	db := openT(t, dir)
	if got, want := queryStrings(t, db, "SHOW VIEWS"), []string{"pos", "w"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SHOW VIEWS after a crash = %v, want %v", got, want)
	}
	if got, want := queryStrings(t, db, "SELECT k, v10 FROM pos ORDER BY k"), []string{"a|10", "c|20", "d|30"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pos after a crash = %v, want %v", got, want)
	}
	if got, want := queryStrings(t, db, "SELECT window_start, n, s FROM w ORDER BY window_start"),
		[]string{"2024-01-01 00:00:00.000|1|10", "2024-01-01 00:00:10.000|1|20"}; !reflect.DeepEqual(got, want) {
		t.Errorf("w after a crash = %v, want %v", got, want)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM system.late_rows WHERE view_name = 'w' AND table_name = 't'"); n != 1 {
		t.Errorf("w has %d late rows after a crash, want 1", n)
	}
}
