package streamsql_test

import (
	"context"
	"errors"
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

// tenPow5 fills table t (one BIGINT column) with ids 0..99999 in one statement.
func tenPow5(t *testing.T, db *streamsql.DB, table string) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE IF NOT EXISTS digits (d BIGINT)")
	if n := queryRows(t, db, "SELECT COUNT(*) FROM digits")[0][0].(int64); n == 0 {
		mustExec(t, db, "INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
	}
	mustExec(t, db, "INSERT INTO "+table+` SELECT a.d*10000 + b.d*1000 + c.d*100 + e.d*10 + f.d
		FROM digits a, digits b, digits c, digits e, digits f`)
	mustExec(t, db, "FLUSH")
}

// On disk, so that what the views wrote to storage is not in the heap either.
func TestDropViewFreesState(t *testing.T) {
	db := openT(t, t.TempDir())
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	for range 3 {
		tenPow5(t, db, "t")
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
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT id FROM t")
	rows, err := db.Subscribe(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	before := heapBytes()
	tenPow5(t, db, "t")
	tenPow5(t, db, "t")
	queued := heapBytes()
	rows.Close()
	after := heapBytes()
	t.Logf("heap: %d MB before, %d MB with 200k changes queued, %d MB after Close", before>>20, queued>>20, after>>20)
	// The view holds its rows either way; the queued changes are what Close gives back.
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
				tenPow5(t, db, "t")
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
			db := openT(t, "")
			mustExec(t, db, "CREATE TABLE t (id BIGINT)")
			mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT id FROM t")
			rows, err := db.Subscribe(context.Background(), "v")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
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
// query's correlated subquery, run once per outer row.
func TestLongWorkEndsWithItsContext(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE digits (d BIGINT)")
	mustExec(t, db, "INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
	mustExec(t, db, "CREATE TABLE t (id BIGINT)")
	mustExec(t, db, "INSERT INTO t SELECT a.d*1000 + b.d*100 + c.d*10 + e.d FROM digits a, digits b, digits c, digits e")
	for _, c := range []struct{ name, stmt string }{
		{"view backfill", "CREATE MATERIALIZED VIEW big AS SELECT a.id FROM t a, t b WHERE a.id + b.id < 0"},
		{"correlated IN", "SELECT COUNT(*) FROM t a WHERE a.id IN (SELECT b.id + a.id + 1 FROM t b)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := db.ExecContext(ctx, c.stmt)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want the context's deadline", c.name, err)
		}
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
