package exec

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// AggFunc is an aggregate function.
type AggFunc uint8

// Aggregate functions.
const (
	AggCountStar AggFunc = iota
	AggCount
	AggSum
	AggAvg
	AggMin
	AggMax
	AggVarPop
	AggVarSamp
	AggStddevPop
	AggStddevSamp
	AggBoolAnd
	AggBoolOr
	AggStringAgg
	AggFirstValue
	AggLastValue
	AggAnyValue
)

var aggNames = [...]string{"count(*)", "count", "sum", "avg", "min", "max", "var_pop", "var_samp", "stddev_pop", "stddev_samp",
	"bool_and", "bool_or", "string_agg", "first_value", "last_value", "any_value"}

func (f AggFunc) String() string { return aggNames[f] }

// AggSpec is one aggregate call over input column Arg.
type AggSpec struct {
	Fn       AggFunc
	Arg      int // input column; unused for COUNT(*)
	Distinct bool
	In       types.T
	Pos      Pos    // where the aggregate stands in the user's text: its errors say so
	Sep      string // STRING_AGG's separator
}

// InArrivalOrder reports whether the aggregate's result depends on the order its rows arrive
// in (STRING_AGG, FIRST_VALUE, LAST_VALUE: see arrivalAcc), so that no operator before it
// may reorder them.
func (a AggSpec) InArrivalOrder() bool {
	return a.Fn == AggStringAgg || a.Fn == AggFirstValue || a.Fn == AggLastValue
}

// ResultType is the type of the aggregate's result (SPEC.md §2: COUNT and SUM of integers
// are BIGINT, AVG is DOUBLE; variances and standard deviations are DOUBLE; BOOL_AND and
// BOOL_OR are BOOLEAN, STRING_AGG VARCHAR).
func (a AggSpec) ResultType() types.T {
	switch a.Fn {
	case AggCountStar, AggCount:
		return types.TBigInt
	case AggBoolAnd, AggBoolOr:
		return types.TBool
	case AggStringAgg:
		return types.TVarchar
	case AggAvg, AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		return types.TDouble
	case AggSum:
		switch a.In.Kind {
		case types.Int, types.BigInt, types.Null:
			return types.TBigInt
		case types.Decimal:
			return types.DecimalOf(types.MaxDecimalPrecision, int(a.In.Scale))
		}
		return a.In
	}
	return a.In
}

// HashAgg groups its input by the key columns and maintains the aggregates of each group
// under insertions and retractions. In batch mode (Batch true) it emits every group at End;
// otherwise it emits, after each input batch, a retraction of each changed group's old row
// and an insertion of its new one. With no key columns there is exactly one group, whose
// row exists even over no input (COUNT 0, other aggregates NULL).
type HashAgg struct {
	Keys  []int
	KeyT  []types.T
	Aggs  []AggSpec
	Batch bool
	// Retract is set when the input can retract rows (MIN/MAX then keep multisets).
	Retract bool
	// Windowed marks a windowed aggregate: key WindowEnd holds window_end, and a group is
	// complete, and its state freed, once a watermark W >= window_end - 1 arrives.
	Windowed  bool
	WindowEnd int
	// WindowStart is the key holding window_start (-1: none).
	WindowStart int
	// EmitOnClose emits each group once, when it is complete, instead of on every change.
	EmitOnClose bool
	// TTL, when > 0, drops a group (retracting its row) once the watermark passes the
	// watermark that followed its last change by more than TTL ms (ttl.go): state for unbounded
	// keys stays bounded, at the price of forgetting idle keys (results change, as with
	// Flink's TTL). It needs group keys (the one row of a global aggregate stays) and is for
	// non-windowed aggregates (a window's groups are freed by the watermark).
	TTL int64
	// Always lists the keys of groups that exist even over no input, as a global aggregate's
	// one group does: the empty grouping set's (GROUP BY GROUPING SETS (..., ()), ROLLUP),
	// its keys NULL but the set's number. Their rows are there from the start; the TTL does
	// not forget them, and the aggregate does not spill.
	Always [][]any
	// Errs, when set, receives a result's data error (a SUM out of range, whose result is
	// then NULL) instead of it failing the aggregate: a view goes on, and its rows stay
	// consistent with the groups (the SUM comes back when retractions bring it into range).
	Errs    RowErrors
	Out     Output
	started bool
	outErr  error // a result's data error, without Errs: Push returns it
	// alwaysGs are the groups of Always (made at the first push, or found restored).
	alwaysGs []int32

	groups  map[string]int32
	intKeys map[int64]int32
	arrKeys winKeys
	// wins replaces arrKeys in a windowed aggregate: a table per window (by window_end), so a
	// lookup touches a small table and a complete window's keys go at once; lastWin caches
	// the last windows used, spareWins keeps complete windows' tables for reuse (emptied
	// when reused, keyTable);
	// userKey is the one key that is not a window column (-1: none, or several).
	wins      map[int64]*winKeys
	lastWin   []winTable
	spareWins []*winKeys
	userKey   int
	// dense indexes one-column int keys in a narrow range directly (group id + 1).
	dense     []int32
	denseBase int64
	denseOff  bool
	// A group's key is kept boxed in keyRows (found through groups), or, when it is 1 to 4
	// int64 columns without NULLs, unboxed in ints, len(Keys) values per group (found through dense,
	// intKeys or arrKeys). inUse marks the slots that hold a group.
	keyRows map[int32][]any
	ints    []int64
	inUse   []bool
	counts  []int64
	accs    []accumulator
	keyBuf  []byte
	gids    []int32
	touched []int32
	mark    []bool
	// wmFirst and wmLast are, for the groups a timed batch (Batch.WM) touches, the least and
	// the greatest watermark before its rows in them — the first and the last row's, as
	// watermarks never fall in acceptance order, whatever order the rows came in (HOP's
	// lanes): a change's old row is stamped with the first, its new row with the last, as if
	// the rows had come one by one.
	wmFirst, wmLast []int64
	free            []int32
	// byEnd lists a windowed aggregate's groups by window_end; lastEnd caches the list
	// used last (nil after a window is freed).
	byEnd   map[int64]*[]int32
	lastEnd *windowGroups
	// spareEnds keeps complete windows' lists of byEnd, emptied, for reuse; done is fire's
	// list of the groups it frees, kept for its capacity.
	spareEnds []*[]int32
	done      []int32
	clk       clocks // TTL: the groups' clocks, queued in due
	due       ttlQueue
	// store holds the groups as of the last checkpoint (spill.go): dirty marks the slots
	// listed in dirtyGs, those of groups changed since (a slot freed and taken again stays
	// listed, once), stored the groups it holds, gone the keys of stored groups
	// released since. Once spilled, only the groups a batch uses are resident; spillErr is a
	// store read that failed.
	store    KeyedStore
	dirty    []bool
	dirtyGs  []int32
	stored   []bool
	gone     [][]byte
	spilled  bool
	spillErr error
	// ahead sums the slots assignWindowRuns reads ahead, only so that the reads happen.
	ahead int64
}

