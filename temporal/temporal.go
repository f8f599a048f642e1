// Package temporal implements event-time temporal joins: each probe (left) row joins the
// version of the versioned (right) table's row with the same key whose version time is the
// largest at or before the probe's time (SPEC.md §3, as in Flink).
//
// Invariants: a probe row is emitted exactly once, when the join's watermark (the minimum
// of both inputs' watermarks) reaches its time, so later versions can no longer change its
// match; a probe row whose time is at or below the join's watermark when it arrives is late
// (reported, never applied); versioned rows are never late. Per key, versions older than the
// newest one at or below the watermark are freed.
//
// A probe's retraction (a DELETE or UPDATE of the probe table) cancels it while it waits;
// once it was emitted, the retraction retracts exactly the row emitted: the match among the
// versions that had arrived by then (each version keeps the join's watermark at its
// arrival). A retraction that cannot be matched that way — its probe was late and never
// applied, or the version it joined was freed — is a late change: reported, never applied.
package temporal

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/window"
)

// Join is an event-time temporal join. Port 0 is the probe side, port 1 the versioned side.
type Join struct {
	// Outer pads probe rows without a matching version with NULLs (LEFT JOIN).
	Outer               bool
	LeftKeys, RightKeys []int
	LeftTime, RightTime int
	LeftT, RightT       []types.T
	// Cond filters matches (over left columns followed by right columns).
	Cond exec.Expr
	// ProcTime joins each probe row at once with the current version (FOR SYSTEM_TIME AS
	// OF PROCTIME()): a lookup join, not deterministic.
	ProcTime bool
	Late     window.LateSink
	Out      exec.Output

	// keys holds each key's state by its encoding; a key's state, once made, lives as long
	// as the join, so probes and ints point to it.
	keys map[string]*keyState
	// ints finds the state of a key that is one BIGINT column by its value, without
	// encoding it: a cache over keys.
	ints map[int64]*keyState
	// multi lists the keys with more than one version: the only ones free can shrink.
	multi []*keyState
	// late counts the late probe rows (by encoding), whose retractions are late too.
	late map[string]int64
	kb   []byte
	// stamp numbers the versioned batches; kss is addVersions' scratch (each row's key).
	stamp int
	kss   []*keyState
	// The versions per key as of the last checkpoint, one entry each.
	exec.ChangedKeys
	pending  []probe // by time then arrival, unless unsorted
	unsorted bool
	wm       [2]int64
	ended    [2]bool
	started  bool
	seq      int
}

// keyState is one key's versions, in time order.
type keyState struct {
	key string // the key's encoding (exec.AppendKey of its columns)
	vs  []version
	// pruned: free dropped some of the key's oldest versions. multi: the key is in j.multi.
	pruned, multi bool
	// upsert is the stamp of the last versioned batch that inserted the key.
	upsert int
}

type version struct {
	t   int64
	row []any // nil: the key was deleted at t
	// arr is the join's watermark when the version arrived: probes up to arr were emitted
	// without it.
	arr int64
}

// probe is a waiting probe row: row i of batch src (kept columnar), or row when restored
// from a checkpoint.
type probe struct {
	t   int64
	seq int
	key string
	// ks is key's state; nil when the key had none when the probe arrived (or was restored).
	ks  *keyState
	src *exec.Batch
	i   int
	row []any
	w   int64
	// at, for a retraction of an emitted probe, is the version it was emitted with.
	at *version
}

func (p probe) values() []any {
	if p.src != nil {
		return p.src.Row(p.i)
	}
	return p.row
}

var _ exec.Operator = (*Join)(nil)

func (j *Join) init() {
	j.started = true
	j.keys = map[string]*keyState{}
	j.ints = map[int64]*keyState{}
	j.multi = nil
	j.late = map[string]int64{}
	j.wm = [2]int64{exec.NoWatermark, exec.NoWatermark}
}

// Push implements exec.Operator.
func (j *Join) Push(port int, m exec.Msg) error {
	if !j.started {
		j.init()
	}
	switch m.Kind {
	case exec.MsgWatermark:
		j.wm[port] = max(j.wm[port], m.Watermark)
		w := min(j.wm[0], j.wm[1])
		if err := j.fire(w); err != nil {
			return err
		}
		return j.Out.Emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: w})
	case exec.MsgEnd:
		j.ended[port] = true
		if !j.ended[0] || !j.ended[1] {
			return nil
		}
		if err := j.fire(1<<63 - 1); err != nil {
			return err
		}
		return j.Out.Emit(m)
	}
	if port == 1 {
		return j.addVersions(m.Batch)
	}
	return j.addProbes(m.Batch)
}

