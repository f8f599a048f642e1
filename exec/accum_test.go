package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestBoolAndStringAggUnderRetractions drives BOOL_AND, BOOL_OR, STRING_AGG (with and
// without DISTINCT), FIRST_VALUE and LAST_VALUE with random insertions (some of weight 2)
// and retractions (of rows present, duplicates and NULLs included) and checks every group's
// row against a model of what it holds: its strings in arrival order, a retraction taking out
// the oldest copy of its value. A third of the way the aggregate spills, two thirds of the
// way it is restored from a checkpoint into a new one: the order survives both.
func TestBoolAndStringAggUnderRetractions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ts := []types.T{types.TBigInt, types.TBool, types.TVarchar}
	specs := []AggSpec{{Fn: AggBoolAnd, Arg: 1, In: types.TBool}, {Fn: AggBoolOr, Arg: 1, In: types.TBool},
		{Fn: AggStringAgg, Arg: 2, In: types.TVarchar, Sep: ","}, {Fn: AggStringAgg, Arg: 2, In: types.TVarchar, Sep: "", Distinct: true},
		{Fn: AggFirstValue, Arg: 2, In: types.TVarchar}, {Fn: AggLastValue, Arg: 2, In: types.TVarchar}}
	out := liveCounts{}
	h := &HashAgg{Keys: []int{0}, KeyT: ts[:1], Aggs: specs, Retract: true, Out: Output{Op: out}}
	store := mapStore{}
	h.Attach(store)
	held := map[int64][][]any{}  // group -> rows held (a row of weight 2 twice)
	strs := map[int64][]string{} // group -> its non-NULL strings in arrival order
	for step := 0; step < 300; step++ {
		switch step {
		case 100:
			h.Spill()
		case 200:
			h = restored(t, h, store)
		}
		var rows [][]any
		var ws []int64
		for i := 0; i < 1+rng.IntN(20); i++ {
			g := rng.Int64N(4)
			if rs := held[g]; len(rs) > 0 && rng.IntN(2) == 0 {
				j := rng.IntN(len(rs))
				r := rs[j]
				rows, ws = append(rows, r), append(ws, -1)
				held[g] = slices.Delete(rs, j, j+1)
				if s, ok := r[2].(string); ok {
					k := slices.Index(strs[g], s) // the oldest copy leaves
					strs[g] = slices.Delete(strs[g], k, k+1)
				}
				continue
			}
			row := []any{g, nil, nil}
			if rng.IntN(5) > 0 {
				row[1] = rng.IntN(3) > 0
			}
			if rng.IntN(5) > 0 {
				row[2] = []string{"", "a", "b", "ab", "c", "d"}[rng.IntN(6)]
			}
			w := int64(1 + rng.IntN(4)/3)
			rows, ws = append(rows, row), append(ws, w)
			for ; w > 0; w-- {
				held[g] = append(held[g], row)
				if s, ok := row[2].(string); ok {
					strs[g] = append(strs[g], s)
				}
			}
		}
		b := RowsToBatch(rows, ts)
		b.W = ws
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		want := liveCounts{}
		for g, rs := range held {
			if len(rs) > 0 {
				want[fmt.Sprint(expectedRow(g, rs, strs[g]))] = 1
			}
		}
		if fmt.Sprint(map[string]int64(out)) != fmt.Sprint(map[string]int64(want)) {
			t.Fatalf("step %d: rows %v, want %v", step, out, want)
		}
	}
}

// expectedRow is group g's row over rows rs, whose non-NULL strings are strs in arrival
// order, worked out directly.
func expectedRow(g int64, rs [][]any, strs []string) []any {
	var bools []bool
	for _, r := range rs {
		if r[1] != nil {
			bools = append(bools, r[1].(bool))
		}
	}
	row := []any{g, nil, nil, nil, nil, nil, nil}
	if len(bools) > 0 {
		row[1], row[2] = !slices.Contains(bools, false), slices.Contains(bools, true)
	}
	if len(strs) > 0 {
		var distinct []string
		for _, s := range strs {
			if !slices.Contains(distinct, s) {
				distinct = append(distinct, s)
			}
		}
		row[3], row[4] = strings.Join(strs, ","), strings.Join(distinct, "")
		row[5], row[6] = strs[0], strs[len(strs)-1]
	}
	return row
}

// TestArrivalOrderWithoutRetractions: in a batch query (no retractions) STRING_AGG follows
// arrival order, FIRST_VALUE keeps the first non-NULL value and LAST_VALUE the last.
func TestArrivalOrderWithoutRetractions(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar}
	specs := []AggSpec{{Fn: AggStringAgg, Arg: 1, In: types.TVarchar, Sep: "-"},
		{Fn: AggFirstValue, Arg: 1, In: types.TVarchar}, {Fn: AggLastValue, Arg: 1, In: types.TVarchar}}
	coll := &Collector{Types: []types.T{types.TBigInt, types.TVarchar, types.TVarchar, types.TVarchar}}
	h := &HashAgg{Keys: []int{0}, KeyT: ts[:1], Aggs: specs, Batch: true, Out: Output{Op: coll}}
	for _, rows := range [][][]any{{{int64(1), nil}, {int64(1), "5"}, {int64(2), "3"}}, {{int64(1), "2"}, {int64(1), nil}, {int64(1), "5"}}} {
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: RowsToBatch(rows, ts)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Push(0, Msg{Kind: MsgEnd}); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(coll.Rows())
	if want := "[[1 5-2-5 5 5] [2 3 3 3]]"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// restored is a new aggregate of h's plan restored from h's checkpoint in store.
func restored(t *testing.T, h *HashAgg, store KeyedStore) *HashAgg {
	t.Helper()
	var w StateWriter
	h.SaveState(&w)
	r := &HashAgg{Keys: h.Keys, KeyT: h.KeyT, Aggs: h.Aggs, Retract: h.Retract, Out: h.Out}
	r.Attach(store)
	if err := r.LoadState(&StateReader{Buf: w.Buf}); err != nil {
		t.Fatal(err)
	}
	return r
}