var _ Operator = (*HashAgg)(nil)

// Borrows implements Borrower: an aggregate copies what it keeps of its input rows (keys
// into ints or boxed values, aggregates into accumulators), and emits rows of its own.
func (h *HashAgg) Borrows() bool { return true }

func (h *HashAgg) init() {
	h.groups = map[string]int32{}
	h.intKeys = map[int64]int32{}
	h.arrKeys = winKeys{col: -1}
	h.wins = map[int64]*winKeys{}
	h.userKey = -1
	if h.Windowed && len(h.Keys) == 3 && h.WindowStart >= 0 {
		h.userKey = 3 - h.WindowStart - h.WindowEnd // the key that is neither
	}
	h.keyRows = map[int32][]any{}
	h.accs = make([]accumulator, len(h.Aggs))
	for i, a := range h.Aggs {
		h.accs[i] = newAccumulator(a, h.Retract, &h.counts)
	}
	if h.Windowed {
		h.byEnd, h.lastEnd = map[int64]*[]int32{}, nil
	}
	if len(h.Keys) == 0 {
		h.TTL = 0
		h.newGroup(nil)
	}
}

// slot takes a free group slot, or a new one, with empty state.
func (h *HashAgg) slot() int32 {
	var g int32
	if n := len(h.free); n > 0 {
		g = h.free[n-1]
		h.free = h.free[:n-1]
		h.counts[g] = 0
		for _, a := range h.accs {
			a.reset(g)
		}
		h.stored[g] = false // dirty stays: g may still be listed in dirtyGs
	} else {
		g = int32(len(h.counts))
		h.ints = append(h.ints, make([]int64, len(h.Keys))...)
		h.inUse = append(h.inUse, false)
		h.counts = append(h.counts, 0)
		h.mark = append(h.mark, false)
		h.wmFirst = append(h.wmFirst, NoWatermark)
		h.wmLast = append(h.wmLast, NoWatermark)
		h.dirty = append(h.dirty, false)
		h.stored = append(h.stored, false)
		if h.TTL > 0 {
			h.clk.grow()
		}
		for _, a := range h.accs {
			a.grow(len(h.counts))
		}
	}
	h.inUse[g] = true
	return g
}

// newGroup makes a group with a boxed key (see keyRows).
func (h *HashAgg) newGroup(key []any) int32 {
	g := h.slot()
	h.keyRows[g] = key
	if h.Windowed {
		if end, ok := key[h.WindowEnd].(int64); ok {
			h.inWindow(end, g)
		}
	}
	return g
}

// newIntGroup makes a group with an unboxed int key (see ints).
func (h *HashAgg) newIntGroup(key [4]int64) int32 {
	g := h.slot()
	// Word by word, not copy: key was just written a word at a time, and memmove's wider
	// loads would wait for those stores to reach the cache (HOP 1M keys: +9%).
	ints := h.ints[int(g)*len(h.Keys):][:len(h.Keys)]
	for i := range ints {
		ints[i] = key[i]
	}
	if h.Windowed {
		h.inWindow(key[h.WindowEnd], g)
	}
	return g
}

// newRunGroup is newIntGroup for a run's key (its user column 0) with user column value k,
// written after the key: not into a copy of the key first, which would be one more copy
// whose wide loads wait on a narrow store.
func (h *HashAgg) newRunGroup(key [4]int64, k int64) int32 {
	g := h.newIntGroup(key)
	h.ints[int(g)*len(h.Keys)+h.userKey] = k
	return g
}

