package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// stampedChanges records an aggregate's change rows with their watermarks.
type stampedChanges []string

func (s *stampedChanges) Push(_ int, m Msg) error {
	if m.Kind == MsgBatch {
		for i := 0; i < m.Batch.N; i++ {
			*s = append(*s, fmt.Sprint(m.Batch.Row(i), m.Batch.Weight(i), m.Batch.WM[i]))
		}
	}
	return nil
}

// TestChangeWatermarks: a change's old row carries the least watermark before the batch's
// rows of its group, its new row the greatest (as if the rows had come one by one), whether
// the watermarks rise row by row, as in a table's batch, or not (a view over an aggregate).
func TestChangeWatermarks(t *testing.T) {
	ts := []types.T{types.TBigInt}
	for seed := uint64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		var out stampedChanges
		h := &HashAgg{Keys: []int{0}, KeyT: ts, Aggs: []AggSpec{{Fn: AggCountStar}}, Retract: true, Out: Output{Op: &out}}
		counts := map[int64]int64{}
		var want []string
		w := int64(0)
		for range 5 {
			n := 1 + rng.IntN(30)
			rows := make([][]any, n)
			wms := make([]int64, n)
			lo, hi := map[int64]int64{}, map[int64]int64{}
			var order []int64 // keys by first row
			for i := range rows {
				k := rng.Int64N(6)
				if seed%2 == 0 {
					w += rng.Int64N(3) // rising
				} else {
					w = rng.Int64N(100)
				}
				rows[i], wms[i] = []any{k}, w
				if _, ok := lo[k]; !ok {
					lo[k], hi[k] = w, w
					order = append(order, k)
				}
				lo[k], hi[k] = min(lo[k], w), max(hi[k], w)
			}
			for _, k := range order {
				if c := counts[k]; c > 0 {
					want = append(want, fmt.Sprint([]any{k, c}, -1, lo[k]))
				}
			}
			for _, r := range rows {
				counts[r[0].(int64)]++
			}
			for _, k := range order {
				want = append(want, fmt.Sprint([]any{k, counts[k]}, 1, hi[k]))
			}
			b := RowsToBatch(rows, ts)
			b.WM = wms
			if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(want)
		got := slices.Clone([]string(out))
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: changes\n%v\nwant\n%v", seed, got, want)
		}
	}
}
