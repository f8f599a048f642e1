package exec

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// JoinKind is the kind of a join.
type JoinKind uint8

// Join kinds. Cross is Inner with no keys and no condition.
const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
)

func (k JoinKind) String() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL"}[k]
}

// HashJoin is a symmetric hash join over weighted inputs: port 0 is the left input, port 1
// the right. Each side's rows are kept (consolidated by value, with their multiplicity), so a
// change on either side joins with the other side's current rows: the output is the change
// of the join, whichever side changes and in whatever order. Rows match when their key
// columns are equal and not NULL and Cond (over left columns followed by right columns) is
// TRUE. For outer joins, each kept row counts its matches: in Batch mode unmatched rows are
// padded with NULLs at End; otherwise the padded row is inserted and retracted as the match
// count leaves and returns to zero.
type HashJoin struct {
	Kind                JoinKind
	LeftKeys, RightKeys []int
	LeftT, RightT       []types.T
	Cond                Expr
	Batch               bool
	// Interval, when set, makes this an interval join (see IntervalSpec).
	Interval *IntervalSpec
	// TTL, when > 0, forgets a kept row once the watermark passes the watermark after its
	// last change by more than TTL ms (ttl.go; results already emitted stay, later matches
	// are lost).
	TTL int64
	due ttlQueue
	// Ctx, when set, is checked before each chunk of pairs (a cancelled query stops).
	Ctx context.Context
	// Need, when not nil, marks the output columns read above the join (a projection of
	// column references over it, with no Cond to evaluate on the joined rows): matched
	// pairs carry NULL arrays for the others instead of gathering them.
	Need []bool
	Out  Output

	sides [2]*joinSide
	ended [2]bool
	wms   [2]int64
	// store holds each side's buckets as of the last checkpoint (joinspill.go); dirty lists
	// the buckets changed since. Once spilled, resident lists the buckets in memory (only
	// those a batch uses); spillErr is a store read that failed.
	store    KeyedStore
	dirty    [2]map[string]struct{}
	spilled  bool
	resident [2]map[string]struct{}
	spillErr error
}

var _ Operator = (*HashJoin)(nil)

// IntervalSpec bounds an interval join: rows match only when right time - left time is in
// [Lo, Hi] (milliseconds, inclusive; the join's Cond also says so). With it, a change — an
// insertion or a retraction — whose time is at or below the join's watermark when it
// arrives is late (reported to Late, never applied); a left row is freed once the watermark
// reaches its time + Hi, a right row once it reaches its time - Lo, since no row still to
// come can match them; and outer joins pad an unmatched row when it is freed, not before.
// So a retraction that is applied finds its row and every row it matched still kept (a
// partner freed means a watermark past the retraction's time), and retracts exactly the
// matches emitted.
type IntervalSpec struct {
	LeftTime, RightTime int
	Lo, Hi              int64
	Late                [2]func(eventTime, watermark int64, row []any)
}

type joinSide struct {
	buckets map[string][]int32
	index   map[string]int32 // row value -> entry
	keys    []string         // entry -> bucket key
	vals    []string         // entry -> row value key
	rows    [][]any
	w       []int64
	matches []int64
	free    []int32
	expiry  []int64 // interval joins: when the entry can be freed
	clk     clocks  // TTL: the entries' clocks, queued in the join's due queue
}

func newJoinSide() *joinSide {
	return &joinSide{buckets: map[string][]int32{}, index: map[string]int32{}}
}

func (j *HashJoin) preserved(side int) bool {
	if side == 0 {
		return j.Kind == JoinLeft || j.Kind == JoinFull
	}
	return j.Kind == JoinRight || j.Kind == JoinFull
}

