package oracle

// DuckDB's figures for the queries of ../../bench, to put next to the engine's: the same
// data (the same generators and seeds, loaded with DuckDB's Appender, load not timed), the
// same query, DuckDB restricted to one thread. Only the query is timed. Shrink the sizes with
// -short (x0.05) or -scale while developing.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/streamsql/streamsql"
)

var benchScale = flag.Float64("scale", 0, "multiply every benchmark size by this factor (default 1, or 0.05 with -short)")

const (
	benchBatch = 64 << 10      // the engine benchmarks' Append batch size (the data layout)
	baseMillis = 1704067200000 // 2024-01-01T00:00:00Z, as in ../../bench
)

func benchScaled(n int) int {
	s := *benchScale
	if s == 0 {
		s = 1
		if testing.Short() {
			s = 0.05
		}
	}
	return max(int(float64(n)*s), 1000)
}

// benchHuman renders a count as the engine benchmarks name it: 500k, 10M.
func benchHuman(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// splitmix is ../../bench's generator, so both sides see the same rows.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) intn(n int) int64 { return int64(s.next() % uint64(n)) }

// openBenchDuckDB opens an in-memory DuckDB limited to one thread and returns one connection
// (so that every statement runs on the same session).
func openBenchDuckDB(b *testing.B) (*sql.DB, *sql.Conn) {
	b.Helper()
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	conn, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{"SET threads TO 1"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	return db, conn
}

// appendRows creates table name with ddl and fills it with n rows from row via the Appender.
func appendRows(b *testing.B, conn *sql.Conn, ddl, name string, n int, row func(i int) []driver.Value) {
	b.Helper()
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, ddl); err != nil {
		b.Fatalf("%s: %v", ddl, err)
	}
	err := conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", name)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := app.AppendRow(row(i)...); err != nil {
				app.Close()
				return err
			}
		}
		return app.Close()
	})
	if err != nil {
		b.Fatalf("append to %s: %v", name, err)
	}
}

// timeQuery runs q b.N times, draining its rows, and returns the total time and the row count
// of the last run, and the column sums of that run (every column must scan as an integer).
// One untimed run comes first, so DuckDB is measured warm, at its best: its first query
// after loading runs up to 1.5x slower (with -benchtime 1x that was all a run measured).
func timeQuery(b *testing.B, conn *sql.Conn, q string, ncols int) (time.Duration, int, []int64) {
	b.Helper()
	var el time.Duration
	var rows int
	var totals []int64
	for i := -1; i < b.N; i++ { // i == -1: the untimed warm-up run
		var d time.Duration
		d, rows, totals = runQuery(b, conn, q, ncols)
		if i >= 0 {
			el += d
		}
	}
	return el, rows, totals
}