// state returns the state of the key of row i of b (columns cols); ok is false when the key
// has a NULL. A key without state gets one when create is set, else ks is nil; either way its
// encoding is then in j.kb.
func (j *Join) state(b *exec.Batch, cols []int, i int, create bool) (ks *keyState, ok bool) {
	var c *array.Int64
	if len(cols) == 1 {
		c, _ = b.Cols[cols[0]].(*array.Int64)
	}
	if c != nil {
		if c.IsNull(i) {
			return nil, false
		}
		if ks := j.ints[c.Value(i)]; ks != nil {
			return ks, true
		}
	}
	j.kb = j.kb[:0]
	for _, col := range cols {
		if b.Cols[col].IsNull(i) {
			return nil, false
		}
		j.kb = exec.AppendKey(j.kb, b.Cols[col], i)
	}
	ks = j.keys[string(j.kb)]
	if ks == nil && create {
		ks = &keyState{key: string(j.kb)}
		j.keys[ks.key] = ks
	}
	if ks != nil && c != nil {
		j.ints[c.Value(i)] = ks
	}
	return ks, true
}

// stateOf returns p's key's state, nil when it has none.
func (j *Join) stateOf(p *probe) *keyState {
	if p.ks == nil {
		p.ks = j.keys[p.key]
	}
	return p.ks
}

// addVersions records versions. A retraction whose key is re-inserted in the same batch is
// an upsert (the insertion is the new version); otherwise it deletes the key from the later
// of its version time and the versioned side's watermark. The join's watermark advances row
// by row (SPEC.md §3): when a row carries a watermark (the one before it) that makes pending
// probes due, they are emitted before it is recorded, so a version accepted after a probe
// was due does not change that probe's result, however the rows were batched.
func (j *Join) addVersions(b *exec.Batch) error {
	// Each row's key state (nil: a NULL key); stamp marks the keys the batch inserts.
	j.stamp++
	kss := j.kss[:0]
	for i := 0; i < b.N; i++ {
		ks, _ := j.state(b, j.RightKeys, i, true)
		if ks != nil && b.Weight(i) > 0 {
			ks.upsert = j.stamp
		}
		kss = append(kss, ks)
	}
	j.kss = kss
	defer clear(kss)
	var times []int64
	if j.RightTime >= 0 {
		times = exec.Int64s(b.Cols[j.RightTime])
	} else {
		// A PROCTIME lookup needs no version times: versions are kept in arrival order.
		times = make([]int64, b.N)
		for i := range times {
			times[i] = int64(j.seq)
			j.seq++
		}
	}
	earliest := j.earliestPending()
	for i := 0; i < b.N; i++ {
		rightW := j.wm[1]
		if b.WM != nil && !j.ProcTime {
			rightW = max(rightW, b.WM[i])
			if w := min(j.wm[0], rightW); w >= earliest {
				if err := j.fire(w); err != nil {
					return err
				}
				earliest = j.earliestPending()
			}
		}
		ks := kss[i]
		if ks == nil {
			continue
		}
		arr := min(j.wm[0], rightW)
		var v version
		if b.Weight(i) < 0 {
			if ks.upsert == j.stamp {
				continue
			}
			v = version{t: max(times[i], rightW), arr: arr}
		} else {
			v = version{t: times[i], row: b.Row(i), arr: arr}
		}
		j.put(ks, v)
	}
	return nil
}

// earliestPending is the smallest time of a pending probe (the largest time when none).
func (j *Join) earliestPending() int64 {
	if len(j.pending) == 0 {
		return 1<<63 - 1
	}
	j.sortPending()
	return j.pending[0].t
}

// sortPending orders the pending probes by time, then arrival, if a probe arrived out of
// order since they last were.
func (j *Join) sortPending() {
	if j.unsorted {
		sort.SliceStable(j.pending, func(a, b int) bool {
			if j.pending[a].t != j.pending[b].t {
				return j.pending[a].t < j.pending[b].t
			}
			return j.pending[a].seq < j.pending[b].seq
		})
		j.unsorted = false
	}
}

