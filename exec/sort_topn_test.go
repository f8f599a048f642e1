package exec

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestSortTopN checks a Sort with a Limit (the Top-N heap of ORDER BY ... LIMIT) against a
// full Sort followed by the same Limit: ties (kept in arrival order), NULLs, both directions,
// weights above one, several batches.
func TestSortTopN(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TDouble, types.TVarchar, types.TBigInt}
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		var batches []*Batch
		seq := int64(0)
		for nb := rng.Intn(4) + 1; nb > 0; nb-- {
			n := rng.Intn(50) + 1
			rows := make([][]any, n)
			w := make([]int64, n)
			for i := range rows {
				var a, b, c any = rng.Int63n(5), float64(rng.Intn(4)), string(rune('a' + rng.Intn(3)))
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
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iter %d keys %+v limit %d offset %d:\n got %v\nwant %v", iter, keys, count, offset, got, want)
		}
	}
}
