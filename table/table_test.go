package table

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// insert adds b's rows to tbl, committed to store.
func insert(t *testing.T, store *state.Store, tbl *Table, b *exec.Batch) {
	t.Helper()
	ch, err := tbl.Insert(b)
	if err != nil {
		t.Fatal(err)
	}
	wb := store.NewBatch()
	apply, err := ch.Write(wb)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(wb); err != nil {
		t.Fatal(err)
	}
	apply()
}

// The cache budget bounds the decoded rows in memory, not their encoded size: segments of a
// constant column encode to a few bytes but decode to 8 a row. Batches beyond
// exec.MaxSegmentRows are stored as several segments.
func TestCacheCountsDecodedRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	store, err := state.Open(dir, false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var seq state.Sequence
	ts := []types.T{types.TBigInt}
	const budget = 1 << 20
	tbl := New(1, []string{"a"}, ts, nil, &seq, store, budget)
	rows := 0
	for _, n := range []int{64 << 10, 64 << 10, exec.MaxSegmentRows + 5} {
		insert(t, store, tbl, &exec.Batch{N: n, Cols: []arrow.Array{exec.NewInt64(make([]int64, n), nil)}})
		rows += n
	}
	if got := len(tbl.segs); got != 4 {
		t.Errorf("%d segments, want 4 (the last batch split in two)", got)
	}
	reopened := New(1, []string{"a"}, ts, nil, &seq, store, budget)
	if err := reopened.Load(); err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*Table{tbl, reopened} {
		if tb.Rows() != rows {
			t.Errorf("%d rows, want %d", tb.Rows(), rows)
		}
		// Only the most recent segment may exceed the budget alone.
		var held int64
		for _, s := range tb.segs {
			if s.batch != nil {
				held += s.batch.MemSize()
			}
		}
		if last := tb.segs[len(tb.segs)-1].size; held > budget+last {
			t.Errorf("%d bytes of decoded rows cached, budget %d", held, budget)
		}
	}
}