// put inserts a version in time order, after those of an equal time: the later accepted wins
// (match takes the last), and the one it replaces stays for the retraction of a probe
// emitted with it (emitted), until free drops it.
func (j *Join) put(ks *keyState, v version) {
	j.Mark(ks.key)
	vs := ks.vs
	i := sort.Search(len(vs), func(i int) bool { return vs[i].t > v.t })
	vs = append(vs, version{})
	copy(vs[i+1:], vs[i:])
	vs[i] = v
	ks.vs = vs
	if len(vs) >= 2 && !j.ProcTime && !ks.multi {
		ks.multi = true
		j.multi = append(j.multi, ks)
	}
}

func (j *Join) addProbes(b *exec.Batch) error {
	// A PROCTIME lookup has no probe time (LeftTime is not a column of it): every row probes.
	var times []int64
	if !j.ProcTime {
		times = exec.Int64s(b.Cols[j.LeftTime])
	}
	var now []probe
	for i := 0; i < b.N; i++ {
		p := probe{seq: j.seq, src: b, i: i, w: b.Weight(i)}
		if times != nil {
			if b.Cols[j.LeftTime].IsNull(i) {
				continue
			}
			p.t = times[i]
		}
		if ks, ok := j.state(b, j.LeftKeys, i, false); !ok {
			p.key = "\xff" // a NULL key matches nothing
		} else if ks != nil {
			p.key, p.ks = ks.key, ks
		} else {
			p.key = string(j.kb)
		}
		j.seq++
		if j.ProcTime {
			now = append(now, p)
			continue
		}
		leftW := j.wm[0]
		if b.WM != nil {
			leftW = b.WM[i]
		}
		w := min(leftW, j.wm[1])
		if p.w > 0 && p.t <= w {
			j.reportLate(p, w, 1)
			continue
		}
		if p.w < 0 {
			if j.cancel(p) {
				continue
			}
			if p.t <= w {
				// Emitted already, or late itself.
				if j.kb = exec.AppendValuesKey(j.kb[:0], p.values()); j.late[string(j.kb)] > 0 {
					j.reportLate(p, w, -1)
					continue
				}
				m, ok := j.emitted(p)
				if !ok {
					j.reportLate(p, w, 0)
					continue
				}
				p.at = m
			}
		}
		if n := len(j.pending); n > 0 && p.t < j.pending[n-1].t {
			j.unsorted = true
		}
		j.pending = append(j.pending, p)
	}
	if len(now) > 0 {
		return j.emit(now, true)
	}
	return nil
}

// reportLate reports a late probe change; count adds to the late probe rows its retractions
// are matched against (1: a late insertion, -1: a retraction of one).
func (j *Join) reportLate(p probe, w int64, count int64) {
	if count != 0 {
		j.kb = exec.AppendValuesKey(j.kb[:0], p.values())
		if j.late[string(j.kb)] += count; j.late[string(j.kb)] == 0 {
			delete(j.late, string(j.kb))
		}
	}
	if j.Late != nil {
		j.Late(window.LateRow{EventTime: p.t, Watermark: w, Row: p.values()})
	}
}

// emitted returns the version probe p was emitted with — among the versions that had
// arrived by then, the one with the largest time at or before p's — with ok false when that
// is not known any more (an older version was freed and none of those kept qualifies).
func (j *Join) emitted(p probe) (*version, bool) {
	ks := j.stateOf(&p)
	if ks == nil {
		return &version{}, true
	}
	vs := ks.vs
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].t <= p.t && vs[i].arr < p.t {
			v := vs[i]
			return &v, true
		}
	}
	if ks.pruned {
		return nil, false
	}
	return &version{}, true // no version had arrived: the probe joined nothing
}

// cancel removes a pending probe equal to the retracted row p.
func (j *Join) cancel(p probe) bool {
	for i, q := range j.pending {
		if q.w > 0 && q.t == p.t && sameRow(q.values(), p.values()) {
			j.pending = append(j.pending[:i], j.pending[i+1:]...)
			return true
		}
	}
	return false
}

