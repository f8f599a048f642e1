package exec

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// randomSortInput makes 1 to 4 batches of rows (a, b, c, arrival number) of types ts, with
// NULLs, ties and weights above one, and 1 to 3 random sort keys over a, b and c.
func randomSortInput(rng *rand.Rand, ts []types.T) ([]*Batch, []SortKey) {
	var batches []*Batch
	seq := int64(0)
	for nb := rng.Intn(4) + 1; nb > 0; nb-- {
		n := rng.Intn(50) + 1
		rows := make([][]any, n)
		w := make([]int64, n)
		for i := range rows {
			var a, b, c any = rng.Int63n(5) - 2, float64(rng.Intn(4)), string(rune('a' + rng.Intn(3)))
			if rng.Intn(6) == 0 { // the floats an order must place: NaN (greatest), -0 (= 0), infinities
				b = []float64{math.NaN(), math.Copysign(0, -1), math.Inf(1), math.Inf(-1), -1.5}[rng.Intn(5)]
			}
			if rng.Intn(20) == 0 {
				a = []int64{math.MinInt64, math.MaxInt64}[rng.Intn(2)]
			}
			if rng.Intn(8) == 0 {
				a = nil
			}
			if rng.Intn(8) == 0 {
				b = nil
			}
			if rng.Intn(8) == 0 {
				c = nil
			}
			seq++
			rows[i] = []any{a, b, c, seq}
			w[i] = 1
			if rng.Intn(5) == 0 {
				w[i] = int64(rng.Intn(3) + 1)
			}
		}
		bt := RowsToBatch(rows, ts)
		bt.W = w
		batches = append(batches, bt)
	}
	var keys []SortKey
	for _, c := range rng.Perm(3)[:rng.Intn(3)+1] {
		keys = append(keys, SortKey{Col: c, Desc: rng.Intn(2) == 0, Nulls: NullOrder(rng.Intn(3))})
	}
	return batches, keys
}

// A full Sort emits the rows in the order of a stable sort of the boxed rows by rowLess
// (NULLs first ascending and last descending unless the key says otherwise, ties in arrival
// order), each row with its weight.
func TestSortMatchesRowLess(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TDouble, types.TVarchar, types.TBigInt}
	rng := rand.New(rand.NewSource(2))
	for iter := 0; iter < 300; iter++ {
		batches, keys := randomSortInput(rng, ts)
		var rows [][]any
		for _, b := range batches {
			for i := 0; i < b.N; i++ {
				rows = append(rows, append(b.Row(i), b.W[i]))
			}
		}
		sort.SliceStable(rows, func(a, b int) bool { return rowLess(rows[a], rows[b], keys) })
		out := &batchOut{}
		s := &Sort{Keys: keys, Types: ts, Out: Output{Op: out}}
		for _, b := range batches {
			if err := s.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Push(0, Msg{Kind: MsgEnd}); err != nil {
			t.Fatal(err)
		}
		var got [][]any
		for _, b := range out.bs {
			for i := 0; i < b.N; i++ {
				got = append(got, append(b.Row(i), b.W[i]))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(rows) { // (NaN is not DeepEqual to itself)
			t.Fatalf("iter %d keys %+v:\n got %v\nwant %v", iter, keys, got, rows)
		}
	}
}

// TestSortTopN checks a Sort with a Limit (the Top-N heap of ORDER BY ... LIMIT) against a
// full Sort followed by the same Limit: ties (kept in arrival order), NULLs, both directions,
// weights above one, several batches.
func TestSortTopN(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TDouble, types.TVarchar, types.TBigInt}
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		batches, keys := randomSortInput(rng, ts)
		count, offset := int64(rng.Intn(12)), int64(rng.Intn(4))
		run := func(limit int64) [][]any {
			coll := &Collector{Types: ts, Ordered: true}
			lim := &Limit{Count: count, Offset: offset, Types: ts, Out: Output{Op: coll}}
			s := &Sort{Keys: keys, Types: ts, Limit: limit, Out: Output{Op: lim}}
			for _, b := range batches {
				if err := s.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Push(0, Msg{Kind: MsgEnd}); err != nil {
				t.Fatal(err)
			}
			return coll.Rows()
		}
		want, got := run(0), run(count+offset)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("iter %d keys %+v limit %d offset %d:\n got %v\nwant %v", iter, keys, count, offset, got, want)
		}
	}
}