// A segment appended as a slice of a larger array is charged its own rows, not the array's.
func TestCacheChargesSlicesTheirRows(t *testing.T) {
	store, err := state.Open("", false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var seq state.Sequence
	tbl := New(1, []string{"a", "s"}, []types.T{types.TBigInt, types.TVarchar}, nil, &seq, store, 1<<20)
	const total, part = 100_000, 1000
	sb := exec.NewBuilder(types.TVarchar, total)
	for i := 0; i < total; i++ {
		sb.Append("0123456789")
	}
	whole := &exec.Batch{N: total, Cols: []arrow.Array{exec.NewInt64(make([]int64, total), nil), sb.Finish()}}
	for lo := 0; lo < total; lo += part {
		insert(t, store, tbl, whole.Slice(lo, lo+part))
	}
	// 8 + 10 bytes a row, and 4 of offset.
	for _, s := range tbl.segs {
		if want := int64(part*(8+10+4) + 4); s.size != want {
			t.Fatalf("a %d-row slice charged %d bytes, want %d", part, s.size, want)
		}
	}
	cached := 0
	for _, s := range tbl.segs {
		if s.batch != nil {
			cached++
		}
	}
	if cached < 40 {
		t.Errorf("%d of %d segments cached under a 1 MiB budget", cached, len(tbl.segs))
	}
}

// A scan of a table larger than its cache budget keeps the segments already in memory: the
// next scan finds them there (their decoded batches are the same), and the cache stays
// within the budget. (Under plain LRU each scan would evict every segment before coming
// back to it.) A lookup outside a pass still evicts the least recently used.
func TestScanKeepsCachedSegments(t *testing.T) {
	store, err := state.Open("", false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var seq state.Sequence
	ts := []types.T{types.TBigInt}
	const n = 64 << 10 // 512 KiB decoded a segment
	tbl := New(1, []string{"a"}, ts, nil, &seq, store, 2*n*8+1)
	for range 5 {
		insert(t, store, tbl, &exec.Batch{N: n, Cols: []arrow.Array{exec.NewInt64(make([]int64, n), nil)}})
	}
	scan := func() {
		rows := 0
		if err := tbl.Scan(n, func(b *exec.Batch) error { rows += b.N; return nil }); err != nil {
			t.Fatal(err)
		}
		if rows != 5*n {
			t.Fatalf("scan: %d rows, want %d", rows, 5*n)
		}
	}
	cached := func() map[*Segment]*exec.Batch {
		m := map[*Segment]*exec.Batch{}
		var held int64
		for _, s := range tbl.segs {
			if s.batch != nil {
				m[s], held = s.batch, held+s.size
			}
		}
		if held > tbl.CacheBytes {
			t.Fatalf("%d bytes cached, budget %d", held, tbl.CacheBytes)
		}
		return m
	}
	scan()
	before := cached()
	if len(before) != 2 {
		t.Fatalf("%d segments cached after a scan, want 2", len(before))
	}
	scan()
	for s, b := range cached() {
		if before[s] != b {
			t.Errorf("segment %d was read again by the second scan", s.Seq)
		}
	}
	if _, err := tbl.Batch(tbl.segs[0]); err != nil {
		t.Fatal(err)
	}
	if tbl.segs[0].batch == nil || len(cached()) != 2 {
		t.Error("a lookup of an uncached segment did not take the place of the least recently used")
	}
}

// ScanWhere skips the segments whose rows the bounds all exclude, unread, and passes every
// row of the others; a segment whose bounded column is all NULL holds no row a comparison
// keeps.
func TestScanWhereSkipsSegments(t *testing.T) {
	store, err := state.Open("", false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var seq state.Sequence
	ts := []types.T{types.TBigInt, types.TBigInt}
	tbl := New(1, []string{"a", "b"}, ts, nil, &seq, store, 0) // nothing cached: a scan reads
	for _, rows := range [][][]any{
		{{int64(1), int64(1)}, {int64(9), int64(2)}},
		{{int64(10), nil}, {int64(19), nil}},
		{{int64(20), int64(3)}, {int64(29), int64(4)}},
	} {
		insert(t, store, tbl, exec.RowsToBatch(rows, ts))
	}
	for _, tc := range []struct {
		bounds []exec.ValueBound
		want   string
	}{
		{nil, "[[1 1] [9 2] [10 <nil>] [19 <nil>] [20 3] [29 4]]"},
		{[]exec.ValueBound{{Col: 0, Lo: 10, Hi: 19}}, "[[10 <nil>] [19 <nil>]]"},
		{[]exec.ValueBound{{Col: 0, Lo: 5, Hi: 21}}, "[[1 1] [9 2] [10 <nil>] [19 <nil>] [20 3] [29 4]]"},
		{[]exec.ValueBound{{Col: 0, Lo: 19, Hi: 20}}, "[[10 <nil>] [19 <nil>] [20 3] [29 4]]"}, // touching both ends
		{[]exec.ValueBound{{Col: 0, Lo: 30, Hi: 40}}, "[]"},
		{[]exec.ValueBound{{Col: 1, Lo: 0, Hi: 100}}, "[[1 1] [9 2] [20 3] [29 4]]"},
		{[]exec.ValueBound{{Col: 0, Lo: 0, Hi: 100}, {Col: 1, Lo: 3, Hi: 3}}, "[[20 3] [29 4]]"},
		{[]exec.ValueBound{{Col: 0, Lo: 1, Hi: 0}}, "[]"},
	} {
		var rows [][]any
		err := tbl.ScanWhere(1000, tc.bounds, func(b *exec.Batch) error {
			for i := 0; i < b.N; i++ {
				rows = append(rows, b.Row(i))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != tc.want {
			t.Errorf("bounds %v: %s, want %s", tc.bounds, got, tc.want)
		}
	}
}