// windowGroups is a window's entry in byEnd.
type windowGroups struct {
	end int64
	gs  *[]int32
}

// inWindow lists group g under its window's end.
func (h *HashAgg) inWindow(end int64, g int32) {
	if h.lastEnd == nil || h.lastEnd.end != end {
		gs := h.byEnd[end]
		if gs == nil {
			if n := len(h.spareEnds); n > 0 {
				gs, h.spareEnds = h.spareEnds[n-1], h.spareEnds[:n-1]
			} else {
				gs = new([]int32)
			}
			h.byEnd[end] = gs
		}
		h.lastEnd = &windowGroups{end, gs}
	}
	*h.lastEnd.gs = append(*h.lastEnd.gs, g)
}

// key returns group g's key values.
func (h *HashAgg) key(g int32) []any {
	if k, ok := h.keyRows[g]; ok {
		return k
	}
	key := make([]any, len(h.Keys))
	for i := range key {
		key[i] = h.ints[int(g)*len(h.Keys)+i]
	}
	return key
}

// fire handles a watermark for a windowed aggregate: groups whose window is complete are
// emitted (EMIT ON WINDOW CLOSE) and their state freed.
func (h *HashAgg) fire(w int64) error {
	var ends []int64
	for end := range h.byEnd {
		if end-1 <= w {
			ends = append(ends, end)
		}
	}
	if len(ends) == 0 {
		return nil
	}
	// Windows close in time order; with EMIT ON WINDOW CLOSE a window's groups are emitted
	// by group id; groups are released in the order they were made.
	slices.Sort(ends)
	// Complete windows' tables and lists are kept for the next windows, as many as were
	// open: a batch spanning many windows (HOP's) needs that many again.
	spares := len(h.byEnd)
	done := h.done[:0]
	for _, end := range ends {
		gs := *h.byEnd[end]
		if h.EmitOnClose && !h.Batch {
			slices.Sort(gs)
		}
		done = append(done, gs...)
	}
	if h.EmitOnClose && !h.Batch {
		if err := h.Out.EmitBatch(h.rows(h.live(done), 1)); err != nil {
			return err
		}
	}
	for _, e := range ends {
		if gs := h.byEnd[e]; len(h.spareEnds) < spares {
			*gs = (*gs)[:0]
			h.spareEnds = append(h.spareEnds, gs)
		}
		delete(h.byEnd, e)
	}
	h.lastEnd = nil
	h.release(done)
	for _, e := range ends {
		if t := h.wins[e]; t != nil && len(h.spareWins) < spares {
			h.spareWins = append(h.spareWins, t)
		}
		delete(h.wins, e)
	}
	h.lastWin = h.lastWin[:0]
	h.done = done[:0]
	return nil
}

// stampRecent sets the clock of the groups waiting for a watermark to w.
func (h *HashAgg) stampRecent(w int64) {
	if w == NoWatermark {
		return
	}
	recent := h.clk.recent
	h.clk.recent = nil
	for _, g := range recent {
		h.clk.stamp(&h.due, 0, g, w)
	}
	h.markDirty(recent)
}

// expire drops the groups idle for longer than TTL at watermark w, retracting their rows.
func (h *HashAgg) expire(w int64) error {
	h.stampRecent(w)
	var gone []int32
	h.due.expire(w, h.TTL, func(int8) *clocks { return &h.clk },
		func(_ int8, g int32) bool { return h.inUse[g] && !h.isAlways(g) },
		func(_ int8, g int32) { gone = append(gone, g) })
	if len(gone) == 0 {
		return nil
	}
	slices.Sort(gone)
	if !h.Batch && !h.EmitOnClose {
		if err := h.Out.EmitBatch(h.rows(h.live(gone), -1)); err != nil {
			return err
		}
	}
	h.release(gone)
	return nil
}

// release frees groups: their keys leave the maps (and the store: gone) and their slots
// are reused.
func (h *HashAgg) release(gs []int32) {
	for _, g := range gs {
		if h.stored[g] {
			h.gone = append(h.gone, h.groupKey(nil, g))
		}
		h.forget(g)
		h.inUse[g] = false
		h.counts[g] = 0
		h.stored[g] = false
		if h.TTL > 0 {
			h.clk.seen[g] = NoWatermark
		}
		h.free = append(h.free, g)
	}
}

// Push implements Operator.
func (h *HashAgg) Push(_ int, m Msg) error {
	err := h.push(m)
	if err == nil {
		err = h.outErr
	}
	h.outErr = nil
	return err
}

