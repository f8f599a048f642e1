package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql"
)

const (
	ingestTable = "CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3))"
	// baseMillis is 2024-01-01T00:00:00Z, the first event time of every generated stream.
	baseMillis = 1_704_067_200_000
)

var ingestNames = []string{"k", "v", "ts"}

// ingestRecords builds rows of (k, v, ts) in 64k-row batches: 1k keys, ts 1 ms apart.
func ingestRecords(rows int) []arrow.RecordBatch {
	g := splitmix(3)
	var recs []arrow.RecordBatch
	for off := 0; off < rows; off += batchRows {
		n := min(batchRows, rows-off)
		k, v, ts := make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range k {
			k[i], v[i], ts[i] = g.intn(1000), g.intn(1000), baseMillis+int64(off+i)
		}
		recs = append(recs, record(ingestNames, int64Array(k), int64Array(v), tsArray(ts)))
	}
	return recs
}

// BenchmarkAppend appends 10M rows (k BIGINT, v BIGINT, ts TIMESTAMP(3)) in 64k-row Arrow
// batches to a table on disk, with the default durability (sync=true: each Append is one
// synced commit; the target, >= 5M rows/s, is for this one) and with sync off, to show what
// the syncs cost.
func BenchmarkAppend(b *testing.B) {
	rows := scaled(10_000_000)
	recs := ingestRecords(rows)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("rows=%s/sync=%v", human(rows), sync), func(b *testing.B) {
			var el time.Duration
			for i := 0; i < b.N; i++ {
				db := openDB(b, streamsql.WithSync(sync))
				mustExec(b, db, ingestTable)
				t0 := time.Now()
				appendAll(b, db, "t", recs)
				el += time.Since(t0)
				checkCount(b, db, "t", rows)
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rate(rows*b.N, el), "rows/s")
		})
	}
}

// BenchmarkInsertValues runs 200 multi-row INSERT ... VALUES statements of 1000 rows each
// against a table on disk, with the default durability (sync=true: each statement is one
// synced commit; the target, >= 300k rows/s, is for this one) and with sync off. The SQL
// text, with a TIMESTAMP literal per row, is built beforehand.
func BenchmarkInsertValues(b *testing.B) {
	const perStmt = 1000
	stmts := scaled(200*perStmt) / perStmt
	g := splitmix(4)
	texts := make([]string, stmts)
	for s := range texts {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for i := 0; i < perStmt; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			ts := time.UnixMilli(baseMillis + int64(s*perStmt+i)).UTC()
			fmt.Fprintf(&sb, "(%d, %d, TIMESTAMP '%s')", g.intn(1000), g.intn(1000), ts.Format("2006-01-02 15:04:05.000"))
		}
		texts[s] = sb.String()
	}
	for _, sync := range []bool{true, false} {
		benchInsertValues(b, texts, perStmt, sync)
	}
}

func benchInsertValues(b *testing.B, texts []string, perStmt int, sync bool) {
	stmts, rows := len(texts), len(texts)*perStmt
	b.Run(fmt.Sprintf("stmts=%d/rows_per_stmt=%d/sync=%v", stmts, perStmt, sync), func(b *testing.B) {
		var el time.Duration
		for i := 0; i < b.N; i++ {
			db := openDB(b, streamsql.WithSync(sync))
			mustExec(b, db, ingestTable)
			t0 := time.Now()
			for _, q := range texts {
				if _, err := db.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
			el += time.Since(t0)
			checkCount(b, db, "t", rows)
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(rate(rows*b.N, el), "rows/s")
		b.ReportMetric(float64(el.Microseconds())/float64(stmts*b.N), "us/stmt")
	})
}

// checkCount fails unless table holds want rows.
func checkCount(b *testing.B, db *streamsql.DB, table string, want int) {
	b.Helper()
	if n := queryInts(b, db, "SELECT COUNT(*) FROM "+table)[0]; n != int64(want) {
		b.Fatalf("%s holds %d rows, want %d", table, n, want)
	}
}

// queryInts returns the first row of a query whose columns are all integers.
func queryInts(b *testing.B, db *streamsql.DB, q string) []int64 {
	b.Helper()
	rows := queryRows(b, db, q)
	if len(rows) == 0 {
		b.Fatalf("%s: no row", q)
	}
	return rows[0]
}

// queryRows returns the rows of a query whose columns are all integers.
func queryRows(b *testing.B, db *streamsql.DB, q string) [][]int64 {
	b.Helper()
	rows, err := db.Query(q)
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(rows.Columns()))
		dst := make([]any, len(row))
		for i := range row {
			dst[i] = &row[i]
		}
		if err := rows.Scan(dst...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	return out
}
