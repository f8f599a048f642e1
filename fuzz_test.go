package streamsql_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// FuzzExec runs arbitrary statements against a database with tables and views of every
// kind: any input may fail, but with a user error — never a panic or an internal error —
// and the database must stay usable afterwards.
func FuzzExec(f *testing.F) {
	files, _ := filepath.Glob("testdata/sqllogic/*/*.slt")
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "SELECT") || strings.HasPrefix(line, "INSERT") || strings.HasPrefix(line, "CREATE") {
				f.Add(line)
			}
		}
		fh.Close()
	}
	// Inputs that once failed.
	f.Add("INSERT INTO t VALUES ()")
	f.Add("SELECT CONCAT(CAST(1 AS CHAR), '', 0) FROM t WHERE NULL")
	db, err := streamsql.Open("")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE t (k BIGINT, v BIGINT, s VARCHAR, d DECIMAL(10,2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE TABLE p (k BIGINT PRIMARY KEY, name VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`INSERT INTO t VALUES (1, 2, 'a', 1.50, TIMESTAMP '2024-01-01 00:00:01'), (2, NULL, NULL, NULL, TIMESTAMP '2024-01-01 00:00:02')`,
		`INSERT INTO p VALUES (1, 'x', TIMESTAMP '2024-01-01 00:00:00')`,
		`CREATE MATERIALIZED VIEW tw AS SELECT window_start, k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`,
		`CREATE MATERIALIZED VIEW tj AS SELECT t.k, p.name FROM t JOIN p FOR SYSTEM_TIME AS OF t.ts AS p ON t.k = p.k`,
	} {
		if _, err := db.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		if strings.Contains(strings.ToUpper(q), "BACKUP") {
			return // writes files
		}
		rows, err := db.Query(q)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%q: %v", q, err)
		}
		if err == nil {
			if !strings.HasPrefix(strings.TrimSpace(strings.ToUpper(q)), "SUBSCRIBE") {
				for rows.Next() {
				}
			}
			rows.Close()
		}
		if _, err := db.Exec("SELECT COUNT(*) FROM t"); err != nil {
			t.Fatalf("database unusable after %q: %v", q, err)
		}
	})
}
