// Package window implements the window table functions of SPEC.md §3 — TUMBLE, HOP,
// CUMULATE and SESSION — and their event-time semantics: window assignment, lateness against
// the watermark, and the late-row side output.
//
// Windows are epoch-aligned in UTC and half-open [window_start, window_end), with
// window_time = window_end - 1 ms. A window is complete when the watermark W >= window_time.
//
// Invariant: a row is applied only to windows that are not complete when it arrives (judged
// against the watermark in force just before the row); a row all of whose windows are
// complete is late: it is reported to the Late sink and applied nowhere. The same holds for
// a retraction (a DELETE or UPDATE upstream): a complete window is final. A row whose time is
// NULL (possible over a view: outer-join padding, a CASE) has no window: it is reported to
// Late too, with no event time (NoTime), so no row vanishes unseen.
package window

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Spec is a window function with its interval arguments (milliseconds).
type Spec struct {
	Kind sql.WindowKind
	Args []int64
}

// Windows appends to dst the [start, end) windows that contain ts (SESSION excluded).
func (s Spec) Windows(dst [][2]int64, ts int64) [][2]int64 {
	switch s.Kind {
	case sql.Tumble:
		size := s.Args[0]
		start := types.FloorDiv(ts, size) * size
		return append(dst, [2]int64{start, start + size})
	case sql.Hop:
		// size/slide windows (size is a multiple of slide), counted rather than bounded by
		// ts - size or an end past start + size, which overflow int64 for huge intervals.
		slide, size := s.Args[0], s.Args[1]
		last := types.FloorDiv(ts, slide) * slide
		for k := int64(0); k < size/slide; k++ {
			start := last - k*slide
			dst = append(dst, [2]int64{start, start + size})
		}
		return dst
	case sql.Cumulate:
		step, size := s.Args[0], s.Args[1]
		start := types.FloorDiv(ts, size) * size
		for k := int64(1); k <= size/step; k++ {
			if end := start + k*step; end > ts {
				dst = append(dst, [2]int64{start, end})
			}
		}
		return dst
	}
	return dst
}

// NoTime is the EventTime of a LateRow whose time is NULL.
const NoTime = exec.NoWatermark

// LateRow describes one late row for the late-row side output.
type LateRow struct {
	EventTime, Watermark int64
	Row                  []any
}

// LateSink receives late rows.
type LateSink func(LateRow)

// Assign appends window_start, window_end and window_time to its input rows, one output row
// per window (TUMBLE, HOP, CUMULATE). When a batch carries per-row watermarks (a maintained
// view), windows complete before the row are skipped, and rows left with none are late.
type Assign struct {
	Spec    Spec
	TimeCol int
	Types   []types.T // input column types
	Late    LateSink
	Out     exec.Output
	// Reuse is set when no operator downstream keeps a column past Push (the rows go to an
	// aggregate through filters and projections): the window columns' memory is then
	// reused from batch to batch.
	Reuse bool
	// RunsOnly is set when the window columns are read only as an aggregate's window_start
	// and window_end keys, through projections of columns: TUMBLE's fast path then passes
	// the windows as the batch's Runs, and the columns without values (exec.Batch.Runs).
	RunsOnly bool
	// InOrder is set when the aggregate's results depend on the order of its rows (exec's
	// AggSpec.InArrivalOrder): a row's windows then follow each other, row by row, never lane
	// by lane (byLane, hop, hopRuns), so that every window gets its rows in arrival order.
	InOrder bool
	slab    []int64
	buf     [][2]int64
	// w is the last watermark received: the lateness reference for rows that carry none
	// (the output of a temporal join or a ranking). It is state (SaveState): restored
	// without it, such a row replayed before the first watermark after the checkpoint (a
	// temporal join's retraction of an emitted probe, due at that watermark) would be judged
	// against none, not late, and lost in a window already freed.
	w int64
	// seen is set once a watermark has arrived (w is meaningful).
	seen bool
}

var (
	_ exec.Operator = (*Assign)(nil)
	_ exec.Stateful = (*Assign)(nil)
)

// SaveState implements exec.Stateful: the last watermark received.
func (a *Assign) SaveState(w *exec.StateWriter) {
	w.Bool(a.seen)
	w.Int(a.w)
}