// runQuery runs q once, as timeQuery describes.
func runQuery(b *testing.B, conn *sql.Conn, q string, ncols int) (time.Duration, int, []int64) {
	b.Helper()
	rows := 0
	totals := make([]int64, ncols)
	t0 := time.Now()
	rs, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	vals := make([]int64, ncols)
	dst := make([]any, ncols)
	for j := range vals {
		dst[j] = &vals[j]
	}
	for rs.Next() {
		if err := rs.Scan(dst...); err != nil {
			b.Fatal(err)
		}
		rows++
		for j, v := range vals {
			totals[j] += v
		}
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	rs.Close()
	return time.Since(t0), rows, totals
}

// appendScanRows loads ../../bench's scan data, rows rows, as table t(k, v).
func appendScanRows(b *testing.B, conn *sql.Conn, rows int) {
	gk, gv := splitmix(1), splitmix(2)
	appendRows(b, conn, "CREATE TABLE t (k BIGINT, v BIGINT)", "t", rows, func(int) []driver.Value {
		return []driver.Value{gk.intn(1000), gv.intn(1000)}
	})
}

// BenchmarkDuckDBScanFilterAggregate is ../../bench's BenchmarkScanFilterAggregate on DuckDB:
// `SELECT k, SUM(v), COUNT(*) FROM t WHERE v > 499 GROUP BY k` over the same 10M rows, and
// BenchmarkScanWideFilterAggregate's query over them with three more columns.
func BenchmarkDuckDBScanFilterAggregate(b *testing.B) {
	rows := benchScaled(10_000_000)
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	appendScanRows(b, conn, rows)
	b.Run(fmt.Sprintf("rows=%s/threads=1", benchHuman(rows)), func(b *testing.B) {
		el, groups, totals := timeQuery(b, conn, "SELECT k, SUM(v), COUNT(*) FROM t WHERE v > 499 GROUP BY k", 3)
		if groups != 1000 || totals[2] < int64(rows)/3 {
			b.Fatalf("%d groups, COUNT total %d: the data is not what the engine benchmark loads", groups, totals[2])
		}
		b.ReportMetric(float64(rows*b.N)/el.Seconds(), "rows/s")
	})
	// ../../bench's BenchmarkScanWideFilterAggregate: the same rows with three more columns
	// (s VARCHAR, x DOUBLE, e = v), filtered on e.
	gk, gv := splitmix(1), splitmix(2)
	appendRows(b, conn, "CREATE TABLE w (k BIGINT, v BIGINT, s VARCHAR, x DOUBLE, e BIGINT)", "w", rows, func(int) []driver.Value {
		k, v := gk.intn(1000), gv.intn(1000)
		return []driver.Value{k, v, fmt.Sprintf("name-%06d", v*7), float64(k) / 3, v}
	})
	b.Run(fmt.Sprintf("rows=%s/wide/threads=1", benchHuman(rows)), func(b *testing.B) {
		el, groups, totals := timeQuery(b, conn, "SELECT k, SUM(v), COUNT(*) FROM w WHERE e > 499 GROUP BY k", 3)
		if groups != 1000 || totals[2] < int64(rows)/3 {
			b.Fatalf("%d groups, COUNT total %d: the data is not what the engine benchmark loads", groups, totals[2])
		}
		b.ReportMetric(float64(rows*b.N)/el.Seconds(), "rows/s")
	})
}

// BenchmarkDuckDBOrderBy is ../../bench's BenchmarkOrderBy on DuckDB: the scan benchmark's
// t(k, v), 2M rows, sorted whole, its first ten, and numbered within each k.
func BenchmarkDuckDBOrderBy(b *testing.B) {
	rows := benchScaled(2_000_000)
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	appendScanRows(b, conn, rows)
	for _, q := range []struct {
		name, sql  string
		cols, rows int
	}{
		{"full", "SELECT k, v FROM t ORDER BY v, k", 2, rows},
		{"top10", "SELECT k, v FROM t ORDER BY v DESC, k LIMIT 10", 2, 10},
		{"row_number", "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t", 3, rows},
	} {
		b.Run(fmt.Sprintf("%s/rows=%s/threads=1", q.name, benchHuman(rows)), func(b *testing.B) {
			el, n, _ := timeQuery(b, conn, q.sql, q.cols)
			if n != q.rows {
				b.Fatalf("%d rows, want %d", n, q.rows)
			}
			b.ReportMetric(float64(rows*b.N)/el.Seconds(), "rows/s")
		})
	}
}

// BenchmarkDuckDBBatchJoinAggregate is ../../bench's BenchmarkBatchJoinAggregate on DuckDB: the
// same 2M-row fact table f(id, dk, v, s) and 10k-row dimension d(dk, grp, name), joined and
// aggregated by d.grp.
func BenchmarkDuckDBBatchJoinAggregate(b *testing.B) {
	rows := benchScaled(2_000_000)
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	g := splitmix(9)
	appendRows(b, conn, "CREATE TABLE f (id BIGINT, dk BIGINT, v BIGINT, s VARCHAR)", "f", rows, func(i int) []driver.Value {
		dk, v := g.intn(10000), g.intn(1000)
		return []driver.Value{int64(i), dk, v, fmt.Sprintf("s-%d", v)}
	})
	appendRows(b, conn, "CREATE TABLE d (dk BIGINT, grp BIGINT, name VARCHAR)", "d", 10000, func(i int) []driver.Value {
		return []driver.Value{int64(i), int64(i % 100), fmt.Sprintf("n%d", i)}
	})
	b.Run(fmt.Sprintf("rows=%s/threads=1", benchHuman(rows)), func(b *testing.B) {
		el, groups, totals := timeQuery(b, conn, "SELECT d.grp, SUM(f.v), COUNT(*) FROM f JOIN d ON f.dk = d.dk GROUP BY d.grp", 3)
		if groups != 100 || totals[2] != int64(rows) {
			b.Fatalf("%d groups, COUNT total %d: the data is not what the engine benchmark loads", groups, totals[2])
		}
		b.ReportMetric(float64(rows*b.N)/el.Seconds(), "rows/s")
	})
}

// BenchmarkDuckDBTumble is the batch equivalent of ../../bench's BenchmarkTumbleView and
// BenchmarkHopView on DuckDB: the same events (1k keys and 4M events, 1M keys and 1M events;
// ts 1 ms apart) grouped by 10 s window and key in one query over the finished table —
// DuckDB sees all the data at once, with no watermark, no emission per batch and no
// retractions. The HOP variant crosses each event with its five 2 s-sliding windows
// (generate_series with UNNEST is 3x slower).
func BenchmarkDuckDBTumble(b *testing.B) {
	queries := []struct{ name, q string }{
		{"tumble/time_bucket", `SELECT epoch_ms(time_bucket(INTERVAL '10 seconds', ts)) AS window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM ev GROUP BY ALL`},
		{"tumble/epoch", `SELECT epoch_ms(ts) // 10000 * 10000 AS window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM ev GROUP BY ALL`},
		{"hop/offsets", `SELECT epoch_ms(ts) // 2000 * 2000 - 2000 * o.i AS window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM ev, (VALUES (0), (1), (2), (3), (4)) o(i) GROUP BY ALL`},
	}
	for _, sz := range []struct{ keys, events int }{{1000, 4_000_000}, {1_000_000, 1_000_000}} {
		keys, events := sz.keys, benchScaled(sz.events)
		db, conn := openBenchDuckDB(b)
		g := splitmix(5)
		appendRows(b, conn, "CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP)", "ev", events, func(i int) []driver.Value {
			k, v := g.intn(keys), g.intn(1000)
			return []driver.Value{k, v, time.UnixMilli(baseMillis + int64(i)).UTC()}
		})
		for _, c := range queries {
			b.Run(fmt.Sprintf("%s/keys=%s/events=%s/threads=1", c.name, benchHuman(keys), benchHuman(events)), func(b *testing.B) {
				// Fold the result into one row in DuckDB: the time is the query's, not that of
				// database/sql scanning hundreds of thousands of rows one by one.
				q := "SELECT COUNT(*), SUM(window_start), SUM(k), SUM(n), SUM(s) FROM (" + c.q + ")"
				el, _, totals := timeQuery(b, conn, q, 5)
				perEvent := int64(1)
				if c.name[:3] == "hop" {
					perEvent = 5
				}
				if totals[3] != perEvent*int64(events) {
					b.Fatalf("SUM(n) = %d, want %d", totals[3], perEvent*int64(events))
				}
				b.ReportMetric(float64(totals[0]), "groups")
				b.ReportMetric(float64(events*b.N)/el.Seconds(), "events/s")
			})
		}
		conn.Close()
		db.Close()
	}
}

// BenchmarkTumbleVersusDuckDB puts the engine's one-core TUMBLE view (../../bench's
// BenchmarkTumbleView, 1k keys, 4M events: Append of 64k-row Arrow batches into a durable
// table with the view maintained, then FLUSH) and DuckDB's two batch forms of its answer
// side by side in one process, in -rounds alternating rounds, so the ratios are of figures
// taken on the same machine at the same time. It reports each side's median rate and the
// median over rounds of the engine's rate over DuckDB's (x_duckdb_time_bucket,
// x_duckdb_epoch: above 1, the engine is faster). Both sides must agree on COUNT(*),
// SUM(n) and SUM(s) of the result.
func BenchmarkTumbleVersusDuckDB(b *testing.B) {
	const keys = 1000
	events := benchScaled(4_000_000)
	// The same events as DuckDBTumble's table, as the engine's 64k-row Append batches.
	var recs []arrow.RecordBatch
	g := splitmix(5)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ms},
	}, nil)
	for off := 0; off < events; off += benchBatch {
		bl := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := off; i < min(off+benchBatch, events); i++ {
			bl.Field(0).(*array.Int64Builder).Append(g.intn(keys))
			bl.Field(1).(*array.Int64Builder).Append(g.intn(1000))
			bl.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(baseMillis + int64(i)))
		}
		recs = append(recs, bl.NewRecordBatch())
		bl.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	g = splitmix(5)
	appendRows(b, conn, "CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP)", "ev", events, func(i int) []driver.Value {
		k, v := g.intn(keys), g.intn(1000)
		return []driver.Value{k, v, time.UnixMilli(baseMillis + int64(i)).UTC()}
	})
	duck := []struct{ name, q string }{
		{"time_bucket", `SELECT COUNT(*), SUM(n), SUM(s) FROM (SELECT time_bucket(INTERVAL '10 seconds', ts) AS ws, k,
			COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY ALL)`},
		{"epoch", `SELECT COUNT(*), SUM(n), SUM(s) FROM (SELECT epoch_ms(ts) // 10000 * 10000 AS ws, k,
			COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY ALL)`},
	}
	if *rounds < 1 {
		b.Fatalf("-rounds %d: at least one round is needed", *rounds)
	}
	b.Run(fmt.Sprintf("keys=1k/events=%s/one_core", benchHuman(events)), func(b *testing.B) {
		engRates := make([]float64, 0, *rounds)
		duckRates := make([][]float64, len(duck))
		ratios := make([][]float64, len(duck))
		for round := -1; round < *rounds*b.N; round++ { // round -1: untimed, to warm both up
			el, got := engineTumble(b, recs)
			engRate := float64(events) / el.Seconds()
			for i, d := range duck {
				del, _, want := runQuery(b, conn, d.q, 3)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					b.Fatalf("COUNT(*), SUM(n), SUM(s): engine %v, DuckDB (%s) %v", got, d.name, want)
				}
				if round >= 0 {
					r := float64(events) / del.Seconds()
					duckRates[i] = append(duckRates[i], r)
					ratios[i] = append(ratios[i], engRate/r)
				}
			}
			if round >= 0 {
				engRates = append(engRates, engRate)
			}
		}
		b.ReportMetric(median(engRates), "engine_events/s")
		for i, d := range duck {
			b.ReportMetric(median(duckRates[i]), "duckdb_"+d.name+"_events/s")
			b.ReportMetric(median(ratios[i]), "x_duckdb_"+d.name)
		}
	})
}

var rounds = flag.Int("rounds", 5, "BenchmarkTumbleVersusDuckDB's timed rounds (at least 1)")

// engineTumble runs ../../bench's TUMBLE view case on one core (GOMAXPROCS 1) in a fresh
// database: the time of the Append of recs and the FLUSH, and COUNT(*), SUM(n), SUM(s) of
// the view.
func engineTumble(b *testing.B, recs []arrow.RecordBatch) (time.Duration, []int64) {
	b.Helper()
	ctx := context.Background()
	db, err := streamsql.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s
			FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`,
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	runtime.GC() // the garbage of the run before, collected outside the time
	t0 := time.Now()
	for _, r := range recs {
		if err := db.Append(ctx, "ev", r); err != nil {
			runtime.GOMAXPROCS(prev)
			b.Fatal(err)
		}
	}
	_, err = db.Exec("FLUSH")
	el := time.Since(t0)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := db.Query("SELECT COUNT(*), SUM(n), SUM(s) FROM w")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	got := make([]int64, 3)
	if !rows.Next() {
		b.Fatalf("view w: no row: %v", rows.Err())
	}
	if err := rows.Scan(&got[0], &got[1], &got[2]); err != nil {
		b.Fatal(err)
	}
	return el, got
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