// Push implements Operator.
func (j *HashJoin) Push(port int, m Msg) error {
	j.init()
	switch m.Kind {
	case MsgWatermark:
		j.wms[port] = max(j.wms[port], m.Watermark)
		w := min(j.wms[0], j.wms[1])
		if j.Interval != nil {
			if err := j.expire(w); err != nil {
				return err
			}
		}
		if j.TTL > 0 {
			j.forget(w)
		}
		return j.Out.Emit(Msg{Kind: MsgWatermark, Watermark: w})
	case MsgEnd:
		j.ended[port] = true
		if !j.ended[0] || !j.ended[1] {
			return nil
		}
		if j.Batch {
			for side := 0; side < 2; side++ {
				if !j.preserved(side) {
					continue
				}
				s := j.sides[side]
				var rows [][]any
				var ws []int64
				for e, r := range s.rows {
					if r != nil && s.matches[e] == 0 {
						rows = append(rows, r)
						ws = append(ws, s.w[e])
					}
				}
				if err := j.emitPadded(side, rows, ws, nil); err != nil {
					return err
				}
			}
		}
		return j.Out.Emit(m)
	}
	b := m.Batch
	if b.WM != nil && !j.Batch {
		// A row's watermark becomes the join's before it: its side's, or less if the other
		// side is behind. What the row brings about — matches, padding, a TTL clock — is
		// stamped with it.
		wm := make([]int64, b.N)
		for i, w := range b.WM {
			wm[i] = min(w, j.wms[1-port])
		}
		b = &Batch{Cols: b.Cols, N: b.N, W: b.W, WM: wm}
	}
	if j.TTL > 0 && !j.Batch {
		return cutAtExpiry(b, &j.due, j.TTL, j.stampRecent,
			func(w int64) error { j.forget(w); return nil },
			func(b *Batch, after int64) error { return j.processHeld(port, b, after) })
	}
	return j.process(port, b, NoWatermark)
}

func (j *HashJoin) keyCols(side int) []int {
	if side == 0 {
		return j.LeftKeys
	}
	return j.RightKeys
}

// deferPadding reports whether unmatched rows are padded only when they can no longer
// match (at End, or when an interval join frees them) rather than kept current.
func (j *HashJoin) deferPadding() bool { return j.Batch || j.Interval != nil }

// dropLate removes late rows from b (interval joins), reporting them.
func (j *HashJoin) dropLate(side int, b *Batch) *Batch {
	col := j.Interval.LeftTime
	if side == 1 {
		col = j.Interval.RightTime
	}
	times := b.Cols[col]
	var keep []int32
	for i := 0; i < b.N; i++ {
		own := j.wms[side]
		if b.WM != nil {
			own = b.WM[i]
		}
		w := min(own, j.wms[1-side])
		// A retraction too: its row was late itself, or its matches were emitted with rows
		// the join may have freed; either way it is a late change (see IntervalSpec).
		if times.IsNull(i) || Int64s(times)[i] <= w {
			if rep := j.Interval.Late[side]; rep != nil {
				t := Int64s(times)[i]
				if times.IsNull(i) {
					t = NoWatermark // no time: reported like a late row, with none
				}
				rep(t, w, b.Row(i))
			}
			continue
		}
		keep = append(keep, int32(i))
	}
	if len(keep) == b.N {
		return b
	}
	ts := j.LeftT
	if side == 1 {
		ts = j.RightT
	}
	return Take(b, keep, ts)
}

// stampRecent sets the clock of the entries waiting for a watermark to w.
func (j *HashJoin) stampRecent(w int64) {
	if w == NoWatermark {
		return
	}
	for side, s := range j.sides {
		recent := s.clk.recent
		s.clk.recent = nil
		for _, e := range recent {
			if s.rows[e] != nil {
				s.clk.stamp(&j.due, int8(side), e, w)
				j.markDirty(side, s.keys[e])
			}
		}
	}
}

// forget drops the kept rows idle for longer than TTL at watermark w.
func (j *HashJoin) forget(w int64) {
	j.stampRecent(w)
	j.due.expire(w, j.TTL, func(side int8) *clocks { return &j.sides[side].clk },
		func(side int8, e int32) bool { return j.sides[side].rows[e] != nil },
		func(side int8, e int32) {
			s := j.sides[side]
			j.markDirty(int(side), s.keys[e])
			s.remove(e, s.vals[e], s.keys[e])
		})
}

// expire frees the rows no future row can match and pads the unmatched ones of outer sides.
func (j *HashJoin) expire(w int64) error {
	for side := 0; side < 2; side++ {
		s := j.sides[side]
		var rows [][]any
		var ws, wms []int64
		for e, r := range s.rows {
			if r == nil || s.expiry[e] > w {
				continue
			}
			if j.preserved(side) && s.matches[e] == 0 {
				// Stamped with the watermark that frees it, whatever watermark message
				// brought that about: downstream, lateness does not depend on batching.
				rows, ws = append(rows, r), append(ws, s.w[e])
				if !j.Batch {
					wms = append(wms, s.expiry[e])
				}
			}
			j.markDirty(side, s.keys[e])
			s.remove(int32(e), s.vals[e], s.keys[e])
		}
		if err := j.emitPadded(side, rows, ws, wms); err != nil {
			return err
		}
	}
	return nil
}