func (h *HashAgg) push(m Msg) error {
	if h.accs == nil {
		h.init()
	}
	if len(h.Always) > 0 && h.alwaysGs == nil {
		h.alwaysGs = h.alwaysGroups()
	}
	if !h.started && !h.Batch {
		h.started = true
		if len(h.Keys) == 0 {
			if err := h.Out.EmitBatch(h.rows([]int32{0}, 1)); err != nil {
				return err
			}
		}
		if err := h.Out.EmitBatch(h.rows(h.alwaysGs, 1)); err != nil {
			return err
		}
	}
	switch m.Kind {
	case MsgWatermark:
		if h.Windowed {
			if err := h.fire(m.Watermark); err != nil {
				return err
			}
		}
		if h.TTL > 0 {
			if err := h.expire(m.Watermark); err != nil {
				return err
			}
		}
		return h.Out.Emit(m)
	case MsgEnd:
		if h.Batch || (h.EmitOnClose && h.Windowed) {
			var all []int32
			for g := range h.counts {
				if h.counts[g] > 0 || len(h.Keys) == 0 || h.isAlways(int32(g)) {
					all = append(all, int32(g))
				}
			}
			for start := 0; start < len(all); start += 8192 {
				if err := h.Out.EmitBatch(h.rows(all[start:min(start+8192, len(all))], 1)); err != nil {
					return err
				}
			}
		}
		return h.Out.Emit(m)
	}
	if h.TTL > 0 {
		return cutAtExpiry(m.Batch, &h.due, h.TTL, h.stampRecent, h.expire, h.applyHeld)
	}
	return h.apply(m.Batch, NoWatermark)
}

// applyHeld is apply for an aggregate with a TTL: a retraction of a row that its group no
// longer holds is dropped, and a group a retraction leaves with no rows is cleared right
// there (skipForgotten); a group made only for dropped rows is released.
func (h *HashAgg) applyHeld(b *Batch, after int64) error {
	var gids []int32
	return skipForgotten(b, after, func(i int) (int32, int64) {
		if gids == nil {
			h.assign(b)
			gids = slices.Clone(h.gids)
		}
		return gids[i], h.counts[gids[i]]
	}, h.apply, func(rows []int) {
		for _, i := range rows {
			if g := gids[i]; h.inUse[g] && h.counts[g] == 0 && !h.isAlways(g) {
				h.release([]int32{g})
			}
		}
	}, func() {
		// The last row applied left its group with no rows.
		if g := h.gids[len(h.gids)-1]; h.counts[g] == 0 && !h.isAlways(g) {
			h.release([]int32{g})
		}
	})
}

// apply adds a batch's rows to their groups and emits the changes; after is the watermark
// after its last row (TTL clocks).
func (h *HashAgg) apply(b *Batch, after int64) error {
	if b.Runs != nil && !h.byRuns(b) {
		b = h.windowColumns(b)
	}
	h.assign(b)
	if h.spillErr != nil {
		return h.spillErr
	}
	// h.gids has a group per row and lane (Batch.Lanes); lane l's are row by row.
	n, lanes := b.N, b.lanes()
	laneGids := func(l int) []int32 { return h.gids[l*n : (l+1)*n] }
	var old []arrow.Array
	var oldGs []int32
	if !h.Batch && !h.EmitOnClose {
		h.touched = h.touched[:0]
		if b.WM == nil {
			for _, g := range h.gids {
				if !h.mark[g] {
					h.mark[g] = true
					h.touched = append(h.touched, g)
				}
			}
		} else {
			// As in a table's batch, watermarks mostly rise row by row: a row whose watermark
			// is the greatest so far (hi) is its group's last; lanes repeat the rows.
			hi := int64(math.MinInt64)
			for l := range lanes {
				for i, g := range laneGids(l) {
					w := b.WM[i]
					if !h.mark[g] {
						h.mark[g] = true
						h.touched = append(h.touched, g)
						h.wmFirst[g], h.wmLast[g] = w, w
						hi = max(hi, w)
						continue
					}
					if w >= hi {
						h.wmLast[g], hi = w, w
						continue
					}
					h.wmFirst[g], h.wmLast[g] = min(h.wmFirst[g], w), max(h.wmLast[g], w)
				}
			}
		}
		for _, g := range h.touched {
			h.mark[g] = false
		}
		oldGs = h.live(h.touched)
		old = h.results(oldGs, -1)
	}
	if b.W == nil {
		for _, g := range h.gids {
			h.counts[g]++
		}
	} else {
		for l := range lanes {
			for i, g := range laneGids(l) {
				h.counts[g] += b.W[i]
			}
		}
	}
	if h.Batch || h.EmitOnClose {
		h.markDirty(h.gids)
	} else {
		h.markDirty(h.touched)
	}
	if h.TTL > 0 { // (never windowed: no lanes)
		for i, g := range h.gids {
			h.clk.stamp(&h.due, 0, g, watermarkAfter(b, i, after))
		}
	}
	for i, a := range h.accs {
		var col arrow.Array
		if h.Aggs[i].Fn != AggCountStar {
			col = b.Cols[h.Aggs[i].Arg]
		}
		for l := range lanes {
			if err := a.update(laneGids(l), col, b); err != nil {
				return err
			}
		}
	}
	if h.Batch || h.EmitOnClose {
		return nil
	}
	out := h.interleave(old, oldGs, h.live(h.touched), b.WM != nil)
	if h.spilled && len(h.groups) > spillResident {
		h.evictAll()
	}
	return h.Out.EmitBatch(out)
}

