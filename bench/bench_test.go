// Package bench measures streamsql end to end, through the public API only (Open, Exec,
// QueryArrow, Append), and puts each figure next to a hand-written Go loop doing the same work
// over the same data, measured in the same run, so that the ratio is the engine's overhead on
// this machine rather than a number to compare across machines. DuckDB's figures for the same
// queries live in tests/oracle/bench_test.go (a nested module, because DuckDB is cgo).
//
// Every benchmark times only the work it names (setup, data generation and result checks are
// excluded) with its own clock, and reports throughput with b.ReportMetric; ratios are
// reported as x_of_loop = engine rate / loop rate (1 = as fast as the loop, 0.33 = 3x slower).
//
// Run the full sizes with `make bench` (one iteration each). While developing, shrink every
// size with -short (x0.05) or -scale:
//
//	go test -run '^$' -bench . -benchtime 1x -count 1 ./bench/ -scale 0.02
//
// Invariant: every engine result is checked against the loop's before a figure is reported;
// a benchmark that computes the wrong answer fails instead of reporting a fast number.
package bench

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

var scaleFlag = flag.Float64("scale", 0, "multiply every benchmark size by this factor (default 1, or 0.05 with -short)")

// batchRows is the Append batch size every benchmark uses.
const batchRows = 64 << 10

// scaled returns n scaled by -scale (or by 0.05 under -short), at least one batch's worth.
func scaled(n int) int {
	s := *scaleFlag
	if s == 0 {
		s = 1
		if testing.Short() {
			s = 0.05
		}
	}
	return max(int(float64(n)*s), 1000)
}

// human renders a row count as in the sub-benchmark names: 1k, 4M.
func human(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// openDB opens a database in a fresh directory under b.TempDir.
func openDB(b *testing.B, opts ...streamsql.Option) *streamsql.DB {
	b.Helper()
	db, err := streamsql.Open(b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

func mustExec(b *testing.B, db *streamsql.DB, q string) {
	b.Helper()
	if _, err := db.Exec(q); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
}

// int64Array wraps vals without copying: the engine stores BIGINT columns of an Append
// zero-copy, so the hand loops and the engine read the same memory.
func int64Array(vals []int64) arrow.Array {
	d := array.NewData(arrow.PrimitiveTypes.Int64, len(vals),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0)
	defer d.Release()
	return array.NewInt64Data(d)
}

// tsArray wraps epoch milliseconds as timestamp[ms, UTC], the external type of TIMESTAMP(3).
func tsArray(ms []int64) arrow.Array {
	d := array.NewData(arrow.FixedWidthTypes.Timestamp_ms, len(ms),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ms))}, nil, 0, 0)
	defer d.Release()
	return array.NewTimestampData(d)
}

// record builds a batch of the given columns (all non-null).
func record(names []string, cols ...arrow.Array) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
}

// appendAll appends recs to table in order.
func appendAll(b *testing.B, db *streamsql.DB, table string, recs []arrow.RecordBatch) {
	b.Helper()
	ctx := context.Background()
	for _, r := range recs {
		if err := db.Append(ctx, table, r); err != nil {
			b.Fatalf("append to %s: %v", table, err)
		}
	}
}

// liveHeap is the live heap after a full collection, in bytes.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// rate is n per second of d.
func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// splitmix is a tiny deterministic generator (fixed seeds, so every run sees the same data).
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n).
func (s *splitmix) intn(n int) int64 { return int64(s.next() % uint64(n)) }
