// QA (blind, from SPEC.md §4): "Close then Open of the same path in one process works" and
// "Open on an existing path resumes every view and source from the last checkpoint" — a run with
// Close/Open (and CHECKPOINTs) between statements must leave views, late rows and watermarks
// equal to the same statements run without restarts: a view over a view over an interval join
// with late rows of both sides; a temporal LEFT JOIN with a Top-N and a CUMULATE over it, with
// upserts and a DELETE of a version; views dropped and recreated, and a table dropped and recreated.
package streamsql_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

func qaBlindDump(t *testing.T, db *streamsql.DB, queries []string) string {
	var out []string
	if _, err := db.Exec("FLUSH"); err != nil {
		out = append(out, "FLUSH ERR "+err.Error())
	}
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			out = append(out, q+" ERR "+err.Error())
			continue
		}
		var rs []string
		for rows.Next() {
			rs = append(rs, fmt.Sprint(rows.Values()...))
		}
		sort.Strings(rs)
		out = append(out, q+"\n  "+strings.Join(rs, "\n  "))
	}
	return strings.Join(out, "\n")
}

// run executes stmts; a "RESTART" statement closes and reopens (when dir != "").
func qaBlindRun(t *testing.T, dir string, stmts []string, queries []string) string {
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if s == "RESTART" {
			if dir == "" {
				continue
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = streamsql.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if s == "CHECKPOINT" && dir == "" {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	r := qaBlindDump(t, db, queries)
	db.Close()
	return r
}

func qaBlindRestartEqualsClean(t *testing.T, stmts, queries []string) {
	clean := qaBlindRun(t, "", stmts, queries)
	re := qaBlindRun(t, t.TempDir()+"/db", stmts, queries)
	if strings.Contains(clean, " ERR ") {
		t.Fatalf("a query failed:\n%s", clean)
	}
	if clean != re {
		t.Errorf("restart differs\n--- clean\n%s\n--- restart\n%s", clean, re)
	}
}

func TestQABlindRestartViewOverViewOverIntervalJoin(t *testing.T) {
	stmts := []string{
		`CREATE TABLE a (k BIGINT, x BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE TABLE b (k BIGINT, y BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`INSERT INTO a VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01'), (2, 20, TIMESTAMP '2024-01-01 00:00:03')`,
		`CREATE MATERIALIZED VIEW ij AS SELECT a.k, a.x, b.y, a.ts FROM a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '2' SECOND AND a.ts + INTERVAL '2' SECOND`,
		`CREATE MATERIALIZED VIEW w1 AS SELECT window_start, window_end, k, SUM(x + y) AS s, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ij, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k`,
		`CREATE MATERIALIZED VIEW w2 AS SELECT k, SUM(s) AS tot, MAX(n) AS mx FROM w1 GROUP BY k`,
		`CREATE MATERIALIZED VIEW w3 AS SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ij, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end EMIT ON WINDOW CLOSE`,
		`INSERT INTO b VALUES (1, 100, TIMESTAMP '2024-01-01 00:00:02'), (2, 200, TIMESTAMP '2024-01-01 00:00:04')`,
		"CHECKPOINT",
		`INSERT INTO a VALUES (1, 11, TIMESTAMP '2024-01-01 00:00:08'), (3, 30, TIMESTAMP '2024-01-01 00:00:09')`,
		"RESTART",
		`INSERT INTO b VALUES (1, 101, TIMESTAMP '2024-01-01 00:00:08'), (3, 300, TIMESTAMP '2024-01-01 00:00:10')`,
		`INSERT INTO a VALUES (2, 21, TIMESTAMP '2024-01-01 00:00:02')`,
		`INSERT INTO b VALUES (2, 201, TIMESTAMP '2024-01-01 00:00:01')`,
		"RESTART",
		`INSERT INTO a VALUES (1, 12, TIMESTAMP '2024-01-01 00:00:20'), (3, 31, TIMESTAMP '2024-01-01 00:00:11')`,
		`INSERT INTO b VALUES (1, 102, TIMESTAMP '2024-01-01 00:00:21'), (3, 301, TIMESTAMP '2024-01-01 00:00:12')`,
		"RESTART",
	}
	queries := []string{"SELECT * FROM ij", "SELECT * FROM w1", "SELECT * FROM w2", "SELECT * FROM w3",
		"SELECT * FROM system.late_rows", "SELECT name, row_count, late_rows FROM system.views", "SELECT * FROM system.watermarks"}
	qaBlindRestartEqualsClean(t, stmts, queries)
}

func TestQABlindRestartTemporalTopNCumulate(t *testing.T) {
	stmts := []string{
		`CREATE TABLE r (c VARCHAR, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (c) NOT ENFORCED, WATERMARK FOR ts AS ts)`,
		`CREATE TABLE o (id BIGINT, c VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`CREATE MATERIALIZED VIEW j AS SELECT o.id, o.ts, r.rate FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.ts AS r ON o.c = r.c`,
		`CREATE MATERIALIZED VIEW top AS SELECT id, rate FROM j ORDER BY rate DESC, id LIMIT 2`,
		`CREATE MATERIALIZED VIEW cum AS SELECT window_start, window_end, COUNT(*) AS n, SUM(rate) AS s FROM TABLE(CUMULATE(TABLE j, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND)) GROUP BY window_start, window_end`,
		`INSERT INTO r VALUES ('a', 1, TIMESTAMP '2024-01-01 00:00:00'), ('b', 2, TIMESTAMP '2024-01-01 00:00:00')`,
		`INSERT INTO o VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:01'), (2, 'b', TIMESTAMP '2024-01-01 00:00:02'), (3, 'c', TIMESTAMP '2024-01-01 00:00:03')`,
		"RESTART",
		`INSERT INTO r VALUES ('a', 5, TIMESTAMP '2024-01-01 00:00:01.500'), ('c', 9, TIMESTAMP '2024-01-01 00:00:02')`,
		`INSERT INTO r VALUES ('b', 7, TIMESTAMP '2024-01-01 00:00:04')`,
		"RESTART",
		`INSERT INTO o VALUES (4, 'a', TIMESTAMP '2024-01-01 00:00:03.500'), (5, 'c', TIMESTAMP '2024-01-01 00:00:01')`,
		`DELETE FROM r WHERE c = 'a'`,
		`INSERT INTO r VALUES ('z', 0, TIMESTAMP '2024-01-01 00:00:10')`,
		`INSERT INTO o VALUES (6, 'a', TIMESTAMP '2024-01-01 00:00:09'), (7, 'b', TIMESTAMP '2024-01-01 00:00:09')`,
		"RESTART",
		`INSERT INTO r VALUES ('z', 0, TIMESTAMP '2024-01-01 00:00:20')`,
		`INSERT INTO o VALUES (8, 'b', TIMESTAMP '2024-01-01 00:00:15')`,
	}
	queries := []string{"SELECT * FROM j", "SELECT * FROM top", "SELECT * FROM cum", "SELECT * FROM system.late_rows"}
	qaBlindRestartEqualsClean(t, stmts, queries)
}

func TestQABlindRestartDropRecreate(t *testing.T) {
	stmts := []string{
		`CREATE TABLE t (k VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`,
		`INSERT INTO t VALUES ('a', 1, TIMESTAMP '2024-01-01 00:00:01'), ('a', 2, TIMESTAMP '2024-01-01 00:00:12'), ('a', 9, TIMESTAMP '2024-01-01 00:00:02')`,
		"CHECKPOINT",
		`DROP MATERIALIZED VIEW w`,
		`INSERT INTO t VALUES ('b', 3, TIMESTAMP '2024-01-01 00:00:03')`,
		"RESTART",
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, k, COUNT(*) AS s FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`,
		"RESTART",
		`INSERT INTO t VALUES ('b', 4, TIMESTAMP '2024-01-01 00:00:04')`,
		`DROP MATERIALIZED VIEW w`,
		`DROP TABLE t`,
		`CREATE TABLE t (k VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`INSERT INTO t VALUES ('c', 5, TIMESTAMP '2024-01-01 00:00:05')`,
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`,
		"RESTART",
		`INSERT INTO t VALUES ('c', 6, TIMESTAMP '2024-01-01 00:00:01')`,
	}
	queries := []string{"SELECT * FROM w", "SELECT * FROM system.late_rows", "SELECT * FROM system.watermarks", "SELECT name, row_count, late_rows FROM system.views", "SELECT * FROM t"}
	qaBlindRestartEqualsClean(t, stmts, queries)
}