// interleave builds a batch's changes, group by group: a changed group's old row (-1) right
// before its new row (+1), so a changelog reads as -U/+U pairs; a group that appears or
// disappears contributes one row. old holds the aggregate results of oldGs before the batch.
// For a timed batch, the rows carry watermarks too (wmFirst, wmLast).
func (h *HashAgg) interleave(old []arrow.Array, oldGs, newGs []int32, timed bool) *Batch {
	if len(oldGs) == 0 {
		out := h.rows(newGs, 1)
		if timed && out != nil {
			out.WM = make([]int64, len(newGs))
			for i, g := range newGs {
				out.WM[i] = h.wmLast[g]
			}
		}
		return out
	}
	cur := h.results(newGs, 1)
	oi, ni := 0, 0
	n := len(oldGs) + len(newGs)
	gs, ws := make([]int32, 0, n), make([]int64, 0, n)
	idx := make([]int32, 0, n) // into the aggregate results old ++ cur
	for _, g := range h.touched {
		hasOld := oi < len(oldGs) && oldGs[oi] == g
		hasNew := ni < len(newGs) && newGs[ni] == g
		if hasOld && hasNew && sameResults(old, oi, cur, ni) {
			// Unchanged (a DISTINCT row inserted again, a MAX not beaten): no change to send.
			oi++
			ni++
			continue
		}
		if hasOld {
			gs, ws, idx = append(gs, g), append(ws, -1), append(idx, int32(oi))
			oi++
		}
		if hasNew {
			gs, ws, idx = append(gs, g), append(ws, 1), append(idx, int32(len(oldGs)+ni))
			ni++
		}
	}
	if len(gs) == 0 {
		return nil
	}
	out := &Batch{N: len(gs), Cols: h.keyColumns(gs), W: ws}
	for i, a := range h.Aggs {
		out.Cols = append(out.Cols, takeTwo(old[i], cur[i], idx, a.ResultType()))
	}
	if timed {
		out.WM = make([]int64, len(gs))
		for i, g := range gs {
			if ws[i] < 0 {
				out.WM[i] = h.wmFirst[g]
			} else {
				out.WM[i] = h.wmLast[g]
			}
		}
	}
	return out
}

// takeTwo gathers the values at idx of the concatenation a ++ b.
func takeTwo(a, b arrow.Array, idx []int32, t types.T) arrow.Array {
	na := int32(a.Len())
	if x, ok := a.(*array.Int64); ok && a.NullN() == 0 && b.NullN() == 0 {
		av, bv := x.Int64Values(), Int64s(b)
		vals := make([]int64, len(idx))
		for i, j := range idx {
			if j < na {
				vals[i] = av[j]
			} else {
				vals[i] = bv[j-na]
			}
		}
		return NewInt64(vals, nil)
	}
	bl := NewBuilder(t, len(idx))
	for _, j := range idx {
		if j < na {
			bl.AppendFrom(a, int(j))
		} else {
			bl.AppendFrom(b, int(j-na))
		}
	}
	return bl.Finish()
}

