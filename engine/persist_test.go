package engine

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestViewRowsPersist drives a view's row store through random insert-only batches, then
// retractions, with a checkpoint (persist, committed to a real store) at random points, and
// after each loads the rows into a fresh store from what was committed: it must hold exactly
// the live rows — through logged additions and retractions, compactions in memory, log
// rewrites, and batches added whole (weights 1 and -1) or in part (a weight of 2).
func TestViewRowsPersist(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar}
	st, v, s, segs := newTestViewStore(t, ts)
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string]int64{}
	rewrites, subLogs, compactions := 0, 0, 0
	for step := 0; step < 160; step++ {
		var rows [][]any
		var ws []int64
		n := 1 + rng.IntN(4000)
		for i := 0; i < n; i++ {
			row := []any{rng.Int64N(3000), fmt.Sprint("r", rng.IntN(3))}
			w := int64(1)
			key := fmt.Sprint(row)
			// Retractions start at step 40, and outnumber insertions from step 80.
			if step > 40 && model[key] > 0 && (rng.IntN(2) == 0 || step > 80 && rng.IntN(10) < 8) {
				w = -1
			} else if step%5 == 3 && rng.IntN(100) == 0 {
				w = 2 // a batch with a weight above 1 takes the copying path
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
		retracted := s.retracted
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		if s.retracted < retracted {
			compactions++
		}
		if rng.IntN(3) > 0 || step > 80 && rng.IntN(4) > 0 {
			continue // from step 80, retractions pile up between checkpoints
		}
		before, subs := s.segs, s.nSubs
		buf := persistRows(t, st, s, segs)
		if s.segs < before {
			rewrites++
		} else if subs > 0 {
			subLogs++
		}
		loaded := newViewStore(v, ts)
		if err := loaded.load(&exec.StateReader{Buf: buf}, nil, st.Spill(1, segmentsOp)); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		loaded.each(func(r []any, c int64) { got[fmt.Sprint(r)] += c })
		if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(model)) || loaded.count() != sum(model) {
			t.Fatalf("step %d: loaded %d distinct rows (%d in all), want %d (%d)", step, len(got), loaded.count(), len(model), sum(model))
		}
	}
	got := map[string]int64{}
	s.each(func(r []any, c int64) { got[fmt.Sprint(r)] += c })
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(model)) || s.count() != sum(model) {
		t.Fatalf("the store holds %d distinct rows (%d in all), want %d (%d)", len(got), s.count(), len(model), sum(model))
	}
	if rewrites < 2 || subLogs < 2 || compactions < 2 {
		t.Fatalf("%d log rewrites, %d logs of retractions, %d compactions: the test did not cover them", rewrites, subLogs, compactions)
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

// TestViewRowsRewriteKeepsWaitingRetractions: a retraction that arrived before its row's
// insertion waits in the store's minus; a checkpoint that rewrites the log keeps it, so once
// the insertion arrives a restored view equals the uninterrupted one.
func TestViewRowsRewriteKeepsWaitingRetractions(t *testing.T) {
	ts := []types.T{types.TBigInt}
	st, v, s, segs := newTestViewStore(t, ts)
	push := func(s *viewStore, from, n, w int64) {
		rows := make([][]any, n)
		ws := make([]int64, n)
		for i := range rows {
			rows[i], ws[i] = []any{from + int64(i)}, w
		}
		b := exec.RowsToBatch(rows, ts)
		if w != 1 {
			b.W = ws
		}
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
	}
	ckpt := func() []byte { return persistRows(t, st, s, segs) }
	push(s, -1, 1, -1)   // a retraction ahead of its insertion: waits in minus
	push(s, 0, 5000, 1)  // other rows
	ckpt()               // appended: A(5000), D(1)
	push(s, 0, 5000, -1) // retract them: the log now outgrows the rows
	buf := ckpt()        // rewrite
	loaded := newViewStore(v, ts)
	if err := loaded.load(&exec.StateReader{Buf: buf}, nil, st.Spill(1, segmentsOp)); err != nil {
		t.Fatal(err)
	}
	push(s, -1, 1, 1) // the insertion arrives: cancels the waiting retraction
	push(loaded, -1, 1, 1)
	if s.count() != loaded.count() {
		t.Fatalf("after the insertion: uninterrupted view holds %d rows, restored one %d", s.count(), loaded.count())
	}
}

// persistRows checkpoints a view's rows into st (what a checkpoint does for them) and returns
// the record that load reads back.
// newTestViewStore opens a store for the test's life and returns an empty view row store
// of types ts, with the view and the segments it persists to.
func newTestViewStore(t *testing.T, ts []types.T) (*state.Store, *viewObj, *viewStore, *state.Spill) {
	t.Helper()
	st, err := state.Open(t.TempDir(), false, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v := &viewObj{name: "v"}
	return st, v, newViewStore(v, ts), st.Spill(1, segmentsOp)
}

func persistRows(t *testing.T, st *state.Store, s *viewStore, segs *state.Spill) []byte {
	t.Helper()
	wb := st.NewBatch()
	w := &exec.StateWriter{}
	_, done := s.persist(w, wb, segs)
	if err := st.Commit(wb); err != nil {
		t.Fatal(err)
	}
	done()
	return w.Buf
}

// TestViewRowsSegmentKinds: a checkpoint writes a batch of rows in Arrow IPC (segCols) and
// one whose column is not of its type's physical Arrow type (an all-NULL array.Null) as row
// encodings (segAdd); a restore reads both.
func TestViewRowsSegmentKinds(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar}
	st, v, s, segs := newTestViewStore(t, ts)
	ipcRows := exec.RowsToBatch([][]any{{int64(1), "a"}, {int64(2), nil}}, ts)
	nullCol := &exec.Batch{N: 2, Cols: []arrow.Array{exec.NewInt64([]int64{3, 4}, nil), array.NewNull(2)}}
	for _, b := range []*exec.Batch{ipcRows, nullCol} {
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
	}
	buf := persistRows(t, st, s, segs)
	var kinds []byte
	if err := segs.Each(func(_, seg []byte) error { kinds = append(kinds, seg[0]); return nil }); err != nil {
		t.Fatal(err)
	}
	if string(kinds) != string([]byte{segCols, segAdd}) {
		t.Fatalf("segment kinds %q, want %q", kinds, []byte{segCols, segAdd})
	}
	loaded := newViewStore(v, ts)
	if err := loaded.load(&exec.StateReader{Buf: buf}, nil, st.Spill(1, segmentsOp)); err != nil {
		t.Fatal(err)
	}
	var got []string
	loaded.each(func(r []any, c int64) { got = append(got, fmt.Sprint(r, c)) })
	sort.Strings(got)
	if want := "[[1 a] 1 [2 <nil>] 1 [3 <nil>] 1 [4 <nil>] 1]"; fmt.Sprint(got) != want {
		t.Fatalf("restored rows %v, want %s", got, want)
	}
}

// TestViewRowsLargeVersions: a view of one row that changes every batch and grows (a
// STRING_AGG over one group) keeps, in memory and in its checkpointed log, a bounded multiple
// of the row's bytes — not a thousand of its versions, which a count of rows alone allowed
// (a 20k-row group's checkpoint wrote 172 MB); a restore still finds the row.
func TestViewRowsLargeVersions(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar}
	st, v, s, segs := newTestViewStore(t, ts)
	var prev []any
	for step := 1; step <= 600; step++ {
		row := []any{int64(step), strings.Repeat("x", 1000*step)}
		rows, ws := [][]any{row}, []int64{1}
		if prev != nil {
			rows, ws = [][]any{prev, row}, []int64{-1, 1}
		}
		b := exec.RowsToBatch(rows, ts)
		b.W = ws
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		prev = row
		if step%5 == 0 {
			persistRows(t, st, s, segs)
		}
		rowBytes := int64(1000 * step)
		if limit := 4*rowBytes + 4<<20; s.bytes > limit {
			t.Fatalf("step %d: %d bytes of versions kept in memory for a row of %d", step, s.bytes, rowBytes)
		}
		if limit := 12*rowBytes + 4<<20; s.logBytes > limit {
			t.Fatalf("step %d: a log of %d bytes for a row of %d", step, s.logBytes, rowBytes)
		}
	}
	buf := persistRows(t, st, s, segs)
	loaded := newViewStore(v, ts)
	if err := loaded.load(&exec.StateReader{Buf: buf}, nil, st.Spill(1, segmentsOp)); err != nil {
		t.Fatal(err)
	}
	var got []string
	loaded.each(func(r []any, c int64) { got = append(got, fmt.Sprint(r[0], len(r[1].(string)), c)) })
	if fmt.Sprint(got) != "[600 600000 1]" {
		t.Fatalf("restored rows %v, want the last version alone", got)
	}
}