// LoadState implements exec.Stateful.
func (a *Assign) LoadState(r *exec.StateReader) error {
	a.seen, a.w = r.Bool(), r.Int()
	return r.Err()
}

// Push implements exec.Operator.
func (a *Assign) Push(_ int, m exec.Msg) error {
	if m.Kind == exec.MsgWatermark {
		if !a.seen || m.Watermark > a.w {
			a.w, a.seen = m.Watermark, true
		}
	}
	if m.Kind != exec.MsgBatch {
		return a.Out.Emit(m)
	}
	b := m.Batch
	if per := a.windowsPerRow(); b.N > 1 && b.N*per > maxAssigned {
		// A batch takes at most maxAssigned window rows: memory stays bounded however many
		// windows a row is in (rows carry their watermarks, so cutting changes no result).
		step := max(1, maxAssigned/per)
		for lo := 0; lo < b.N; lo += step {
			if err := a.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b.Slice(lo, min(lo+step, b.N))}); err != nil {
				return err
			}
		}
		return nil
	}
	tcol := b.Cols[a.TimeCol]
	ts := exec.Int64s(tcol)
	if a.Spec.Kind == sql.Tumble && tcol.NullN() == 0 {
		if out, ok := a.tumble(b, ts); ok {
			return a.Out.EmitBatch(out)
		}
	}
	laned := a.Reuse && !a.InOrder // the output may go lane by lane
	if a.Spec.Kind == sql.Hop && laned && tcol.NullN() == 0 {
		if a.RunsOnly {
			if out, ok := a.hopRuns(b, ts); ok {
				return a.Out.EmitBatch(out)
			}
		}
		if out, ok := a.hop(b, ts); ok {
			return a.Out.EmitBatch(out)
		}
	}
	perRow := a.windowsPerRow()
	idx := make([]int32, 0, b.N*perRow)
	starts, ends := make([]int64, 0, b.N*perRow), make([]int64, 0, b.N*perRow)
	var lanes []int32 // when laned: each output row's place among its row's windows
	for i := 0; i < b.N; i++ {
		wm := a.rowWatermark(b, i)
		if tcol.IsNull(i) {
			if a.Late != nil {
				a.Late(LateRow{EventTime: NoTime, Watermark: wm, Row: b.Row(i)})
			}
			continue
		}
		a.buf = a.Spec.Windows(a.buf[:0], ts[i])
		applied := false
		for k, w := range a.buf {
			if w[1]-1 <= wm {
				continue // complete before this row arrived
			}
			applied = true
			idx = append(idx, int32(i))
			starts = append(starts, w[0])
			ends = append(ends, w[1])
			if laned && perRow > 1 {
				lanes = append(lanes, int32(k))
			}
		}
		if !applied && a.Late != nil { // an insertion or a retraction: either is a late change
			a.Late(LateRow{EventTime: ts[i], Watermark: wm, Row: b.Row(i)})
		}
	}
	if len(idx) == 0 {
		return nil
	}
	if lanes != nil {
		idx, starts, ends = byLane(lanes, perRow, idx, starts, ends)
	}
	out := exec.Take(b, idx, a.Types)
	wt := make([]int64, len(ends))
	for i, e := range ends {
		wt[i] = e - 1
	}
	out.Cols = append(out.Cols, exec.NewInt64(starts, nil), exec.NewInt64(ends, nil), exec.NewInt64(wt, nil))
	return a.Out.EmitBatch(out)
}

// byLane reorders the output rows lane by lane — every row's newest window, then every row's
// second newest, ... — keeping the input order within a lane. An aggregate then sees long
// runs of one window (consecutive rows share their k-th window) instead of a row's windows in
// turn. It is done only for an aggregate (Reuse) whose result does not depend on row order
// (not InOrder; it stamps its changes with the least and greatest watermark of a group's
// rows, not the first and last row's).
func byLane(lanes []int32, n int, idx []int32, starts, ends []int64) ([]int32, []int64, []int64) {
	at := make([]int, n+1) // where each lane starts in the output
	for _, k := range lanes {
		at[k+1]++
	}
	for k := 1; k <= n; k++ {
		at[k] += at[k-1]
	}
	idx2, starts2, ends2 := make([]int32, len(idx)), make([]int64, len(idx)), make([]int64, len(idx))
	for j, k := range lanes {
		p := at[k]
		at[k]++
		idx2[p], starts2[p], ends2[p] = idx[j], starts[j], ends[j]
	}
	return idx2, starts2, ends2
}

