package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkOrderBy sorts the scan benchmark's table t(k, v) (2M rows; v has 1000 values, so
// the second key breaks many ties): every row (`ORDER BY v, k`, all of them returned through
// QueryArrow), the first ten (`ORDER BY v DESC, k LIMIT 10`, a Top-N), and every row
// numbered within its k (`ROW_NUMBER() OVER (PARTITION BY k ORDER BY v)`). rows/s counts
// the table's rows.
func BenchmarkOrderBy(b *testing.B) {
	rows := scaled(2_000_000)
	_, db := openScanTable(b, rows)
	defer db.Close()
	for _, q := range []struct{ name, sql string }{
		{"full", "SELECT k, v FROM t ORDER BY v, k"},
		{"top10", "SELECT k, v FROM t ORDER BY v DESC, k LIMIT 10"},
		{"row_number", "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t"},
	} {
		b.Run(q.name, func(b *testing.B) {
			var el time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				rdr, err := db.QueryArrow(context.Background(), q.sql)
				if err != nil {
					b.Fatal(err)
				}
				n, prev := 0, int64(-1)
				for rdr.Next() {
					rec := rdr.RecordBatch()
					for _, v := range rec.Column(1).(interface{ Int64Values() []int64 }).Int64Values() {
						if q.name == "full" && v < prev {
							b.Fatalf("v %d after %d: not in order", v, prev)
						}
						prev = v
					}
					n += int(rec.NumRows())
				}
				rdr.Release()
				el += time.Since(t0)
				if want := map[string]int{"full": rows, "top10": 10, "row_number": rows}[q.name]; n != want {
					b.Fatalf("%d rows, want %d", n, want)
				}
			}
			b.ReportMetric(rate(rows*b.N, el), "rows/s")
		})
	}
}