// sameResults reports whether row i of the results a and row j of the results b are equal.
func sameResults(a []arrow.Array, i int, b []arrow.Array, j int) bool {
	for c, x := range a {
		y := b[c]
		if x.IsNull(i) || y.IsNull(j) {
			if x.IsNull(i) != y.IsNull(j) {
				return false
			}
			continue
		}
		switch x := x.(type) {
		case *array.Int64:
			if x.Value(i) != y.(*array.Int64).Value(j) {
				return false
			}
		case *array.Float64:
			if x.Value(i) != y.(*array.Float64).Value(j) {
				return false
			}
		case *array.String:
			if x.Value(i) != y.(*array.String).Value(j) {
				return false
			}
		case *array.Boolean:
			if x.Value(i) != y.(*array.Boolean).Value(j) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// ConcatChanges joins retractions and insertions into one batch, so that downstream (a
// subscriber) sees an update as one change: -U then +U.
func ConcatChanges(bs ...*Batch) *Batch {
	var parts []*Batch
	for _, b := range bs {
		if b != nil && b.N > 0 {
			parts = append(parts, b)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	ts := make([]types.T, len(parts[0].Cols))
	for i, c := range parts[0].Cols {
		ts[i] = physType(c)
	}
	out := Concat(parts, ts)
	if out.W == nil {
		out.W = make([]int64, out.N)
		for i := range out.W {
			out.W[i] = 1
		}
	}
	return out
}

// physType is a logical type with the physical representation of a.
func physType(a arrow.Array) types.T {
	switch a.(type) {
	case *array.Float64:
		return types.TDouble
	case *array.Boolean:
		return types.TBool
	case *array.String:
		return types.TVarchar
	}
	return types.TBigInt
}

// live filters groups to those whose row exists.
func (h *HashAgg) live(gs []int32) []int32 {
	if len(h.Keys) == 0 {
		return gs
	}
	out := make([]int32, 0, len(gs))
	for _, g := range gs {
		if h.counts[g] > 0 || h.isAlways(g) {
			out = append(out, g)
		}
	}
	return out
}

// isAlways reports whether group g is one of Always's.
func (h *HashAgg) isAlways(g int32) bool { return slices.Contains(h.alwaysGs, g) }

// alwaysGroups finds or makes the groups of Always, through the lookups rows take.
func (h *HashAgg) alwaysGroups() []int32 {
	b := RowsToBatch(h.Always, h.KeyT)
	keys := h.Keys
	h.Keys = make([]int, len(keys))
	for i := range h.Keys {
		h.Keys[i] = i
	}
	h.assign(b)
	h.Keys = keys
	return slices.Clone(h.gids)
}

// winTable is a window's key table, by its window_end.
type winTable struct {
	end int64
	t   *winKeys
}

// keyTable is the table a multi-column int key is found in: arrKeys, or in a windowed
// aggregate its window's.
func (h *HashAgg) keyTable(key [4]int64) *winKeys {
	if !h.Windowed {
		return &h.arrKeys
	}
	end := key[h.WindowEnd]
	for i := len(h.lastWin) - 1; i >= 0; i-- { // the latest window is the likeliest
		if w := h.lastWin[i]; w.end == end {
			return w.t
		}
	}
	t, ok := h.wins[end]
	if !ok {
		// A complete window's table has the size the next one likely needs. It is emptied
		// here, not when its window completed, so that its memory is in the cache for the
		// rows about to probe it.
		if n := len(h.spareWins); n > 0 {
			t, h.spareWins = h.spareWins[n-1], h.spareWins[:n-1]
			t.reset()
		} else {
			t = &winKeys{col: h.userKey}
		}
		h.wins[end] = t
	}
	if len(h.lastWin) == 8 {
		copy(h.lastWin, h.lastWin[1:])
		h.lastWin = h.lastWin[:7]
	}
	h.lastWin = append(h.lastWin, winTable{end, t})
	return t
}

// intKeyed reports whether the keys are 1 to 4 int64 columns: such a key without NULLs is
// looked up by value (intKeys for one column, arrKeys for several) instead of as an encoded
// string. A key with a NULL always takes the string map, so each key has one home.
func (h *HashAgg) intKeyed() bool {
	if len(h.Keys) == 0 || len(h.Keys) > 4 {
		return false
	}
	for _, t := range h.KeyT {
		if t.Phys() != types.PhysInt64 {
			return false
		}
	}
	return true
}

// assign computes the group of every row into h.gids, creating groups.
func (h *HashAgg) assign(b *Batch) {
	h.gids = h.gids[:0]
	if len(h.Keys) == 0 {
		for i := 0; i < b.N; i++ {
			h.gids = append(h.gids, 0)
		}
		return
	}
	if h.spilled {
		for i := 0; i < b.N; i++ {
			h.gids = append(h.gids, h.spillGroup(b, i))
		}
		return
	}
	if b.Runs != nil { // byRuns(b)
		h.assignWindowRuns(b.Runs, Int64s(b.Cols[h.Keys[h.userKey]])[:b.N])
		return
	}
	if h.intKeyed() {
		cols := make([][]int64, len(h.Keys))
		nulls := false
		for k, c := range h.Keys {
			cols[k] = Int64s(b.Cols[c])
			nulls = nulls || b.Cols[c].NullN() > 0
		}
		if h.userKey >= 0 && !nulls {
			h.assignWindowRuns(windowRuns(cols[h.WindowStart], cols[h.WindowEnd]), cols[h.userKey])
			return
		}
		// t is the table of the window of the row before (consecutive rows mostly share one).
		var t *winKeys
		var end int64
		for i := 0; i < b.N; i++ {
			if nulls && h.rowHasNull(b, i) {
				h.gids = append(h.gids, h.stringGroup(b, i))
				continue
			}
			if len(cols) == 1 {
				h.gids = append(h.gids, h.intGroup(cols[0][i]))
				continue
			}
			var key [4]int64
			for k, c := range cols {
				key[k] = c[i]
			}
			if t == nil || h.Windowed && key[h.WindowEnd] != end {
				t, end = h.keyTable(key), key[h.WindowEnd]
			}
			g, ok := t.get(key)
			if !ok {
				g = h.newIntGroup(key)
				t.put(key, g)
			}
			h.gids = append(h.gids, g)
		}
		return
	}
	for i := 0; i < b.N; i++ {
		h.gids = append(h.gids, h.stringGroup(b, i))
	}
}

// byRuns reports whether assign takes a batch with Runs as it is: the aggregate is keyed by
// the window and one int column without NULLs (see assignWindowRuns).
func (h *HashAgg) byRuns(b *Batch) bool {
	return h.userKey >= 0 && !h.spilled && h.intKeyed() && b.Cols[h.Keys[h.userKey]].NullN() == 0
}

// windowColumns is b with its window key columns made from its Runs, for the paths that
// read keys row by row.
func (h *HashAgg) windowColumns(b *Batch) *Batch {
	n := b.N * b.lanes()
	if b.Lanes > 1 { // the rows once per lane
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i % b.N)
		}
		cols := make([]arrow.Array, len(b.Cols))
		for c, col := range b.Cols {
			if _, none := col.(*array.Null); none { // a window column: made below, or unread
				cols[c] = array.NewNull(n)
			} else {
				cols[c] = TakeArray(col, idx, physType(col))
			}
		}
		x := &Batch{N: b.N, W: b.W, WM: b.WM} // Take's weights and watermarks
		x = Take(x, idx, nil)
		b = &Batch{N: n, Cols: cols, W: x.W, WM: x.WM, Runs: b.Runs}
	}
	starts, ends := make([]int64, n), make([]int64, n)
	from := 0
	for _, r := range b.Runs {
		for i := from; i < r.To; i++ {
			starts[i], ends[i] = r.Start, r.End
		}
		from = r.To
	}
	cols := slices.Clone(b.Cols)
	cols[h.Keys[h.WindowStart]], cols[h.Keys[h.WindowEnd]] = NewInt64(starts, nil), NewInt64(ends, nil)
	return &Batch{N: n, Cols: cols, W: b.W, WM: b.WM}
}

// windowRuns cuts window columns into runs of one window.
func windowRuns(starts, ends []int64) []WindowRun {
	var runs []WindowRun
	for i := 0; i < len(ends); {
		s, e := starts[i], ends[i]
		j := i + 1
		for j < len(ends) && ends[j] == e && starts[j] == s {
			j++
		}
		runs = append(runs, WindowRun{To: j, Start: s, End: e})
		i = j
	}
	return runs
}

// assignWindowRuns is assign for a windowed aggregate keyed by the window and one other
// int column (userKey, values ks: exactly a lane's rows), without NULLs, its rows in runs of
// one window over lanes of ks repeated (no run crosses from one lane to the next): a run
// finds its window's table once and, where that table indexes the key directly, each row
// costs one array access.
func (h *HashAgg) assignWindowRuns(runs []WindowRun, ks []int64) {
	ws, we, uk := h.WindowStart, h.WindowEnd, h.userKey
	h.gids = h.gids[:0]
	if len(runs) > 0 {
		h.gids = slices.Grow(h.gids, runs[len(runs)-1].To)
	}
	i := 0
	for _, run := range runs {
		j := run.To
		var key [4]int64
		key[ws], key[we] = run.Start, run.End
		t := h.keyTable(key)
		gids := h.gids[len(h.gids) : len(h.gids)+j-i]
		h.gids = h.gids[:len(h.gids)+j-i]
		var dense []int32 // the run's key (its user column still 0) is the window's: rows index it directly
		if key == t.ref && len(t.dense) > 0 {
			dense = t.dense
		}
		var ahead int64
		p := i % max(len(ks), 1) // the run's first row, in its lane
		rows := ks[p : p+j-i]
		for r, k := range rows {
			if r%farAhead == 0 && dense != nil && t.far.n > 0 {
				// Reading the far slots of the next rows in one tight loop lets their cache
				// misses overlap: a window of many keys probes its table at random.
				for _, k := range rows[r:min(r+farAhead, len(rows))] {
					ahead += t.far.slots[t.far.home(k)].key
				}
			}
			if d := uint64(k - t.base); d < uint64(len(dense)) {
				g := dense[d] - 1
				if g < 0 {
					g = h.newRunGroup(key, k)
					dense[d] = g + 1
				}
				gids[r] = g
				continue
			}
			if dense != nil { // found by the user key alone (winKeys.far)
				sl := t.far.slot(k)
				if sl.val == 0 {
					t.far.fill(sl, k, h.newRunGroup(key, k))
				}
				gids[r] = sl.val - 1
				continue
			}
			full := key
			full[uk] = k
			g, ok := t.get(full)
			if !ok {
				g = h.newIntGroup(full)
				t.put(full, g)
				if len(dense) == 0 && key == t.ref { // the first put made the dense index
					dense = t.dense
				}
			}
			gids[r] = g
		}
		h.ahead += ahead
		i = j
	}
}

// farAhead is how many rows' far slots assignWindowRuns reads in one go, ahead of taking
// them one by one (HashAgg.ahead keeps those reads from being compiled away).
const farAhead = 32

// denseSpan is the widest key range kept in a directly indexed table.
const denseSpan = 1 << 16

// intGroup finds or creates the group of a one-column int64 key. Keys within denseSpan of
// the first one are indexed directly (no hashing); any other key moves every key to the map.
func (h *HashAgg) intGroup(v int64) int32 {
	if h.dense != nil {
		if d := v - h.denseBase; d >= 0 && d < denseSpan {
			if g := h.dense[d]; g > 0 {
				return g - 1
			}
			g := h.newIntGroup([4]int64{v})
			h.dense[d] = g + 1
			return g
		}
		for d, g := range h.dense {
			if g > 0 {
				h.intKeys[h.denseBase+int64(d)] = g - 1
			}
		}
		h.dense = nil
	} else if len(h.intKeys) == 0 && !h.denseOff {
		h.dense, h.denseBase = make([]int32, denseSpan), v-denseSpan/2
		return h.intGroup(v)
	}
	h.denseOff = true
	g, ok := h.intKeys[v]
	if !ok {
		g = h.newIntGroup([4]int64{v})
		h.intKeys[v] = g
	}
	return g
}

func (h *HashAgg) rowHasNull(b *Batch, i int) bool {
	for _, c := range h.Keys {
		if b.Cols[c].IsNull(i) {
			return true
		}
	}
	return false
}

// stringGroup finds or creates the group of row i by its encoded key.
func (h *HashAgg) stringGroup(b *Batch, i int) int32 {
	h.keyBuf = RowKey(h.keyBuf[:0], b, h.Keys, i)
	g, ok := h.groups[string(h.keyBuf)]
	if !ok {
		key := make([]any, len(h.Keys))
		for k, c := range h.Keys {
			key[k] = Value(b.Cols[c], i)
		}
		g = h.newGroup(key)
		h.groups[string(h.keyBuf)] = g
	}
	return g
}

// intKey packs a group key of int columns without NULLs for ints; ok is false for keys
// kept boxed.
func (h *HashAgg) intKey(key []any) (arr [4]int64, ok bool) {
	if !h.intKeyed() {
		return arr, false
	}
	for k, v := range key {
		x, isInt := v.(int64)
		if !isInt {
			return arr, false
		}
		arr[k] = x
	}
	return arr, true
}

// forget removes group g's key from the maps that hold it.
func (h *HashAgg) forget(g int32) {
	if len(h.keyRows) > 0 {
		if key, ok := h.keyRows[g]; ok {
			var kb []byte
			kb = AppendValuesKey(kb, key)
			delete(h.groups, string(kb))
			delete(h.keyRows, g)
			return
		}
	}
	if h.Windowed && len(h.Keys) > 1 {
		return // a windowed aggregate drops a complete window's table at once
	}
	var arr [4]int64
	copy(arr[:], h.ints[int(g)*len(h.Keys):int(g+1)*len(h.Keys)])
	switch {
	case len(h.Keys) == 0:
	case len(h.Keys) == 1 && h.dense != nil:
		h.dense[arr[0]-h.denseBase] = 0
	case len(h.Keys) == 1:
		delete(h.intKeys, arr[0])
	default:
		h.arrKeys.del(arr)
	}
}

// rows builds the output rows of groups gs with weight w.
func (h *HashAgg) rows(gs []int32, w int64) *Batch {
	if len(gs) == 0 {
		return nil
	}
	out := &Batch{N: len(gs), Cols: append(h.keyColumns(gs), h.results(gs, w)...)}
	if w != 1 {
		out.W = make([]int64, len(gs))
		for i := range out.W {
			out.W[i] = w
		}
	}
	return out
}

// keyColumns builds the key columns of groups gs.
func (h *HashAgg) keyColumns(gs []int32) []arrow.Array {
	cols := make([]arrow.Array, 0, len(h.Keys)+len(h.Aggs))
	boxed := false
	for i := 0; i < len(gs) && len(h.keyRows) > 0 && len(h.Keys) > 0 && !boxed; i++ {
		_, boxed = h.keyRows[gs[i]]
	}
	for k, t := range h.KeyT {
		if !boxed {
			vals := make([]int64, len(gs))
			for i, g := range gs {
				vals[i] = h.ints[int(g)*len(h.Keys)+k]
			}
			cols = append(cols, NewInt64(vals, nil))
			continue
		}
		bl := NewBuilder(t, len(gs))
		for _, g := range gs {
			bl.Append(h.key(g)[k])
		}
		cols = append(cols, bl.Finish())
	}
	return cols
}

// results builds the aggregate columns of groups gs, for rows of weight w: a result out of
// range is reported for an insertion (w > 0); a retraction's was reported when the row was
// emitted.
func (h *HashAgg) results(gs []int32, w int64) []arrow.Array {
	cols := make([]arrow.Array, 0, len(h.Aggs))
	for i, a := range h.accs {
		cols = append(cols, a.column(gs, h.Aggs[i].ResultType()))
		if o, ok := a.(interface{ overflowed() error }); ok {
			if err := h.Aggs[i].Pos.located(o.overflowed()); err != nil && w > 0 {
				if h.Errs != nil {
					h.Errs(err)
				} else if h.outErr == nil {
					h.outErr = err
				}
			}
		}
	}
	return cols
}

var _ Stateful = (*HashAgg)(nil)

// SaveState implements Stateful: the groups changed since the last checkpoint go to the
// store (spill.go); the record holds whether they are spilled.
func (h *HashAgg) SaveState(w *StateWriter) {
	if h.accs == nil {
		h.init()
	}
	w.Bool(h.started)
	w.Bool(h.spilled)
	if h.spilled {
		h.evictAll()
	} else {
		h.writeChanges()
	}
}

// LoadState implements Stateful: unless spilled, every stored group is made resident.
func (h *HashAgg) LoadState(r *StateReader) error {
	h.init()
	h.started = r.Bool()
	h.spilled = r.Bool()
	if err := r.Err(); err != nil || h.spilled {
		return err
	}
	return h.store.Each(func(kb, val []byte) error {
		g := int32(0)
		if len(h.Keys) > 0 {
			key, err := DecodeKey(kb, len(h.Keys))
			if err != nil {
				return err
			}
			g = h.remember(key)
		}
		return h.loadGroup(g, val)
	})
}

// remember makes the group of a restored key, in the map that holds keys like it.
func (h *HashAgg) remember(key []any) int32 {
	if arr, ok := h.intKey(key); ok {
		g := h.newIntGroup(arr)
		if len(key) == 1 {
			h.denseOff = true
			h.intKeys[arr[0]] = g
		} else {
			h.keyTable(arr).put(arr, g)
		}
		return g
	}
	g := h.newGroup(key)
	var kb []byte
	kb = AppendValuesKey(kb, key)
	h.groups[string(kb)] = g
	return g
}