func sameRow(a, b []any) bool {
	for i := range a {
		if exec.CompareValues(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// fire emits the pending probes with time <= w and frees versions no probe can reach.
func (j *Join) fire(w int64) error {
	if len(j.pending) == 0 {
		j.free(w)
		return nil
	}
	j.sortPending()
	n := sort.Search(len(j.pending), func(i int) bool { return j.pending[i].t > w })
	if n == 0 {
		j.free(w)
		return nil
	}
	if err := j.emit(j.pending[:n], false); err != nil {
		return err
	}
	// The rest move to the front when they are at most as many as the probes emitted (so
	// each probe moves at most once, on average), which keeps the slice's capacity for
	// the probes to come; the emitted ones are cleared, so the batches they point into can go.
	if rest := len(j.pending) - n; rest <= n {
		copy(j.pending, j.pending[n:])
		clear(j.pending[rest:])
		j.pending = j.pending[:rest]
	} else {
		clear(j.pending[:n])
		j.pending = j.pending[n:]
	}
	j.free(w)
	return nil
}

// free drops, per key, versions older than the newest one at or below w.
func (j *Join) free(w int64) {
	if j.ProcTime {
		return
	}
	kept := j.multi[:0]
	for _, ks := range j.multi {
		vs := ks.vs
		i := sort.Search(len(vs), func(i int) bool { return vs[i].t > w }) - 1
		if i > 0 {
			vs = append([]version(nil), vs[i:]...)
			ks.vs = vs
			ks.pruned = true
			j.Mark(ks.key)
		}
		if len(vs) < 2 {
			ks.multi = false
		} else {
			kept = append(kept, ks)
		}
	}
	clear(j.multi[len(kept):])
	j.multi = kept
}

// match returns the version a probe joins: the latest one when current is set, else the
// one with the largest time at or before the probe's; nil when none (or deleted).
func (j *Join) match(p *probe, current bool) []any {
	if p.at != nil {
		return p.at.row
	}
	ks := j.stateOf(p)
	if ks == nil {
		return nil
	}
	vs := ks.vs
	if current {
		if len(vs) > 0 {
			return vs[len(vs)-1].row
		}
		return nil
	}
	if n := len(vs); n > 0 && vs[n-1].t <= p.t { // the common case: the newest version
		return vs[n-1].row
	}
	if i := sort.Search(len(vs), func(i int) bool { return vs[i].t > p.t }) - 1; i >= 0 {
		return vs[i].row
	}
	return nil
}

// emit joins probes with their versions.
func (j *Join) emit(ps []probe, current bool) error {
	if j.Cond != nil {
		return j.emitFiltered(ps, current)
	}
	right := make([]*exec.Builder, len(j.RightT))
	for c, t := range j.RightT {
		right[c] = exec.NewBuilder(t, len(ps))
	}
	keep := make([]int32, 0, len(ps)) // the probes emitted, into ps
	ws := make([]int64, 0, len(ps))
	weighted := false
	for k := range ps {
		p := &ps[k]
		m := j.match(p, current)
		if m == nil && !j.Outer {
			continue
		}
		for c, b := range right {
			if m == nil {
				b.Append(nil)
			} else {
				b.Append(m[c])
			}
		}
		keep = append(keep, int32(k))
		ws = append(ws, p.w)
		weighted = weighted || p.w != 1
	}
	if len(ws) == 0 {
		return nil
	}
	b := j.probeRows(ps, keep)
	for _, r := range right {
		b.Cols = append(b.Cols, r.Finish())
	}
	if weighted {
		b.W = ws
	}
	return j.Out.EmitBatch(b)
}

// probeRows gathers the rows of ps[keep] (the left columns), column by column from each run
// of probes kept in one source batch.
func (j *Join) probeRows(ps []probe, keep []int32) *exec.Batch {
	var parts []*exec.Batch
	var src *exec.Batch
	var idx []int32
	var rows [][]any
	flush := func() {
		if len(idx) > 0 {
			part := &exec.Batch{N: len(idx), Cols: make([]arrow.Array, len(j.LeftT))}
			for c, t := range j.LeftT {
				part.Cols[c] = exec.TakeArray(src.Cols[c], idx, t)
			}
			parts, idx = append(parts, part), idx[:0]
		}
		if len(rows) > 0 {
			parts, rows = append(parts, exec.RowsToBatch(rows, j.LeftT)), nil
		}
	}
	for _, k := range keep {
		p := &ps[k]
		if p.src != src {
			flush()
			src = p.src
		}
		if src != nil {
			idx = append(idx, int32(p.i))
		} else {
			rows = append(rows, p.row) // restored from a checkpoint
		}
	}
	flush()
	return exec.Concat(parts, j.LeftT)
}

// emitFiltered joins probes with their versions under the join's extra condition: a version
// failing it counts as no match (LEFT JOIN pads).
func (j *Join) emitFiltered(ps []probe, current bool) error {
	ts := append(append([]types.T{}, j.LeftT...), j.RightT...)
	nl, nr := len(j.LeftT), len(j.RightT)
	var rows [][]any
	var ws []int64
	var padded []int
	for _, p := range ps {
		match := j.match(&p, current)
		row := make([]any, nl+nr)
		copy(row, p.values())
		if match != nil {
			copy(row[nl:], match)
		} else if !j.Outer {
			continue
		} else {
			padded = append(padded, len(rows))
		}
		rows = append(rows, row)
		ws = append(ws, p.w)
	}
	if len(rows) == 0 {
		return nil
	}
	b := exec.RowsToBatch(rows, ts)
	b.W = ws
	a, err := j.Cond.Eval(b)
	if err != nil {
		return err
	}
	keep := make([]bool, b.N)
	for _, i := range exec.SelectTrue(a) {
		keep[i] = true
	}
	for _, i := range padded {
		keep[i] = true
	}
	var sel []int32
	for i, k := range keep {
		if k {
			sel = append(sel, int32(i))
			continue
		}
		if j.Outer {
			for c := nl; c < nl+nr; c++ {
				rows[i][c] = nil
			}
			sel = append(sel, int32(i))
		}
	}
	b = exec.RowsToBatch(pick(rows, sel), ts)
	b.W = pickW(ws, sel)
	return j.Out.EmitBatch(b)
}

func pick(rows [][]any, sel []int32) [][]any {
	out := make([][]any, len(sel))
	for i, s := range sel {
		out[i] = rows[s]
	}
	return out
}

func pickW(ws []int64, sel []int32) []int64 {
	out := make([]int64, len(sel))
	for i, s := range sel {
		out[i] = ws[s]
	}
	return out
}

var _ exec.Keyed = (*Join)(nil)

// SaveState implements exec.Stateful: the keys whose versions changed since the last
// checkpoint go to the store; the record holds the probes waiting for the watermark and
// both inputs' watermarks.
func (j *Join) SaveState(w *exec.StateWriter) {
	if !j.started {
		j.init()
	}
	j.WriteChanged(func(k string) []byte {
		var ks keyState
		if p := j.keys[k]; p != nil {
			ks = *p
		}
		vw := &exec.StateWriter{}
		vw.Int(int64(len(ks.vs)))
		for _, v := range ks.vs {
			vw.Int(v.t)
			vw.Int(v.arr)
			vw.Row(v.row)
		}
		vw.Bool(ks.pruned)
		return vw.Buf
	})
	w.Int(j.wm[0])
	w.Int(j.wm[1])
	w.Int(int64(j.seq))
	w.Int(int64(len(j.pending)))
	for _, p := range j.pending {
		w.Int(p.t)
		w.Int(int64(p.seq))
		w.Value(p.key)
		w.Row(p.values())
		w.Int(p.w)
		w.Bool(p.at != nil)
		if p.at != nil {
			w.Row(p.at.row)
		}
	}
	w.Int(int64(len(j.late)))
	for kb, n := range j.late {
		w.Value(kb)
		w.Int(n)
	}
}

// LoadState implements exec.Stateful.
func (j *Join) LoadState(r *exec.StateReader) error {
	j.init()
	j.wm = [2]int64{r.Int(), r.Int()}
	j.seq = int(r.Int())
	n := r.Len()
	for i := 0; i < n && r.Err() == nil; i++ {
		p := probe{t: r.Int(), seq: int(r.Int())}
		p.key, _ = r.Value().(string)
		p.row = r.Row()
		p.w = r.Int()
		if r.Bool() {
			p.at = &version{row: r.Row()}
		}
		j.pending = append(j.pending, p)
	}
	n = r.Len()
	for i := 0; i < n && r.Err() == nil; i++ {
		kb, _ := r.Value().(string)
		j.late[kb] = r.Int()
	}
	j.unsorted = true
	if err := r.Err(); err != nil {
		return err
	}
	return j.EachStored(func(k, val []byte) error {
		vr := &exec.StateReader{Buf: val}
		m := vr.Len()
		vs := make([]version, 0, max(m, 0))
		for q := 0; q < m && vr.Err() == nil; q++ {
			vs = append(vs, version{t: vr.Int(), arr: vr.Int(), row: vr.Row()})
		}
		ks := &keyState{key: string(k), vs: vs, pruned: vr.Bool()}
		j.keys[ks.key] = ks
		if len(vs) > 1 && !j.ProcTime {
			ks.multi = true
			j.multi = append(j.multi, ks)
		}
		return vr.Err()
	})
}
