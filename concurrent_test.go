package streamsql_test

import (
	"sync"
	"testing"

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
