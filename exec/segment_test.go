package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// segmentRoundTrip encodes b, decodes it and checks every value, NULLs included.
func segmentRoundTrip(t *testing.T, b *Batch, ts []types.T) int {
	t.Helper()
	buf, err := AppendSegment([]byte("prefix"), b, ts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSegment(buf[len("prefix"):], ts)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != b.N || len(got.Cols) != len(b.Cols) {
		t.Fatalf("decoded %d rows x %d columns, want %d x %d", got.N, len(got.Cols), b.N, len(b.Cols))
	}
	for c := range b.Cols {
		for i := 0; i < b.N; i++ {
			if w, g := Value(b.Cols[c], i), Value(got.Cols[c], i); w != g {
				t.Fatalf("column %d row %d: %v, want %v", c, i, g, w)
			}
		}
	}
	return len(buf) - len("prefix")
}

func TestSegmentPackedWidths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		for w := 0; w <= 64; w++ {
			vals := make([]int64, n)
			base := r.Int64N(1<<62) - 1<<61 // base + 2^w - 1 does not overflow
			if w >= 62 {
				base = math.MinInt64
			}
			for i := range vals {
				switch {
				case w == 64:
					vals[i] = int64(r.Uint64())
				case w > 0:
					vals[i] = base + int64(r.Uint64()>>(64-w))
				default:
					vals[i] = base
				}
			}
			if n > 1 && w == 64 {
				vals[0], vals[1] = math.MinInt64, math.MaxInt64
			}
			t.Run(fmt.Sprintf("n=%d/w=%d", n, w), func(t *testing.T) {
				size := segmentRoundTrip(t, &Batch{N: n, Cols: []arrow.Array{NewInt64(vals, nil)}}, []types.T{types.TBigInt})
				hdr := len(binary.AppendUvarint(nil, uint64(n))) + 2 + 10
				if max := hdr + (n*w+63)/64*8; size > max {
					t.Errorf("%d bytes, want at most %d", size, max)
				}
			})
		}
	}
}

func TestSegmentNullsSlicesAndMixedTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ts := []types.T{types.TBigInt, types.TVarchar, types.TTimestamp, types.TDouble, types.TBool, types.TBigInt}
	const n = 777
	bs := make([]*Builder, len(ts))
	for c, typ := range ts {
		bs[c] = NewBuilder(typ, n)
	}
	for i := 0; i < n; i++ {
		for c, b := range bs {
			if r.IntN(5) == 0 && c != 5 { // the last column has no NULLs
				b.Append(nil)
				continue
			}
			switch ts[c].Phys() {
			case types.PhysInt64:
				b.Append(r.Int64N(1<<20) - 1<<19)
			case types.PhysString:
				b.Append(fmt.Sprint("s", r.IntN(100)))
			case types.PhysFloat64:
				b.Append(r.Float64())
			case types.PhysBool:
				b.Append(r.IntN(2) == 0)
			}
		}
	}
	b := &Batch{N: n}
	for _, bl := range bs {
		b.Cols = append(b.Cols, bl.Finish())
	}
	segmentRoundTrip(t, b, ts)
	// A slice (an array with an offset) of the same columns.
	s := &Batch{N: 300}
	for _, c := range b.Cols {
		s.Cols = append(s.Cols, array.NewSlice(c, 101, 401))
	}
	segmentRoundTrip(t, s, ts)
	// An all-NULL integer column.
	nb := NewBuilder(types.TBigInt, 3)
	nb.Append(nil)
	nb.Append(nil)
	nb.Append(nil)
	segmentRoundTrip(t, &Batch{N: 3, Cols: []arrow.Array{nb.Finish()}}, []types.T{types.TBigInt})
}

