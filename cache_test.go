package streamsql_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// TestTableLargerThanCache keeps a table far larger than its cache: scans, deletes, upserts
// and a view's backfill must read evicted segments back from disk, before and after reopen.
func TestTableLargerThanCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	open := func() *streamsql.DB {
		db, err := streamsql.Open(dir, streamsql.WithCacheSize(16<<10))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	mustExec(t, db, "CREATE TABLE a (k BIGINT, v BIGINT)")
	mustExec(t, db, "CREATE TABLE p (k BIGINT PRIMARY KEY, v BIGINT)")
	var sum int64
	for s := 0; s < 60; s++ {
		var rows []string
		for i := 0; i < 200; i++ {
			k := int64(s*200 + i)
			rows = append(rows, fmt.Sprintf("(%d, %d)", k, k%97))
			sum += k % 97
		}
		mustExec(t, db, "INSERT INTO a VALUES "+strings.Join(rows, ", "))
		mustExec(t, db, "INSERT INTO p VALUES "+strings.Join(rows, ", "))
	}
	mustExec(t, db, "DELETE FROM a WHERE k < 100")
	mustExec(t, db, "INSERT INTO p VALUES (5, 1000)") // an upsert of an evicted row
	mustExec(t, db, "CREATE MATERIALIZED VIEW s AS SELECT COUNT(*) AS n, SUM(v) AS total FROM a")
	check := func(db *streamsql.DB, when string) {
		var deleted int64
		for k := int64(0); k < 100; k++ {
			deleted += k % 97
		}
		if got := countRows(t, db, "SELECT COUNT(*) FROM a"); got != 12000-100 {
			t.Errorf("%s: COUNT(*) FROM a = %d", when, got)
		}
		if got := countRows(t, db, "SELECT SUM(v) FROM a"); got != sum-deleted {
			t.Errorf("%s: SUM(v) FROM a = %d, want %d", when, got, sum-deleted)
		}
		if got := countRows(t, db, "SELECT total FROM s"); got != sum-deleted {
			t.Errorf("%s: the view's total = %d, want %d", when, got, sum-deleted)
		}
		if got := countRows(t, db, "SELECT COUNT(*) FROM p"); got != 12000 {
			t.Errorf("%s: COUNT(*) FROM p = %d", when, got)
		}
		if got := countRows(t, db, "SELECT v FROM p WHERE k = 5"); got != 1000 {
			t.Errorf("%s: the upserted row has v = %d", when, got)
		}
	}
	check(db, "live")
	db.Close()
	db = open()
	defer db.Close()
	check(db, "after reopen")
}
