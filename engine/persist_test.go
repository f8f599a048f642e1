package engine

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestViewRowsPersist drives a view's row store through random insert-only batches, then
// retractions, with a checkpoint (persist, committed to a real store) at random points, and
// after each loads the rows into a fresh store from what was committed: it must hold exactly
// the live rows — through appended segments, the switch to a bag, and log rewrites.
func TestViewRowsPersist(t *testing.T) {
	st, err := state.Open(t.TempDir(), false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := []types.T{types.TBigInt, types.TVarchar}
	v := &viewObj{name: "v"}
	s := newViewStore(v, ts)
	segs := st.Spill(1, segmentsOp)
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string]int64{}
	rewrites := 0
	for step := 0; step < 120; step++ {
		var rows [][]any
		var ws []int64
		n := 1 + rng.IntN(4000)
		for i := 0; i < n; i++ {
			row := []any{rng.Int64N(3000), fmt.Sprint("r", rng.IntN(3))}
			w := int64(1)
			key := fmt.Sprint(row)
			if step > 40 && model[key] > 0 && rng.IntN(2) == 0 {
				w = -1
			}
			model[key] += w
			if model[key] == 0 {
				delete(model, key)
			}
			rows, ws = append(rows, row), append(ws, w)
		}
		b := exec.RowsToBatch(rows, ts)
		for _, w := range ws {
			if w != 1 {
				b.W = ws
				break
			}
		}
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(3) > 0 {
			continue
		}
		before := s.segs
		wb := st.NewBatch()
		w := &exec.StateWriter{}
		_, done := s.persist(w, wb, segs)
		if err := st.Commit(wb); err != nil {
			t.Fatal(err)
		}
		done()
		if s.segs < before {
			rewrites++
		}
		loaded := newViewStore(v, ts)
		if err := loaded.load(&exec.StateReader{Buf: w.Buf}, nil, st.Spill(1, segmentsOp)); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		loaded.each(func(r []any, c int64) { got[fmt.Sprint(r)] += c })
		if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(model)) {
			t.Fatalf("step %d: loaded %d distinct rows, want %d", step, len(got), len(model))
		}
	}
	if !s.consolidated || rewrites < 2 {
		t.Fatalf("consolidated %v, %d log rewrites: the test did not cover them", s.consolidated, rewrites)
	}
}

func sorted(m map[string]int64) []string {
	var out []string
	for k, c := range m {
		out = append(out, fmt.Sprint(k, "×", c))
	}
	sort.Strings(out)
	return out
}