// hop is the fast path of HOP for an aggregate (Reuse, not InOrder) when no row of b is late:
// the output is in lanes (see byLane), each lane's windows computed once per run of rows in
// one slide. A row skips the windows complete before it, as in Push.
func (a *Assign) hop(b *exec.Batch, ts []int64) (*exec.Batch, bool) {
	slide, size, n := a.Spec.Args[0], a.Spec.Args[1], b.N
	lanes := int(size / slide)
	ts = ts[:n]
	idx := make([]int32, 0, n*lanes)
	starts := make([]int64, 0, n*lanes)
	for k := 0; k < lanes; k++ {
		back := int64(k) * slide
		s := types.FloorDiv(ts[0], slide) * slide // the row's slide, its newest window's start
		for i, t := range ts {
			if t < s || uint64(t-s) >= uint64(slide) {
				s = types.FloorDiv(t, slide) * slide
			}
			if start := s - back; start+size-1 > a.rowWatermark(b, i) {
				idx = append(idx, int32(i))
				starts = append(starts, start)
			} else if k == 0 {
				return nil, false // its newest window is complete: late, for the general path
			}
		}
	}
	m := len(idx)
	slab := a.buffer((len(b.Cols) + 2) * m)
	out := &exec.Batch{N: m, Cols: make([]arrow.Array, 0, len(b.Cols)+3)}
	for c, col := range b.Cols {
		x, ok := col.(*array.Int64)
		if !ok || col.NullN() > 0 {
			out.Cols = append(out.Cols, exec.TakeArray(col, idx, a.Types[c]))
			continue
		}
		vals, dst := x.Int64Values(), slab[c*m:(c+1)*m:(c+1)*m]
		for i, j := range idx {
			dst[i] = vals[j]
		}
		out.Cols = append(out.Cols, exec.NewInt64(dst, nil))
	}
	ends, wt := slab[len(b.Cols)*m:(len(b.Cols)+1)*m:(len(b.Cols)+1)*m], slab[(len(b.Cols)+1)*m:]
	for i, st := range starts {
		ends[i], wt[i] = st+size, st+size-1
	}
	out.Cols = append(out.Cols, exec.NewInt64(starts, nil), exec.NewInt64(ends, nil), exec.NewInt64(wt, nil))
	out.W, out.WM = takeInt64s(b.W, idx), takeInt64s(b.WM, idx)
	return out, true
}

// maxAssigned bounds the window rows (a row per row and window) of one batch.
const maxAssigned = 1 << 20

// windowsPerRow is the most windows a row is in.
func (a *Assign) windowsPerRow() int {
	if a.Spec.Kind == sql.Tumble {
		return 1
	}
	return int(a.Spec.Args[1] / a.Spec.Args[0])
}

// hopRuns is hop for RunsOnly when every row is in all its windows (none complete before
// it): the rows are not copied once per window but passed on once, with their windows as
// runs in lanes (exec.Batch.Lanes: lane k holds every row's k-th newest window).
func (a *Assign) hopRuns(b *exec.Batch, ts []int64) (*exec.Batch, bool) {
	slide, size, n := a.Spec.Args[0], a.Spec.Args[1], b.N
	lanes := int(size / slide)
	oldest := int64(lanes-1) * slide // back from a row's newest window to its oldest
	ts = ts[:n]
	// The runs of rows in one slide (the end of each, and its newest window's start). A row's
	// oldest window completes first: if no run's is complete before one of its rows, none of
	// the runs' windows is, in any lane; else the path that skips them takes the batch.
	var ends []int
	var slides []int64
	for i := 0; i < n; {
		s, j, w := a.run(b, ts, i, slide)
		if s-oldest+size-1 <= w {
			return nil, false
		}
		ends, slides = append(ends, j), append(slides, s)
		i = j
	}
	runs := make([]exec.WindowRun, 0, lanes*len(ends))
	for k := range lanes {
		back := int64(k) * slide
		for r, j := range ends {
			start := slides[r] - back
			runs = append(runs, exec.WindowRun{To: k*n + j, Start: start, End: start + size})
		}
	}
	cols := make([]arrow.Array, 0, len(b.Cols)+3)
	cols = append(cols, b.Cols...)
	none := array.NewNull(n)
	cols = append(cols, none, none, none)
	return &exec.Batch{Cols: cols, N: n, W: b.W, WM: b.WM, Runs: runs, Lanes: lanes}, true
}

