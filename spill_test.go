package streamsql_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// TestSpillBeyondMemoryLimit: with a memory limit far below their state, views move their
// groups, join state and rows to disk and stay equal to the batch answer, through retractions, a
// checkpoint, more changes, and a restart that restores the spilled state and replays the
// changes after the checkpoint.
func TestSpillBeyondMemoryLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	opts := []streamsql.Option{streamsql.WithMemoryLimit(4 << 20), streamsql.WithCheckpointInterval(-1)}
	db := openT(t, path, opts...)
	mustExec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, s VARCHAR)")
	mustExec(t, db, "CREATE TABLE d (k BIGINT PRIMARY KEY, label VARCHAR)")
	for k := 0; k < 60_000; k += 7_000 {
		var rows []string
		for i := k; i < k+7_000 && i < 60_000; i += 7 {
			rows = append(rows, fmt.Sprintf("(%d, 'l%d')", i, i%11))
		}
		mustExec(t, db, "INSERT INTO d VALUES "+strings.Join(rows, ", "))
	}
	views := map[string]string{
		"agg": "SELECT k, COUNT(*) AS n, SUM(v) AS total, MIN(v) AS lo, MAX(s) AS hi, BOOL_OR(v > 500) AS b, " +
			"STRING_AGG(s || '@' || CAST(id AS VARCHAR), ',') AS ss, LAST_VALUE(id) AS lv FROM t GROUP BY k", // (values distinct in a group: in arrival order under retractions too)
		"dist": "SELECT k % 97 AS b, COUNT(DISTINCT k) AS d, AVG(v) AS a FROM t GROUP BY k % 97",
		"proj": "SELECT id, k, v FROM t WHERE v % 3 = 0",
		"jn":   "SELECT t.id, t.v, d.label FROM t JOIN d ON t.k = d.k WHERE t.id % 10 = 0",
		"lj":   "SELECT d.k, d.label, x.id FROM d LEFT JOIN (SELECT id, k FROM t WHERE v < 500 AND id % 10 = 1) x ON x.k = d.k",
	}
	for name, q := range views {
		mustExec(t, db, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
	}
	scale := 1
	if testing.Short() { // the race detector's run (make testrace)
		scale = 10
	}
	next := 0
	insert := func(rows int) {
		rows /= scale
		for done := 0; done < rows; done += 1000 {
			var sb strings.Builder
			sb.WriteString("INSERT INTO t VALUES ")
			for i := 0; i < 1000; i++ {
				if i > 0 {
					sb.WriteString(", ")
				}
				id := next % 150_000 // past 150k rows, upserts: retractions of the old versions
				fmt.Fprintf(&sb, "(%d, %d, %d, 's%d')", id, (next*7919)%60_000, next%1000, next%13)
				next++
			}
			mustExec(t, db, sb.String())
		}
	}
	check := func(stage string) {
		t.Helper()
		mustExec(t, db, "FLUSH")
		for name, q := range views {
			diffRows(t, stage+": "+name, sortedCopy(queryStrings(t, db, "SELECT * FROM "+name)), sortedCopy(queryStrings(t, db, q)))
		}
	}
	insert(100_000)
	check("inserts")
	if got := queryStrings(t, db, "SELECT name, spilled FROM system.views ORDER BY name"); strings.Join(got, ",") != "agg|true,dist|true,jn|true,lj|true,proj|true" {
		t.Fatalf("views not spilled under a 4 MiB limit: %v", got)
	}
	mustExec(t, db, "CHECKPOINT")
	insert(80_000) // upserts from row 150k on
	mustExec(t, db, "DELETE FROM t WHERE k % 10 = 3")
	mustExec(t, db, "DELETE FROM d WHERE k % 3 = 0")
	mustExec(t, db, "INSERT INTO d VALUES (1, 'new'), (8, 'new')")
	check("upserts and deletes")
	mustExec(t, db, "CHECKPOINT")
	insert(20_000)
	mustExec(t, db, "FLUSH")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, path, opts...)
	check("reopened")
	insert(10_000)
	check("reopened, more changes")
}

// TestSpillCumulateRows: a CUMULATE view without window_end has equal rows for one window
// start (one per step) — not a unique key — so spilled, it keeps their counts.
func TestSpillCumulateRows(t *testing.T) {
	db := openT(t, "", streamsql.WithMemoryLimit(2<<20))
	mustExec(t, db, "CREATE TABLE t (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)")
	mustExec(t, db, `CREATE MATERIALIZED VIEW c AS SELECT k, window_start, COUNT(*) AS n
		FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND))
		GROUP BY k, window_start, window_end`)
	mustExec(t, db, "INSERT INTO t VALUES (0, TIMESTAMP '2024-01-01 00:00:01')")
	mustExec(t, db, "FLUSH")
	if got := queryStrings(t, db, "SELECT spilled FROM system.views"); strings.Join(got, ",") != "true" {
		t.Fatalf("the view did not spill under a 2 MiB limit: %v", got)
	}
	mustExec(t, db, "INSERT INTO t VALUES (1, TIMESTAMP '2024-01-01 00:00:05'), (2, TIMESTAMP '2024-01-01 00:00:06')")
	mustExec(t, db, "FLUSH")
	if got := queryStrings(t, db, "SELECT COUNT(*) FROM c"); strings.Join(got, ",") != "9" {
		t.Fatalf("c has %v rows, want 9 (3 keys x 3 steps)", got)
	}
}
