package window

import (
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Session is a SESSION window aggregate. Each row opens a window [ts, ts + Gap) in its
// partition; windows that overlap or touch merge (rows exactly Gap apart share a session, as
// in Flink), and window_end is the last row's ts + Gap. A session is complete when the
// watermark W >= window_end - 1; a complete session is final: a later row touching it starts
// a new session. A row is late when the session it forms after merging is complete.
//
// The operator keeps each open session's rows and computes a session's output rows with
// Eval (the aggregation above the window, over the session's rows with window_start,
// window_end and window_time appended). By default it emits a session's rows whenever it
// changes (retracting the previous rows, including those of sessions merged away); with
// EmitOnClose, once when the session completes; in Batch mode, every session at End.
// Retractions from the input remove a row from the session that holds it, which then spans
// the rows it has left, split in two where the row bridged a gap (see regroup); a session
// left with no row is gone. In an upsert table's change, a retraction right before an
// insertion into the same partition (a keyed UPDATE) is regrouped after both.
type Session struct {
	Gap      int64
	TimeCol  int
	PartCols []int
	Types    []types.T // input column types
	Eval     func(*exec.Batch) (*exec.Batch, error)
	// OutTypes are the types of Eval's output.
	OutTypes    []types.T
	EmitOnClose bool
	Batch       bool
	Late        LateSink
	Out         exec.Output

	parts map[string][]*session
	dirty map[*session]bool
	gone  []*session
	kb    []byte
	nb    []byte // the next row's partition key, to pair an update
	// Each partition's open sessions as of the last checkpoint, one entry each.
	exec.ChangedKeys
	// w is the last watermark received, the lateness reference for rows carrying none; it
	// is state, as window.Assign's.
	w    int64
	seen bool
}

type session struct {
	key        string
	start, end int64
	rows       [][]any
	w          []int64 // the rows' weights
	ts         []int64 // the rows' event times (searched without unboxing rows)
	emitted    *exec.Batch
}

// add appends a row of weight w and event time ts.
func (x *session) add(row []any, w, ts int64) {
	x.rows, x.w, x.ts = append(x.rows, row), append(x.w, w), append(x.ts, ts)
}

var _ exec.Operator = (*Session)(nil)

// Push implements exec.Operator.
func (s *Session) Push(_ int, m exec.Msg) error {
	if s.parts == nil {
		s.parts = map[string][]*session{}
		s.dirty = map[*session]bool{}
	}
	switch m.Kind {
	case exec.MsgWatermark:
		if !s.seen || m.Watermark > s.w {
			s.w, s.seen = m.Watermark, true
		}
		if err := s.fire(m.Watermark); err != nil {
			return err
		}
		return s.Out.Emit(m)
	case exec.MsgEnd:
		if s.Batch || s.EmitOnClose {
			if err := s.fire(1<<63 - 1); err != nil {
				return err
			}
		}
		return s.Out.Emit(m)
	}
	b := m.Batch
	tcol := b.Cols[s.TimeCol]
	var left *session // a session a keyed UPDATE's old row left, regrouped after its new row
	var leftTs int64
	for i := 0; i < b.N; i++ {
		wm := exec.NoWatermark
		switch {
		case b.WM != nil:
			wm = b.WM[i]
		case s.seen:
			wm = s.w
		}
		if tcol.IsNull(i) { // no session: reported like a late row
			if s.Late != nil {
				s.Late(LateRow{EventTime: NoTime, Watermark: wm, Row: b.Row(i)})
			}
			continue
		}
		ts := exec.Int64s(tcol)[i]
		s.kb = exec.RowKey(s.kb[:0], b, s.PartCols, i)
		key := string(s.kb)
		if w := b.Weight(i); w > 0 {
			ns := s.insert(key, ts, wm, b.Row(i), w)
			if left != nil {
				if !slices.Contains(s.parts[key], left) { // the new row's session absorbed it
					left = ns
				}
				s.regroup(left, leftTs)
				left = nil
			}
			continue
		}
		x := s.retract(key, ts, wm, b.Row(i), b.Weight(i))
		// In an upsert table's change (Batch.Updates), a retraction right before an insertion
		// into the same partition is one row's update (a keyed UPDATE's or an upsert's old
		// and new row): the session keeps its bounds until the new row is in, so a row
		// rewritten or moved within its session neither splits nor shrinks it on the way.
		paired := x != nil && b.Updates && i+1 < b.N && b.Weight(i+1) > 0 && !tcol.IsNull(i+1)
		if paired {
			s.nb = exec.RowKey(s.nb[:0], b, s.PartCols, i+1)
			paired = string(s.nb) == key
		}
		if paired {
			left, leftTs = x, ts
		} else if x != nil {
			s.regroup(x, ts)
		}
	}
	if s.Batch || s.EmitOnClose {
		s.dirty = map[*session]bool{}
		s.gone = nil
		return nil
	}
	return s.emitChanges()
}

// insert adds a row to the session it forms, merging the open ones it overlaps or touches,
// and returns that session (nil: the row is late).
func (s *Session) insert(key string, ts, wm int64, row []any, w int64) *session {
	start, end := ts, ts+s.Gap
	list := s.parts[key]
	var keep, merged []*session
	for changed := true; changed; {
		changed = false
		keep = keep[:0]
		for _, x := range list {
			open := x.end-1 > wm
			if open && x.start <= end && start <= x.end {
				start, end = min(start, x.start), max(end, x.end)
				merged = append(merged, x)
				changed = true
				continue
			}
			keep = append(keep, x)
		}
		list = append([]*session(nil), keep...)
	}
	if end-1 <= wm {
		if s.Late != nil {
			s.Late(LateRow{EventTime: ts, Watermark: wm, Row: row})
		}
		return nil
	}
	// The largest merged session absorbs the others, keeping its rows and its emitted output
	// (retracted when it is next emitted): a session that keeps growing costs O(1) per row,
	// not a copy of its rows.
	var ns *session
	for _, x := range merged {
		if ns == nil || len(x.rows) > len(ns.rows) {
			ns = x
		}
	}
	if ns == nil {
		ns = &session{key: key}
	}
	ns.start, ns.end = start, end
	for _, x := range merged {
		if x == ns {
			continue
		}
		ns.rows = append(ns.rows, x.rows...)
		ns.w = append(ns.w, x.w...)
		ns.ts = append(ns.ts, x.ts...)
		if x.emitted != nil {
			s.gone = append(s.gone, x)
		}
		delete(s.dirty, x)
	}
	ns.add(row, w, ts)
	list = append(list, ns)
	sort.Slice(list, func(a, b int) bool { return list[a].start < list[b].start })
	s.parts[key] = list
	s.dirty[ns] = true
	s.Mark(key)
	return ns
}

// retract takes a row back from the open session holding it and returns that session if the
// row left it (its weight came to 0), for regroup; a retraction from a complete session is
// late.
func (s *Session) retract(key string, ts, wm int64, row []any, w int64) *session {
	for _, x := range s.parts[key] {
		if ts < x.start || ts >= x.end || x.end-1 <= wm {
			continue // not its session, or complete when the retraction arrived
		}
		for j, t := range x.ts {
			// The event time first: an int64 compare rules out nearly every other row.
			if t != ts || !sameRow(x.rows[j], row) {
				continue
			}
			x.w[j] += w
			s.dirty[x] = true
			s.Mark(key)
			if x.w[j] > 0 {
				return nil
			}
			x.rows = append(x.rows[:j], x.rows[j+1:]...)
			x.w = append(x.w[:j], x.w[j+1:]...)
			x.ts = append(x.ts[:j], x.ts[j+1:]...)
			return x
		}
	}
	// The row's session is complete (or the row was late itself): a late change.
	if s.Late != nil {
		s.Late(LateRow{EventTime: ts, Watermark: wm, Row: row})
	}
	return nil
}

// regroup fits session x to the rows it has left after one at ts left it:
// [least ts, greatest ts + gap). Only the gap that row leaves can part the others (they were
// at most Gap apart), so x splits at most in two, where the closest rows on either side of ts
// are more than Gap apart: x keeps the rows before, a new session takes those after. A part
// the watermark has passed is complete at once, as SPEC's rule reads over the rows left (so
// is a session whose last rows left). A session left with no row is gone (its emitted rows
// are retracted).
func (s *Session) regroup(x *session, ts int64) {
	key := x.key
	if len(x.rows) == 0 {
		list := s.parts[key]
		for i, y := range list {
			if y == x {
				s.parts[key] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(s.parts[key]) == 0 {
			delete(s.parts, key)
		}
		delete(s.dirty, x)
		if x.emitted != nil {
			s.gone = append(s.gone, x)
		}
		return
	}
	lo, hi := int64(1<<63-1), int64(-1<<63)
	before, after := int64(-1<<63), int64(1<<63-1) // the closest times at or before ts, at or after it
	for _, t := range x.ts {
		lo, hi = min(lo, t), max(hi, t)
		if t <= ts {
			before = max(before, t)
		}
		if t >= ts {
			after = min(after, t)
		}
	}
	x.start, x.end = lo, hi+s.Gap
	if before == -1<<63 || after == 1<<63-1 || after-before <= s.Gap {
		return
	}
	y := &session{key: key, start: after, end: x.end}
	rows, ws, times := x.rows, x.w, x.ts
	x.rows, x.w, x.ts, x.end = nil, nil, nil, before+s.Gap
	for j, r := range rows {
		if times[j] < ts {
			x.add(r, ws[j], times[j])
		} else {
			y.add(r, ws[j], times[j])
		}
	}
	list := append(s.parts[key], y)
	sort.Slice(list, func(a, b int) bool { return list[a].start < list[b].start })
	s.parts[key] = list
	s.dirty[x], s.dirty[y] = true, true
}

func sameRow(a, b []any) bool {
	for i := range a {
		if exec.CompareValues(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// evalSession computes a session's output rows.
func (s *Session) evalSession(x *session) (*exec.Batch, error) {
	if len(x.rows) == 0 {
		return nil, nil
	}
	var rows [][]any
	var ws []int64
	for j, r := range x.rows {
		rows = append(rows, r)
		ws = append(ws, x.w[j])
	}
	in := exec.RowsToBatch(rows, s.Types)
	in.W = ws
	n := len(rows)
	in.Cols = append(in.Cols, constInt(x.start, n), constInt(x.end, n), constInt(x.end-1, n))
	return s.Eval(in)
}

func constInt(v int64, n int) arrow.Array {
	return exec.ConstArray(types.TTimestamp, v, n)
}

// emitChanges retracts the previous rows of changed and merged-away sessions and emits the
// current rows of changed ones.
func (s *Session) emitChanges() error {
	var olds []*exec.Batch
	for _, x := range s.gone {
		olds = append(olds, x.emitted)
		x.emitted = nil
	}
	s.gone = nil
	dirty := make([]*session, 0, len(s.dirty))
	for x := range s.dirty {
		dirty = append(dirty, x)
	}
	sort.Slice(dirty, func(a, b int) bool {
		x, y := dirty[a], dirty[b]
		if x.key != y.key {
			return x.key < y.key
		}
		if x.start != y.start {
			return x.start < y.start
		}
		return x.end < y.end // a complete session and an open one may start together
	})
	s.dirty = map[*session]bool{}
	var news []*exec.Batch
	for _, x := range dirty {
		if x.emitted != nil {
			olds = append(olds, x.emitted)
		}
		cur, err := s.evalSession(x)
		if err != nil {
			return err
		}
		x.emitted = cur
		if cur != nil {
			news = append(news, cur)
		}
	}
	parts := make([]*exec.Batch, 0, len(olds)+len(news))
	for _, o := range olds {
		parts = append(parts, &exec.Batch{Cols: o.Cols, N: o.N, W: negate(o)})
	}
	parts = append(parts, news...)
	return s.Out.EmitBatch(exec.ConcatChanges(parts...))
}

func negate(b *exec.Batch) []int64 {
	w := make([]int64, b.N)
	for i := range w {
		w[i] = -b.Weight(i)
	}
	return w
}

// fire completes the sessions with window_end - 1 <= w: emits them (EMIT ON WINDOW CLOSE,
// Batch) and frees their state.
func (s *Session) fire(w int64) error {
	keys := make([]string, 0, len(s.parts))
	for k := range s.parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		list := s.parts[k]
		keep := list[:0]
		for _, x := range list {
			if x.end-1 > w {
				keep = append(keep, x)
				continue
			}
			if s.EmitOnClose || s.Batch {
				out, err := s.evalSession(x)
				if err != nil {
					return err
				}
				if err := s.Out.EmitBatch(out); err != nil {
					return err
				}
			}
		}
		if len(keep) < len(list) {
			s.Mark(k)
		}
		if len(keep) == 0 {
			delete(s.parts, k)
		} else {
			s.parts[k] = keep
		}
	}
	return nil
}

var _ exec.Keyed = (*Session)(nil)

// SaveState implements exec.Stateful: the partitions changed since the last checkpoint go to
// the store, each its open sessions with their rows and the output rows they last emitted;
// those with none left leave it. The record holds the last watermark received.
func (s *Session) SaveState(w *exec.StateWriter) {
	w.Bool(s.seen)
	w.Int(s.w)
	s.WriteChanged(func(k string) []byte {
		list := s.parts[k]
		if len(list) == 0 {
			return nil
		}
		pw := &exec.StateWriter{}
		pw.Int(int64(len(list)))
		for _, x := range list {
			pw.Int(x.start)
			pw.Int(x.end)
			pw.Int(int64(len(x.rows)))
			for j, r := range x.rows {
				pw.Row(r)
				pw.Int(x.w[j])
			}
			pw.Batch(x.emitted)
		}
		return pw.Buf
	})
}

// LoadState implements exec.Stateful: every stored partition's sessions are made resident.
func (s *Session) LoadState(r *exec.StateReader) error {
	s.parts = map[string][]*session{}
	s.dirty = map[*session]bool{}
	if s.seen, s.w = r.Bool(), r.Int(); r.Err() != nil {
		return r.Err()
	}
	return s.EachStored(func(kb, val []byte) error {
		k := string(kb)
		pr := &exec.StateReader{Buf: val}
		m := pr.Len()
		for j := 0; j < m && pr.Err() == nil; j++ {
			x := &session{key: k, start: pr.Int(), end: pr.Int()}
			rows := pr.Len()
			for q := 0; q < rows && pr.Err() == nil; q++ {
				row, w := pr.Row(), pr.Int()
				if pr.Err() != nil {
					break
				}
				ts, _ := row[s.TimeCol].(int64)
				x.add(row, w, ts)
			}
			x.emitted = pr.Batch(s.OutTypes)
			s.parts[k] = append(s.parts[k], x)
		}
		return pr.Err()
	})
}
