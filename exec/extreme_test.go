package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestMinMaxUnderRetractions drives a MIN/MAX aggregate with random insertions and
// retractions (of values present, duplicates included) and checks every group's row
// against the extremes of the values it holds.
func TestMinMaxUnderRetractions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	out := liveCounts{}
	h := &HashAgg{Keys: []int{0}, KeyT: []types.T{types.TBigInt},
		Aggs:    []AggSpec{{Fn: AggMin, Arg: 1, In: types.TBigInt}, {Fn: AggMax, Arg: 1, In: types.TBigInt}},
		Retract: true, Out: Output{Op: out}}
	held := map[int64][]int64{} // group -> values held
	for step := 0; step < 300; step++ {
		var rows [][]any
		var ws []int64
		for i := 0; i < 1+rng.IntN(20); i++ {
			g := rng.Int64N(4)
			if vs := held[g]; len(vs) > 0 && rng.IntN(2) == 0 {
				j := rng.IntN(len(vs))
				rows, ws = append(rows, []any{g, vs[j]}), append(ws, -1)
				held[g] = append(vs[:j], vs[j+1:]...)
				continue
			}
			v := rng.Int64N(10)
			rows, ws = append(rows, []any{g, v}), append(ws, 1)
			held[g] = append(held[g], v)
		}
		b := RowsToBatch(rows, []types.T{types.TBigInt, types.TBigInt})
		b.W = ws
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		want := liveCounts{}
		for g, vs := range held {
			if len(vs) > 0 {
				want[fmt.Sprint([]any{g, slices.Min(vs), slices.Max(vs)})] = 1
			}
		}
		if fmt.Sprint(map[string]int64(out)) != fmt.Sprint(map[string]int64(want)) {
			t.Fatalf("step %d: rows %v, want %v", step, out, want)
		}
	}
}
