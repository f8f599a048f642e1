package exec

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestIntTableModel checks intTable against a Go map under random puts, gets and deletes
// over a small key space (long probe runs, wrap-around, many deletions).
func TestIntTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab intTable
	model := map[[4]int64]int32{}
	for step := 0; step < 200_000; step++ {
		k := [4]int64{rng.Int64N(300), rng.Int64N(3), 0, 0}
		switch rng.IntN(3) {
		case 0:
			g := rng.Int32N(1000)
			tab.put(k, g)
			model[k] = g
		case 1:
			tab.del(k)
			delete(model, k)
		}
		g, ok := tab.get(k)
		want, wantOK := model[k]
		if ok != wantOK || g != want {
			t.Fatalf("step %d: get(%v) = %d %v, want %d %v", step, k, g, ok, want, wantOK)
		}
		if tab.n != len(model) {
			t.Fatalf("step %d: %d entries, want %d", step, tab.n, len(model))
		}
	}
	for k, want := range model {
		if g, ok := tab.get(k); !ok || g != want {
			t.Fatalf("get(%v) = %d %v, want %d", k, g, ok, want)
		}
	}
}

// TestWinKeysModel checks a window's key table against a Go map: keys in and out of the
// directly indexed range (the rest found by their col value alone), keys differing from the first one in another column (which must
// take the hash table whatever col says), and reuse after reset.
func TestWinKeysModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, col := range []int{-1, 0, 2} {
		w := &winKeys{col: col}
		for round := 0; round < 5; round++ {
			model := map[[4]int64]int32{}
			for step := 0; step < 20_000; step++ {
				k := [4]int64{int64(round), 7, rng.Int64N(3 * winDenseSpan), 0}
				if rng.IntN(10) == 0 {
					k[1] = rng.Int64N(3) // another window column value: not the ref's
				}
				if col == 0 {
					k[0], k[2] = k[2], k[0]
				}
				if _, ok := model[k]; !ok && rng.IntN(2) == 0 {
					g := rng.Int32N(1 << 20)
					w.put(k, g)
					model[k] = g
				}
				g, ok := w.get(k)
				want, wantOK := model[k]
				if ok != wantOK || g != want {
					t.Fatalf("col %d round %d step %d: get(%v) = %d %v, want %d %v", col, round, step, k, g, ok, want, wantOK)
				}
			}
			for k, want := range model {
				if g, ok := w.get(k); !ok || g != want {
					t.Fatalf("col %d: get(%v) = %d %v, want %d", col, k, g, ok, want)
				}
			}
			if col >= 0 && (w.intTable.n == len(model) || w.far.n == 0) {
				t.Fatalf("col %d: %d of %d keys in the hash table of whole keys, %d found by col alone far from the first",
					col, w.intTable.n, len(model), w.far.n)
			}
			w.reset()
		}
	}
}

// TestWindowTableReusedForItsWindow: a window's table, emptied and reused when the same
// window comes back (rows an aggregate takes with no window assignment in front to drop them
// as late), finds each key in one place whether the batch comes in runs or row by row (a
// NULL key sends a batch row by row): one group per key.
func TestWindowTableReusedForItsWindow(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TBigInt, types.TBigInt}
	h := &HashAgg{Keys: []int{0, 1, 2}, KeyT: ts, Aggs: []AggSpec{{Fn: AggCountStar}},
		Retract: true, Windowed: true, WindowStart: 0, WindowEnd: 1, Out: Output{Op: liveCounts{}}}
	push := func(m Msg) {
		if err := h.Push(0, m); err != nil {
			t.Fatal(err)
		}
	}
	row := []any{int64(0), int64(10), int64(1)}
	push(Msg{Kind: MsgBatch, Batch: RowsToBatch([][]any{row}, ts)})
	push(Msg{Kind: MsgWatermark, Watermark: 9}) // the window completes: its table is emptied for reuse
	push(Msg{Kind: MsgBatch, Batch: RowsToBatch([][]any{row}, ts)})
	push(Msg{Kind: MsgBatch, Batch: RowsToBatch([][]any{row, {int64(0), int64(10), nil}}, ts)})
	n := 0
	for g := range h.counts {
		if h.inUse[g] && h.keyRows[int32(g)] == nil && h.ints[g*3+2] == 1 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d groups for key (0, 10, 1), want 1", n)
	}
}

// mapStore is a KeyedStore in a map.
type mapStore map[string]string

func (m mapStore) Get(k []byte) ([]byte, bool, error) {
	v, ok := m[string(k)]
	return []byte(v), ok, nil
}
func (m mapStore) Put(k, v []byte) { m[string(k)] = string(v) }
func (m mapStore) Delete(k []byte) { delete(m, string(k)) }
func (m mapStore) Each(fn func(k, v []byte) error) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := fn([]byte(k), []byte(m[k])); err != nil {
			return err
		}
	}
	return nil
}

// TestWindowCheckpointListsSlotsOnce: between checkpoints, windows open and complete and
// their groups' slots are taken again; each slot is listed for the checkpoint once, however
// often it is reused (the list stays bounded by the slots, not the groups made), and after
// each checkpoint the store holds exactly the open windows' groups, with their counts.
func TestWindowCheckpointListsSlotsOnce(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TBigInt, types.TBigInt}
	store := mapStore{}
	h := &HashAgg{Keys: []int{0, 1, 2}, KeyT: ts, Aggs: []AggSpec{{Fn: AggCountStar}},
		Retract: true, Windowed: true, WindowStart: 0, WindowEnd: 1, Out: Output{Op: liveCounts{}}}
	h.Attach(store)
	rng := rand.New(rand.NewPCG(3, 9))
	want := map[string]int64{} // the open windows' groups: "start end key" -> count
	for win := int64(0); win < 60; win++ {
		start, end := win*10, win*10+10
		var rows [][]any
		for range 40 {
			k := rng.Int64N(30)
			rows = append(rows, []any{start, end, k})
			want[fmt.Sprint(start, end, k)]++
		}
		if err := h.Push(0, Msg{Kind: MsgBatch, Batch: RowsToBatch(rows, ts)}); err != nil {
			t.Fatal(err)
		}
		if err := h.Push(0, Msg{Kind: MsgWatermark, Watermark: end - 11}); err != nil { // the window before completes
			t.Fatal(err)
		}
		for k := range want {
			var s, e, key int64
			fmt.Sscan(k, &s, &e, &key)
			if e-1 <= end-11 {
				delete(want, k)
			}
		}
		if win%7 != 6 {
			continue
		}
		if len(h.dirtyGs) > len(h.counts) {
			t.Fatalf("window %d: %d slots listed for the checkpoint, %d slots", win, len(h.dirtyGs), len(h.counts))
		}
		h.SaveState(&StateWriter{})
		got := map[string]int64{}
		for kb, v := range store {
			key, err := DecodeKey([]byte(kb), 3)
			if err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprint(key...)] = (&StateReader{Buf: []byte(v)}).Int()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("window %d: the store holds %v, want %v", win, got, want)
		}
	}
}