// takeInt64s gathers vals at idx (nil stays nil).
func takeInt64s(vals []int64, idx []int32) []int64 {
	if vals == nil {
		return nil
	}
	out := make([]int64, len(idx))
	for i, j := range idx {
		out[i] = vals[j]
	}
	return out
}

// buffer returns n int64s for window columns: with Reuse, the same memory batch after batch.
func (a *Assign) buffer(n int) []int64 {
	if cap(a.slab) >= n {
		return a.slab[:n]
	}
	slab := make([]int64, n)
	if a.Reuse {
		a.slab = slab
	}
	return slab
}

// tumble is the fast path of TUMBLE when no row of b is late: one window per row, so the
// input columns pass through and only the three window columns are computed.
//
// Rows mostly come in time order, so the window is computed once per run of rows that share
// it; the three columns share one allocation. With RunsOnly the runs are the output, as
// the batch's Runs, and the columns are left without values.
func (a *Assign) tumble(b *exec.Batch, ts []int64) (*exec.Batch, bool) {
	size, n := a.Spec.Args[0], b.N
	var starts, ends, wt []int64
	var runs []exec.WindowRun
	if a.RunsOnly {
		runs = make([]exec.WindowRun, 0, 8) // not nil, even for no rows
	} else {
		slab := a.buffer(3 * n)
		starts, ends, wt = slab[:n:n], slab[n:2*n:2*n], slab[2*n:3*n:3*n]
	}
	ts = ts[:n]
	for i := 0; i < n; {
		// The run [i, j) is in one window: late if the window is complete by any of its rows'
		// watermarks.
		s, j, w := a.run(b, ts, i, size)
		if s+size-1 <= w {
			return nil, false // a late row: take the general path, which reports it
		}
		if a.RunsOnly {
			runs = append(runs, exec.WindowRun{To: j, Start: s, End: s + size})
		} else {
			fill(starts[i:j], s)
			fill(ends[i:j], s+size)
			fill(wt[i:j], s+size-1)
		}
		i = j
	}
	cols := make([]arrow.Array, 0, len(b.Cols)+3)
	cols = append(cols, b.Cols...)
	if a.RunsOnly {
		none := array.NewNull(n)
		cols = append(cols, none, none, none)
	} else {
		cols = append(cols, exec.NewInt64(starts, nil), exec.NewInt64(ends, nil), exec.NewInt64(wt, nil))
	}
	return &exec.Batch{Cols: cols, N: b.N, W: b.W, WM: b.WM, Runs: runs}, true
}

// run is the run of rows from i whose times share one step of width (a TUMBLE window, a HOP
// slide): its start s, its end j, and the greatest watermark its rows are judged against.
func (a *Assign) run(b *exec.Batch, ts []int64, i int, width int64) (s int64, j int, w int64) {
	s = types.FloorDiv(ts[i], width) * width
	j = i + 1
	for j < len(ts) && ts[j] >= s && uint64(ts[j]-s) < uint64(width) { // ts[j] >= s: exact unsigned
		j++
	}
	w = a.rowWatermark(b, i)
	if b.WM != nil {
		for _, x := range b.WM[i+1 : j] {
			w = max(w, x)
		}
	}
	return s, j, w
}

// fill sets every element of xs to v.
func fill(xs []int64, v int64) {
	for i := range xs {
		xs[i] = v
	}
}

// rowWatermark is the watermark row i is judged against: the one it carries, else the last
// watermark the operator received.
func (a *Assign) rowWatermark(b *exec.Batch, i int) int64 {
	if b.WM != nil {
		return b.WM[i]
	}
	if a.seen {
		return a.w
	}
	return exec.NoWatermark
}
