package streamsql_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/engine"
)

// What a dropped view, a closed subscription and a slow subscriber give back.

// heapBytes is the live heap after garbage collection.
func heapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// fillIDs inserts ids 0 to 10^digits - 1 into table (one BIGINT column) in one statement.
func fillIDs(t *testing.T, db *streamsql.DB, table string, digits int) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE IF NOT EXISTS digits (d BIGINT)")
	if n := queryRows(t, db, "SELECT COUNT(*) FROM digits")[0][0].(int64); n == 0 {
		mustExec(t, db, "INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
	}
	terms, from := []string{"d0.d"}, []string{"digits d0"}
	for i := 1; i < digits; i++ {
		terms = append(terms, fmt.Sprintf("d%d.d * 1%0*d", i, i, 0))
		from = append(from, fmt.Sprintf("digits d%d", i))
	}
	mustExec(t, db, "INSERT INTO "+table+" SELECT "+strings.Join(terms, " + ")+" FROM "+strings.Join(from, ", "))
	mustExec(t, db, "FLUSH")
}

// subscribedView opens a database with table t, view v over it, and a subscription to v.
func subscribedView(t *testing.T) (*streamsql.DB, *streamsql.Rows) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT id FROM t")
	rows, err := db.Subscribe(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rows.Close() })
	return db, rows
}

// On disk, so that what the views wrote to storage is not in the heap either.
func TestDropViewFreesState(t *testing.T) {
	db := openT(t, t.TempDir())
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	for range 3 {
		fillIDs(t, db, "t", 5)
	}
	before := heapBytes()
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT id, COUNT(*) AS n, MAX(id) AS m FROM t GROUP BY id")
	mustExec(t, db, "CREATE MATERIALIZED VIEW j AS SELECT x.id FROM t x JOIN t y ON x.id = y.id")
	mustExec(t, db, "FLUSH")
	with := heapBytes()
	mustExec(t, db, "DROP MATERIALIZED VIEW v")
	mustExec(t, db, "DROP MATERIALIZED VIEW j")
	after := heapBytes()
	t.Logf("heap: %d MB before the views, %d MB with them, %d MB after DROP", before>>20, with>>20, after>>20)
	if after-before > (with-before)/4 {
		t.Errorf("DROP kept %d of the views' %d MB", (after-before)>>20, (with-before)>>20)
	}
}

func TestClosedSubscriptionFreesItsChanges(t *testing.T) {
	db, rows := subscribedView(t)
	before := heapBytes()
	fillIDs(t, db, "t", 5)
	fillIDs(t, db, "t", 5)
	queued := heapBytes()
	rows.Close()
	after := heapBytes()
	t.Logf("heap: %d MB before, %d MB with 200k changes queued, %d MB after Close", before>>20, queued>>20, after>>20)
	// The view holds its rows either way; the queued changes are what Close gives back, even
	// to a caller that keeps the closed Rows (as subscribedView's cleanup does).
	if after > before+(queued-before)*3/4 {
		t.Errorf("closing the subscription freed %d of %d MB", (queued-after)>>20, (queued-before)>>20)
	}
}

// A subscriber that does not read is dropped once it is SubscriberChanges changes or
// SubscriberBuffer batches behind; it still reads what was queued before, then the error.
func TestSlowSubscriberDropped(t *testing.T) {
	for _, c := range []struct {
		name   string
		write  func(t *testing.T, db *streamsql.DB)
		queued int
	}{
		{"changes", func(t *testing.T, db *streamsql.DB) {
			for range 3 { // the third 100k batch passes the bound
				fillIDs(t, db, "t", 5)
			}
		}, 200_000},
		{"batches", func(t *testing.T, db *streamsql.DB) {
			for i := range engine.SubscriberBuffer + 10 {
				mustExec(t, db, "INSERT INTO t VALUES (?)", i)
				mustExec(t, db, "FLUSH")
			}
		}, engine.SubscriberBuffer},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, rows := subscribedView(t)
			c.write(t, db)
			n := 0
			for rows.Next() {
				n++
			}
			if n != c.queued {
				t.Errorf("read %d changes before the error, want %d", n, c.queued)
			}
			if err := rows.Err(); err == nil || !strings.Contains(err.Error(), "behind and was dropped") {
				t.Errorf("Err = %v, want the subscriber dropped", err)
			}
			// The database goes on.
			mustExec(t, db, "INSERT INTO t VALUES (-1)")
			mustExec(t, db, "FLUSH")
		})
	}
}

// Long work ends with its context: a view's backfill (the view is then not created) and a
// correlated subquery, run once per outer row, of a query, a DELETE or an UPDATE (which then
// change nothing).
func TestLongWorkEndsWithItsContext(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	fillIDs(t, db, "t", 4)
	for _, c := range []struct{ name, stmt string }{
		{"view backfill", "CREATE MATERIALIZED VIEW big AS SELECT a.id FROM t a, t b WHERE a.id + b.id < 0"},
		{"correlated IN", "SELECT COUNT(*) FROM t a WHERE a.id IN (SELECT b.id + a.id + 1 FROM t b)"},
		{"DELETE's subquery", "DELETE FROM t WHERE id IN (SELECT b.id + t.id + 1 FROM t b)"},
		{"UPDATE's subquery", "UPDATE t SET id = -id WHERE id IN (SELECT b.id + t.id + 1 FROM t b)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := db.ExecContext(ctx, c.stmt)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want the context's deadline", c.name, err)
		}
	}
	if got := queryRows(t, db, "SELECT COUNT(*), MIN(id) FROM t"); got[0][0].(int64) != 10_000 || got[0][1].(int64) != 0 {
		t.Errorf("t after the cancelled DELETE and UPDATE: COUNT(*), MIN(id) = %v, want 10000, 0", got[0])
	}
	if got := queryRows(t, db, "SELECT COUNT(*) FROM system.views"); got[0][0].(int64) != 0 {
		t.Errorf("a view whose backfill was cancelled exists: %v", queryRows(t, db, "SELECT name FROM system.views"))
	}
	mustExec(t, db, "CREATE MATERIALIZED VIEW big AS SELECT a.id FROM t a, t b WHERE a.id = b.id AND a.id < 3")
	mustExec(t, db, "INSERT INTO t VALUES (1)")
	mustExec(t, db, "FLUSH")
	if got := queryRows(t, db, "SELECT COUNT(*) FROM big"); got[0][0].(int64) != 6 { // ids 0 and 2 once, 1 twice: 1 + 4 + 1 pairs
		t.Errorf("view after the cancelled ones: %v rows, want 6", got[0][0])
	}
}

// A snapshot larger than SubscriberChanges does not count against the bound: a subscriber
// that has not yet read it still gets the changes after it.
func TestLargeSnapshotIsNotBehind(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT id FROM t")
	for range 3 {
		fillIDs(t, db, "t", 5)
	}
	rows, err := db.Subscribe(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	mustExec(t, db, "INSERT INTO t VALUES (-1)")
	mustExec(t, db, "FLUSH")
	got := nextChanges(t, rows, 300_001)
	if last := got[len(got)-1]; last != (change{"+I", "-1"}) {
		t.Errorf("the change after the snapshot = %v, want +I -1", last)
	}
}
