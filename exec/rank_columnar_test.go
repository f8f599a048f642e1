package exec

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// A bounded query's ROW_NUMBER, RANK and DENSE_RANK (the columnar ranking) number the rows
// as the definition does: partitions by their key (NULL keys one partition), rows by the
// order keys then arrival, a row of weight w as w rows, peers sharing RANK and DENSE_RANK;
// with a Limit, only rows numbered up to it.
func TestColumnarRankingMatchesDefinition(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TDouble, types.TVarchar, types.TBigInt}
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 300; iter++ {
		batches, order := randomSortInput(rng, ts)
		part := []int{rng.Intn(3)}
		if rng.Intn(3) == 0 {
			part = nil
		}
		fn := []RankFunc{RowNumber, Rank, DenseRank}[rng.Intn(3)]
		limit := int64(-1)
		if rng.Intn(3) == 0 {
			limit = int64(rng.Intn(4))
		}
		// The definition, over boxed rows.
		var rows [][]any
		for _, b := range batches {
			for i := 0; i < b.N; i++ {
				for k := b.Weight(i); k > 0; k-- {
					rows = append(rows, b.Row(i))
				}
			}
		}
		var pkeys []SortKey
		for _, c := range part {
			pkeys = append(pkeys, SortKey{Col: c})
		}
		sort.SliceStable(rows, func(a, b int) bool { return rowLess(rows[a], rows[b], append(pkeys, order...)) })
		var want [][]any
		var n, rank, dense int64
		for i, row := range rows {
			switch {
			case i == 0 || rowLess(rows[i-1], row, pkeys) || rowLess(row, rows[i-1], pkeys):
				n, rank, dense = 1, 1, 1
			default:
				n++
				if rowLess(rows[i-1], row, order) {
					rank, dense = n, dense+1
				}
			}
			v := map[RankFunc]int64{RowNumber: n, Rank: rank, DenseRank: dense}[fn]
			if limit < 0 || v <= limit {
				want = append(want, append(append([]any{}, row...), v))
			}
		}
		out := &batchOut{}
		r := &Ranker{Fn: fn, PartCols: part, Order: order, Types: ts, ResultT: types.TBigInt, Limit: limit, Batch: true, Out: Output{Op: out}}
		for _, b := range batches {
			if err := r.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Push(0, Msg{Kind: MsgEnd}); err != nil {
			t.Fatal(err)
		}
		var got [][]any
		for _, b := range out.bs {
			for i := 0; i < b.N; i++ {
				got = append(got, b.Row(i))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("iter %d fn %d partition %v order %+v limit %d:\n got %v\nwant %v", iter, fn, part, order, limit, got, want)
		}
	}
}
