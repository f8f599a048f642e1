package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestMinMaxUnderRetractions drives a MIN/MAX aggregate with random insertions and
// retractions (of values present, duplicates included; few distinct values, and many, whose
// heaps keep values that left until rebuilt) and checks every group's row against the
// extremes of the values it holds.
func TestMinMaxUnderRetractions(t *testing.T) {
	for _, span := range []int64{10, 1000} {
		testMinMaxUnderRetractions(t, span)
	}
}

func testMinMaxUnderRetractions(t *testing.T, span int64) {
	rng := rand.New(rand.NewPCG(3, uint64(span)))
	out := liveCounts{}
	h := &HashAgg{Keys: []int{0}, KeyT: []types.T{types.TBigInt},
		Aggs:    []AggSpec{{Fn: AggMin, Arg: 1, In: types.TBigInt}, {Fn: AggMax, Arg: 1, In: types.TBigInt}},
		Retract: true, Out: Output{Op: out}}
	held := map[int64][]int64{} // group -> values held
	for step := 0; step < 1000; step++ {
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
			v := rng.Int64N(span)
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
			t.Fatalf("span %d step %d: rows %v, want %v", span, step, out, want)
		}
	}
}

// TestWindowedAggKeyHomes drives a windowed COUNT(*) keyed by (window_start, window_end, k)
// with k both near the window's first key (indexed directly) and far from it (the hash
// table), in runs of one window and interleaved, and checks every group's row.
func TestWindowedAggKeyHomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	out := liveCounts{}
	ts := []types.T{types.TBigInt, types.TBigInt, types.TBigInt}
	h := &HashAgg{Keys: []int{0, 1, 2}, KeyT: ts, Aggs: []AggSpec{{Fn: AggCountStar}},
		Retract: true, Windowed: true, WindowStart: 0, WindowEnd: 1, Out: Output{Op: out}}
	counts := map[[3]int64]int64{}
	for step := 0; step < 200; step++ {
		var rows [][]any
		start := int64(rng.IntN(3)) * 10
		for i := 0; i < 1+rng.IntN(300); i++ {
			if rng.IntN(20) == 0 {
				start = int64(rng.IntN(3)) * 10 // another window, mid-batch
			}
			k := rng.Int64N(50)
			if rng.IntN(5) == 0 {
				k = 1_000_000_000 + rng.Int64N(5) // far from any window's first key
			}
			rows = append(rows, []any{start, start + 10, k})
			counts[[3]int64{start, start + 10, k}]++
		}
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: RowsToBatch(rows, ts)}); err != nil {
			t.Fatal(err)
		}
		want := liveCounts{}
		for g, n := range counts {
			want[fmt.Sprint([]any{g[0], g[1], g[2], n})] = 1
		}
		if fmt.Sprint(map[string]int64(out)) != fmt.Sprint(map[string]int64(want)) {
			t.Fatalf("step %d: %d rows, want %d", step, len(out), len(want))
		}
	}
}

// minAfterBatch pushes a batch of (group 1, value, weight) rows into a MIN aggregate holding
// 0 .. n-1 and returns the group's row.
func minAfterBatch(t testing.TB, n int, vals, ws []int64) string {
	out := liveCounts{}
	h := &HashAgg{Keys: []int{0}, KeyT: []types.T{types.TBigInt},
		Aggs: []AggSpec{{Fn: AggMin, Arg: 1, In: types.TBigInt}}, Retract: true, Out: Output{Op: out}}
	ts := []types.T{types.TBigInt, types.TBigInt}
	var rows [][]any
	for i := range n {
		rows = append(rows, []any{int64(1), int64(i)})
	}
	if err := h.Push(0, Msg{Kind: MsgBatch, Batch: RowsToBatch(rows, ts)}); err != nil {
		t.Fatal(err)
	}
	rows = rows[:0]
	for _, v := range vals {
		rows = append(rows, []any{int64(1), v})
	}
	b := RowsToBatch(rows, ts)
	b.W = ws
	if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(map[string]int64(out))
}

// TestMinRetractedInOneBatch: one batch retracting the least values in turn (each the
// extreme when it leaves), then inserting one above and one below what is left: the extreme
// is found once, at the end, among the values left and those inserted after it left.
func TestMinRetractedInOneBatch(t *testing.T) {
	var vals, ws []int64
	for v := range int64(50) {
		vals, ws = append(vals, v), append(ws, -1)
	}
	if got, want := minAfterBatch(t, 100, vals, ws), "map[[1 50]:1]"; got != want {
		t.Errorf("lower half retracted: %s, want %s", got, want)
	}
	vals, ws = append(vals, 70, 7, 3), append(ws, 1, 1, 1)
	vals, ws = append(vals, 3), append(ws, -1)
	if got, want := minAfterBatch(t, 100, vals, ws), "map[[1 7]:1]"; got != want {
		t.Errorf("lower half retracted, 70, 7 and 3 inserted, 3 retracted: %s, want %s", got, want)
	}
}

// BenchmarkMinRetractAscending retracts the least half of 20,000 values in one batch, each
// the current MIN when it leaves.
func BenchmarkMinRetractAscending(b *testing.B) {
	var vals, ws []int64
	for v := range int64(10000) {
		vals, ws = append(vals, v), append(ws, -1)
	}
	for b.Loop() {
		minAfterBatch(b, 20000, vals, ws)
	}
}

// BenchmarkMinRetractEachStatement deletes the MIN of a 20,000-value group 1000 times, one
// batch (statement) each: each finds the next extreme in the group's heap.
func BenchmarkMinRetractEachStatement(b *testing.B) {
	ts := []types.T{types.TBigInt, types.TBigInt}
	for b.Loop() {
		out := liveCounts{}
		h := &HashAgg{Keys: []int{0}, KeyT: ts[:1], Aggs: []AggSpec{{Fn: AggMin, Arg: 1, In: types.TBigInt}},
			Retract: true, Out: Output{Op: out}}
		var rows [][]any
		for i := range int64(20000) {
			rows = append(rows, []any{int64(1), (i * 7919) % 20000})
		}
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: RowsToBatch(rows, ts)}); err != nil {
			b.Fatal(err)
		}
		for v := range int64(1000) {
			d := RowsToBatch([][]any{{int64(1), v}}, ts)
			d.W = []int64{-1}
			if err := h.Push(0, Msg{Kind: MsgBatch, Batch: d}); err != nil {
				b.Fatal(err)
			}
		}
		if got := fmt.Sprint(map[string]int64(out)); got != "map[[1 1000]:1]" {
			b.Fatalf("MIN after deleting 0..999: %s", got)
		}
	}
}