// processHeld is process for a join with a TTL: a retraction of a row that side no longer
// keeps is dropped (skipForgotten).
func (j *HashJoin) processHeld(side int, b *Batch, after int64) error {
	me := j.sides[side]
	var vb []byte
	return skipForgotten(b, after, func(i int) (string, int64) {
		vb = AllKey(vb[:0], b, i)
		if e, ok := me.index[string(vb)]; ok {
			return string(vb), me.w[e]
		}
		return string(vb), 0
	}, func(b *Batch, after int64) error { return j.process(side, b, after) }, nil, nil)
}

// process applies a batch of side; after is the watermark after its last row (TTL clocks).
func (j *HashJoin) process(side int, b *Batch, after int64) error {
	if j.Interval != nil && !j.Batch {
		if b = j.dropLate(side, b); b.N == 0 {
			return nil
		}
	}
	me, other := j.sides[side], j.sides[1-side]
	var jw []int64 // the join's watermark before each row of a timed batch (Push)
	if !j.Batch {
		jw = b.WM
	}
	keys := j.keyCols(side)
	rowKeys := make([]string, b.N)
	nullKey := make([]bool, b.N)
	matchOf := make([]int64, b.N)
	var kb []byte
	for i := 0; i < b.N; i++ {
		kb = kb[:0]
		for _, c := range keys {
			if b.Cols[c].IsNull(i) {
				nullKey[i] = true
			}
			kb = AppendKey(kb, b.Cols[c], i)
		}
		rowKeys[i] = string(kb)
	}
	if j.spilled {
		if err := j.loadBuckets(side, rowKeys, nullKey); err != nil {
			return err
		}
		defer j.evictIfFull()
	}
	if j.store != nil {
		// The buckets of b's rows change, and so do the match counts of the other side's
		// rows of those keys, which matter where that side is preserved (they pad it).
		for i, k := range rowKeys {
			j.markDirty(side, k)
			if !nullKey[i] && j.preserved(1-side) {
				j.markDirty(1-side, k)
			}
		}
	}
	// Candidate pairs (row of b, entry of other), in row order, matched in chunks so that a
	// large product is produced (and can be cancelled downstream) piece by piece.
	var pi, pe []int32
	for i := 0; i < b.N; i++ {
		if nullKey[i] {
			continue
		}
		for _, e := range other.buckets[rowKeys[i]] {
			pi = append(pi, int32(i))
			pe = append(pe, e)
			if len(pi) == pairChunk {
				if err := j.matchPairs(side, b, pi, pe, matchOf, jw); err != nil {
					return err
				}
				pi, pe = pi[:0], pe[:0]
			}
		}
	}
	if err := j.matchPairs(side, b, pi, pe, matchOf, jw); err != nil {
		return err
	}
	var padRows [][]any
	var padW, padWM []int64
	if j.Batch && j.ended[1-side] && j.store == nil {
		// A bounded query whose other side is complete: no row still to come can match b's
		// rows, so they are probed and not kept; those of a preserved side that matched
		// nothing are padded now instead of at End.
		if j.preserved(side) {
			for i := 0; i < b.N; i++ {
				if matchOf[i] == 0 {
					padRows = append(padRows, b.Row(i))
					padW = append(padW, b.Weight(i))
				}
			}
		}
		return j.emitPadded(side, padRows, padW, nil)
	}
	// Keep b's rows, and pad those of a preserved side that match nothing.
	var vb []byte
	for i := 0; i < b.N; i++ {
		w := b.Weight(i)
		row := b.Row(i)
		if nullKey[i] && !j.preserved(side) {
			continue
		}
		vb = AllKey(vb[:0], b, i)
		e, ok := me.index[string(vb)]
		if !ok {
			e = me.add(string(vb), rowKeys[i], row, matchOf[i], j.expiryOf(side, b, i))
		}
		me.w[e] += w
		if j.TTL > 0 {
			me.clk.stamp(&j.due, int8(side), e, watermarkAfter(b, i, after))
		}
		if j.preserved(side) && !j.deferPadding() && me.matches[e] == 0 {
			padRows = append(padRows, row)
			padW = append(padW, w)
			if jw != nil {
				padWM = append(padWM, jw[i])
			}
		}
		if me.w[e] == 0 {
			me.remove(e, string(vb), rowKeys[i])
		}
	}
	return j.emitPadded(side, padRows, padW, padWM)
}

