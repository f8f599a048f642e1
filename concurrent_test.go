package streamsql_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// Statements parsed concurrently keep their own syntax trees (run under -race: the TiDB
// parser reuses node memory, so a shared parser would hand one statement's nodes to another).
func TestConcurrentParse(t *testing.T) {
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (k BIGINT, v VARCHAR)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t VALUES (1, 'a'), (2, 'b')`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				rows, err := db.Query(`SELECT v FROM t WHERE k = ?`, int64(g%2+1))
				if err != nil {
					t.Error(err)
					return
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != 1 {
					t.Errorf("got %d rows, want 1", n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Writers, readers, checkpoints and the view worker at once (run under -race: the worker
// takes the queue under its own lock while writers hold the engine's): every row reaches
// the view once, in order, and the view equals the batch query at the end.
func TestConcurrentWritesReadsAndCheckpoints(t *testing.T) {
	db, err := streamsql.Open(t.TempDir(), streamsql.WithCheckpointInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, k`,
		`CREATE MATERIALIZED VIEW c AS SELECT k, COUNT(*) AS n FROM ev GROUP BY k`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	const writers, batches, rows = 3, 40, 50
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				var sb strings.Builder
				sb.WriteString("INSERT INTO ev VALUES ")
				for r := range rows {
					if r > 0 {
						sb.WriteString(", ")
					}
					// Times within the watermark's delay of each other: no row is late.
					fmt.Fprintf(&sb, "(%d, %d, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '%d' MILLISECOND)", g*10+r%7, b, b*10+r%5)
				}
				if _, err := db.Exec(sb.String()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for _, q := range []string{"SELECT SUM(n) FROM c", "FLUSH", "CHECKPOINT", "SELECT COUNT(*) FROM w"} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rs, err := db.Query(q)
				if err != nil {
					t.Error(q, err)
					return
				}
				for rs.Next() {
				}
				rs.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if _, err := db.Exec("FLUSH"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT COUNT(*), SUM(n), SUM(s) FROM w`,
		`SELECT COUNT(*), SUM(n), SUM(n * n) FROM c`,
	} {
		view := threeInts(t, db, q)
		bq := strings.NewReplacer("FROM w", `FROM (SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, k) x`,
			"FROM c", "FROM (SELECT k, COUNT(*) AS n FROM ev GROUP BY k) x").Replace(q)
		batch := threeInts(t, db, bq)
		if view != batch || batch[1] != writers*batches*rows {
			t.Errorf("%s: view %v, batch query %v (%d rows written)", q, view, batch, writers*batches*rows)
		}
	}
}

// threeInts runs q, which returns one row of three integers.
func threeInts(t *testing.T, db *streamsql.DB, q string) (v [3]int64) {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if !rs.Next() {
		t.Fatalf("%s: no row (%v)", q, rs.Err())
	}
	if err := rs.Scan(&v[0], &v[1], &v[2]); err != nil {
		t.Fatal(err)
	}
	return v
}