// Columns whose values differ little from the previous row's are delta-packed, whatever
// their range: event times in order take no bits a row, nearly in order a few; differences
// that overflow int64 wrap around and still round-trip; NULL rows add no width.
func TestSegmentDeltaPacked(t *testing.T) {
	bigint := []types.T{types.TBigInt}
	col := func(vals []int64, valid []bool) *Batch {
		return &Batch{N: len(vals), Cols: []arrow.Array{NewInt64(vals, valid)}}
	}
	hdr := func(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) + 2 }
	const n = 10_000
	inOrder := make([]int64, n)
	jitter := make([]int64, n)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range inOrder {
		inOrder[i] = 1_700_000_000_000 + int64(i)
		jitter[i] = inOrder[i] + r.Int64N(1000) - 500
	}
	// In order, 1 ms apart: row 0's value, the least difference and a width of 0.
	if size, want := segmentRoundTrip(t, col(inOrder, nil), bigint), hdr(n)+1+8+9; size != want {
		t.Errorf("in order: %d bytes, want %d", size, want)
	}
	// Out of order by up to a second: differences within 2000, 11 bits (the range, 10_999,
	// takes 14).
	if size, want := segmentRoundTrip(t, col(jitter, nil), bigint), hdr(n)+1+8+9+packedSize(n-1, 11); size != want {
		t.Errorf("out of order: %d bytes, want %d", size, want)
	}
	// Descending.
	desc := slices.Clone(inOrder)
	slices.Reverse(desc)
	if size, want := segmentRoundTrip(t, col(desc, nil), bigint), hdr(n)+1+8+9; size != want {
		t.Errorf("descending: %d bytes, want %d", size, want)
	}
	// Differences that overflow: MaxInt64 - 1, MaxInt64, MinInt64, MinInt64 + 1 step by 1
	// (wrapping), though their range takes 64 bits.
	wrap := []int64{math.MaxInt64 - 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	if size, want := segmentRoundTrip(t, col(wrap, nil), bigint), hdr(4)+1+8+9; size != want {
		t.Errorf("wrapping: %d bytes, want %d", size, want)
	}
	segmentRoundTrip(t, col([]int64{math.MinInt64, math.MaxInt64, math.MinInt64, 0, math.MaxInt64}, nil), bigint)
	// NULLs, leading, inside and trailing, take the value before them (the first valid one's
	// before it): differences of 0 to 2, 2 bits a row.
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = i >= 3 && i%7 != 0 && i < n-2
	}
	if size, want := segmentRoundTrip(t, col(slices.Clone(inOrder), valid), bigint), hdr(n)+1+(n+7)/8+8+9+packedSize(n-1, 2); size != want {
		t.Errorf("in order with NULLs: %d bytes, want %d", size, want)
	}
	// Two rows are not worth a delta: row 0's value would cost more than it saves.
	if size, want := segmentRoundTrip(t, col([]int64{1 << 40, 1<<40 + 3}, nil), bigint), hdr(2)+1+9+packedSize(2, 2); size != want {
		t.Errorf("two rows: %d bytes, want %d", size, want)
	}
}

// A segment claiming more rows than a segment may hold is refused before anything is
// allocated for them (a packed column of width 0 takes no bytes a row), and so is a batch of
// more rows, or whose column lengths differ from its row count, at encoding.
func TestSegmentRowBounds(t *testing.T) {
	v := binary.AppendUvarint(nil, 1<<34)
	v = append(v, 1, colPacked, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if _, err := DecodeSegment(v, []types.T{types.TBigInt}); err == nil {
		t.Fatal("a segment of 2^34 rows of width 0 decoded")
	}
	big := &Batch{N: MaxSegmentRows + 1, Cols: []arrow.Array{NewInt64(make([]int64, MaxSegmentRows+1), nil)}}
	if _, err := AppendSegment(nil, big, []types.T{types.TBigInt}); err == nil {
		t.Fatal("a batch beyond MaxSegmentRows encoded")
	}
	short := &Batch{N: 3, Cols: []arrow.Array{NewInt64([]int64{1, 2}, nil)}}
	if _, err := AppendSegment(nil, short, []types.T{types.TBigInt}); err == nil {
		t.Fatal("a batch of 3 rows with a column of 2 encoded")
	}
}

// A column of another Arrow type than its type's physical one is refused.
func TestSegmentWrongArrowType(t *testing.T) {
	b := &Batch{N: 1, Cols: []arrow.Array{NewInt64([]int64{1}, nil), ConstArray(types.TBigInt, int64(2), 1)}}
	if _, err := AppendSegment(nil, b, []types.T{types.TBigInt, types.TVarchar}); err == nil {
		t.Fatal("a BIGINT column encoded as VARCHAR")
	}
}

// FuzzDecodeSegment checks that no input makes DecodeSegment panic, and that what it
// accepts re-encodes to the same values. Its columns are all packed: the IPC part is Arrow's
// reader, which trusts the sizes a message claims (a stored segment's checksum is verified
// before it is decoded).
func FuzzDecodeSegment(f *testing.F) {
	ts := []types.T{types.TBigInt, types.TTimestamp}
	b := &Batch{N: 3, Cols: []arrow.Array{NewInt64([]int64{5, 9, -1}, []bool{true, false, true}), NewInt64([]int64{1e12, 1e12 + 7, 1e12 + 3}, nil)}}
	buf, err := AppendSegment(nil, b, ts)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(buf)
	sorted := make([]int64, 100)
	for i := range sorted {
		sorted[i] = 1e12 + int64(i*i%7+i*10)
	}
	if buf, err = AppendSegment(nil, &Batch{N: 100, Cols: []arrow.Array{NewInt64(sorted, nil), NewInt64(sorted, nil)}}, ts); err != nil {
		f.Fatal(err)
	}
	f.Add(buf)
	f.Add([]byte{3, 2, 1, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 0xff})
	f.Fuzz(func(t *testing.T, v []byte) {
		if rows, k := binary.Uvarint(v); k > 0 && rows > 1<<20 {
			return // a valid header may claim many rows of width 0; not worth the memory here
		}
		b, err := DecodeSegment(v, ts)
		if err != nil {
			return
		}
		segmentRoundTrip(t, b, ts)
	})
}