// expiryOf is the watermark at which row i of side's batch can be freed (interval joins).
func (j *HashJoin) expiryOf(side int, b *Batch, i int) int64 {
	if j.Interval == nil {
		return 1<<63 - 1
	}
	if side == 0 {
		return addClamped(Int64s(b.Cols[j.Interval.LeftTime])[i], j.Interval.Hi)
	}
	return addClamped(Int64s(b.Cols[j.Interval.RightTime])[i], -j.Interval.Lo)
}

// addClamped is a + b, clamped to the int64 range: a time plus a bound or a TTL near the
// range's edge is "never", not a time that wrapped around into the past.
func addClamped(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// pairChunk bounds the candidate pairs matched at once.
const pairChunk = 1 << 16

// matchPairs evaluates candidate pairs (row pi[k] of b, entry pe[k] of the other side),
// emits the joined rows, counts matches (matchOf per row of b) and keeps the other side's
// padded rows current.
func (j *HashJoin) matchPairs(side int, b *Batch, pi, pe []int32, matchOf, jw []int64) error {
	if len(pi) == 0 {
		return nil
	}
	if j.Ctx != nil {
		if err := j.Ctx.Err(); err != nil {
			return err
		}
	}
	other := j.sides[1-side]
	matched := make([]bool, len(pi))
	joined := j.pairs(side, b, pi, pe, other)
	if j.Cond != nil {
		a, err := j.Cond.Eval(joined)
		if err != nil {
			return err
		}
		for _, k := range SelectTrue(a) {
			matched[k] = true
		}
	} else {
		for k := range matched {
			matched[k] = true
		}
	}
	var sel []int32
	var ws, wms []int64
	// A padded row of the other side changes with the entry's matches over these pairs (a
	// batch's, up to pairChunk of them), not pair by pair: an entry whose only match is
	// updated (-old +new) goes 1 -> 0 -> 1 and keeps no padded row, so it emits none. Padded
	// rows that go are retracted before the joined rows, those that come are inserted after
	// them, so a consumer applying the changes in order never meets a retraction of a row it
	// does not hold (an update split across two chunks pads and unpads in between).
	padding := j.preserved(1-side) && !j.deferPadding()
	var touched []paddedEntry
	var at map[int32]int // entry -> its place in touched
	for k, ok := range matched {
		if !ok {
			continue
		}
		i, e := pi[k], pe[k]
		w := b.Weight(int(i))
		sel = append(sel, int32(k))
		ws = append(ws, w*other.w[e])
		var wm int64
		if jw != nil {
			wm = jw[i]
			wms = append(wms, wm)
		}
		matchOf[i] += other.w[e]
		if padding {
			if at == nil {
				at = map[int32]int{}
			}
			if x, ok := at[e]; ok {
				touched[x].lastWM = wm
			} else {
				at[e] = len(touched)
				touched = append(touched, paddedEntry{e: e, before: other.matches[e], firstWM: wm, lastWM: wm})
			}
		}
		other.matches[e] += w
	}
	var unpadRows, padRows [][]any
	var unpadW, padW, unpadWM, padWM []int64
	for _, t := range touched {
		switch after := other.matches[t.e]; {
		case t.before == 0 && after != 0:
			unpadRows, unpadW = append(unpadRows, other.rows[t.e]), append(unpadW, -other.w[t.e])
			if jw != nil {
				unpadWM = append(unpadWM, t.firstWM)
			}
		case t.before != 0 && after == 0:
			padRows, padW = append(padRows, other.rows[t.e]), append(padW, other.w[t.e])
			if jw != nil {
				padWM = append(padWM, t.lastWM)
			}
		}
	}
	if err := j.emitPadded(1-side, unpadRows, unpadW, unpadWM); err != nil {
		return err
	}
	if len(sel) > 0 {
		out := joined
		if len(sel) < joined.N { // every pair matched (no Cond, or all TRUE): no copy
			out = Take(joined, sel, append(append([]types.T{}, j.LeftT...), j.RightT...))
		}
		out.W, out.WM = ws, wms
		if err := j.Out.EmitBatch(out); err != nil {
			return err
		}
	}
	return j.emitPadded(1-side, padRows, padW, padWM)
}

// paddedEntry is an entry of a join's preserved side whose matches a chunk of pairs changes:
// its matches before the chunk, and the watermarks of the first and the last of the chunk's
// rows that matched it (an unpadding goes with the first, a padding with the last).
type paddedEntry struct {
	e               int32
	before          int64
	firstWM, lastWM int64
}

func (s *joinSide) add(val, key string, row []any, matches, expiry int64) int32 {
	var e int32
	if n := len(s.free); n > 0 {
		e = s.free[n-1]
		s.free = s.free[:n-1]
		s.rows[e], s.w[e], s.matches[e], s.expiry[e], s.keys[e], s.vals[e], s.clk.seen[e] = row, 0, matches, expiry, key, val, NoWatermark
		// queued stays: the due queue may hold the slot's old entry, which re-reads the clock
	} else {
		e = int32(len(s.rows))
		s.rows = append(s.rows, row)
		s.w = append(s.w, 0)
		s.matches = append(s.matches, matches)
		s.expiry = append(s.expiry, expiry)
		s.keys = append(s.keys, key)
		s.vals = append(s.vals, val)
		s.clk.grow()
	}
	s.index[val] = e
	s.buckets[key] = append(s.buckets[key], e)
	return e
}

func (s *joinSide) remove(e int32, val, key string) {
	delete(s.index, val)
	b := s.buckets[key]
	for k, x := range b {
		if x == e {
			b[k] = b[len(b)-1]
			b = b[:len(b)-1]
			break
		}
	}
	if len(b) == 0 {
		delete(s.buckets, key)
	} else {
		s.buckets[key] = b
	}
	s.rows[e] = nil
	s.free = append(s.free, e)
}

// pairs builds the joined rows of the candidate pairs (left columns first).
func (j *HashJoin) pairs(side int, b *Batch, pi, pe []int32, other *joinSide) *Batch {
	mine := make([]arrow.Array, len(b.Cols))
	ts := j.LeftT
	ots := j.RightT
	if side == 1 {
		ts, ots = j.RightT, j.LeftT
	}
	mineAt, theirsAt := 0, len(j.LeftT) // where each side's columns start in the output
	if side == 1 {
		mineAt, theirsAt = theirsAt, mineAt
	}
	needed := func(c int) bool { return j.Need == nil || j.Need[c] }
	for c := range b.Cols {
		if !needed(mineAt + c) {
			mine[c] = array.NewNull(len(pi))
			continue
		}
		mine[c] = TakeArray(b.Cols[c], pi, ts[c])
	}
	theirs := make([]arrow.Array, len(ots))
	for c, t := range ots {
		if !needed(theirsAt + c) {
			theirs[c] = array.NewNull(len(pe))
			continue
		}
		bl := NewBuilder(t, len(pe))
		for _, e := range pe {
			bl.Append(other.rows[e][c])
		}
		theirs[c] = bl.Finish()
	}
	out := &Batch{N: len(pi)}
	if side == 0 {
		out.Cols = append(mine, theirs...)
	} else {
		out.Cols = append(theirs, mine...)
	}
	return out
}

// emitPadded emits rows of side padded with NULLs for the other side's columns, with weights
// ws and, unless nil, watermarks wms.
func (j *HashJoin) emitPadded(side int, rows [][]any, ws, wms []int64) error {
	if len(rows) == 0 {
		return nil
	}
	nl, nr := len(j.LeftT), len(j.RightT)
	full := make([][]any, len(rows))
	for i, r := range rows {
		f := make([]any, nl+nr)
		if side == 0 {
			copy(f, r)
		} else {
			copy(f[nl:], r)
		}
		full[i] = f
	}
	out := RowsToBatch(full, append(append([]types.T{}, j.LeftT...), j.RightT...))
	out.W, out.WM = ws, wms
	return j.Out.EmitBatch(out)
}

var _ Stateful = (*HashJoin)(nil)

// SaveState implements Stateful: the buckets changed since the last checkpoint go to the
// store (joinspill.go); the record holds the ports' watermarks and whether
// the buckets are spilled.
func (j *HashJoin) SaveState(w *StateWriter) {
	j.init()
	w.Int(j.wms[0])
	w.Int(j.wms[1])
	w.Bool(j.spilled)
	if j.spilled {
		j.evictAll()
	} else {
		j.writeChanges()
	}
}

// LoadState implements Stateful: unless spilled, every stored bucket is made resident.
func (j *HashJoin) LoadState(r *StateReader) error {
	j.init()
	j.wms = [2]int64{r.Int(), r.Int()}
	j.spilled = r.Bool()
	if err := r.Err(); err != nil || j.spilled {
		return err
	}
	return j.store.Each(func(kb, val []byte) error {
		if len(kb) == 0 || kb[0] > 1 {
			return errKeyCorrupt
		}
		return j.loadBucket(int(kb[0]), string(kb[1:]), val)
	})
}
