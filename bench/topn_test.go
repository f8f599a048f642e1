package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

const (
	topNTable = "CREATE TABLE p (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)"
	topNView  = "CREATE MATERIALIZED VIEW top AS SELECT id, v FROM p ORDER BY v DESC, id LIMIT 10"
	// topNChanges is the number of timed statements, each of topNBatch upserts.
	topNChanges = 200
	topNBatch   = 100
)

// BenchmarkTopNView measures a Top-N view over a growing upsert table: `ORDER BY v DESC, id
// LIMIT 10` over rows already in the view (rows=...), then topNChanges statements of
// topNBatch upserts each (a third of them new ids, the rest updating rows already there,
// which retracts their old values), each followed by FLUSH, so the time is what a change
// costs the view until it is current. The figure that matters is how ms/change grows with
// the rows the view ranks: a Top-N keeps its rows ordered, so a change costs the logarithm of
// them plus the top N, not a sort of them all. The hand-written loop keeps the same rows in
// a map and re-ranks by a partial selection after each statement.
func BenchmarkTopNView(b *testing.B) {
	for _, rows := range []int{10_000, 100_000, 1_000_000} {
		rows := scaled(rows)
		b.Run(fmt.Sprintf("rows=%s", human(rows)), func(b *testing.B) {
			g := splitmix(9)
			ids, vs := make([]int64, rows), make([]int64, rows)
			for i := range ids {
				ids[i], vs[i] = int64(i), g.intn(1<<30)
			}
			recs := []*changeBatch{}
			for i := 0; i < topNChanges; i++ {
				c := &changeBatch{}
				for j := 0; j < topNBatch; j++ {
					id := g.intn(rows * 3 / 2) // a third of them new ids
					c.ids, c.vs = append(c.ids, id), append(c.vs, g.intn(1<<30))
				}
				recs = append(recs, c)
			}
			var el, loopEl time.Duration
			var got, want string
			for i := -1; i < b.N; i++ {
				db := openDB(b)
				mustExec(b, db, topNTable)
				mustExec(b, db, topNView)
				for off := 0; off < rows; off += batchRows {
					end := min(off+batchRows, rows)
					r := record([]string{"id", "v"}, int64Array(ids[off:end]), int64Array(vs[off:end]))
					appendAll(b, db, "p", []arrow.RecordBatch{r})
					r.Release()
				}
				mustExec(b, db, "FLUSH")
				t0 := time.Now()
				for _, c := range recs {
					r := record([]string{"id", "v"}, int64Array(c.ids), int64Array(c.vs))
					appendAll(b, db, "p", []arrow.RecordBatch{r})
					r.Release()
					mustExec(b, db, "FLUSH")
				}
				if i >= 0 {
					el += time.Since(t0)
				}
				got = fmt.Sprint(slices.Concat(queryRows(b, db, "SELECT id, v FROM top ORDER BY v DESC, id")...))
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}

				t0 = time.Now()
				l := newTopNLoop(ids, vs)
				for _, c := range recs {
					l.apply(c)
				}
				if i >= 0 {
					loopEl += time.Since(t0)
				}
				want = fmt.Sprint(l.top)
			}
			if got != want {
				b.Fatalf("view top: %s, the loop's: %s", got, want)
			}
			changes := float64(topNChanges * b.N)
			b.ReportMetric(el.Seconds()*1e3/changes, "ms/change")
			b.ReportMetric(loopEl.Seconds()*1e3/changes, "loop_ms/change")
		})
	}
}

// changeBatch is one timed statement's upserts.
type changeBatch struct{ ids, vs []int64 }

// topNLoop is the hand-written Top-N: the rows by id, and after each statement the top 10 by
// (v DESC, id), found by a pass over the rows (what the view's result must equal).
type topNLoop struct {
	rows map[int64]int64
	top  []int64 // id, v pairs, flattened as queryInts returns them
}

func newTopNLoop(ids, vs []int64) *topNLoop {
	l := &topNLoop{rows: make(map[int64]int64, len(ids))}
	for i, id := range ids {
		l.rows[id] = vs[i]
	}
	return l
}

func (l *topNLoop) apply(c *changeBatch) {
	for i, id := range c.ids {
		l.rows[id] = c.vs[i]
	}
	type row struct{ id, v int64 }
	var best []row // the top 10 so far, in order
	for id, v := range l.rows {
		if len(best) == 10 && (v < best[9].v || v == best[9].v && id > best[9].id) {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, row{id, v}, func(a, b row) int {
			if a.v != b.v {
				return int(b.v - a.v)
			}
			return int(a.id - b.id)
		})
		best = slices.Insert(best, at, row{id, v})
		if len(best) > 10 {
			best = best[:10]
		}
	}
	l.top = l.top[:0]
	for _, r := range best {
		l.top = append(l.top, r.id, r.v)
	}
}
