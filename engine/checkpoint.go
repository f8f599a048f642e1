package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
)

// A checkpoint snapshots, in one Pebble batch, the state of every view's dataflow (its
// operators' state, its rows — what changed since the last checkpoint, see persist — its
// late rows and watermark) and each table's watermark, as of the store-wide sequence number
// seq: every segment numbered <= seq had reached the
// views. Open restores the snapshot and replays only the segments after seq, so restart
// time follows the rows since the last checkpoint, not all rows stored. Source offsets need
// no snapshot: each connector batch commits its offset with its rows.
//
// Tables are changelogs (package table), so no write invalidates a checkpoint. It is not
// used when a view exists that it does not cover (created after it); Open then replays every
// stored change, which gives the same views, only slower.

const ckptKey = "ckpt"

// ckptFormat is the layout of the checkpoint records, written first in the header as its
// negation (an older header began with its id, a positive number). A checkpoint of another
// layout — from an older version of streamsql — is not used: Open rebuilds the views from
// their tables, as when no checkpoint covers them. 10: a window's assignment and a SESSION
// window keep the last watermark they received (the lateness reference for rows carrying
// none): a view's operator states, and the numbers its keyed state is stored under, differ
// from 9's. 11: STRING_AGG, FIRST_VALUE and LAST_VALUE keep a group's values in arrival
// order (10's kept their multiset, or the least or greatest value, as MIN and MAX do). 12: a
// ranking (Top-N, ROW_NUMBER and the other window functions in a view) keeps an entry per
// row, not per partition (exec.partKey).
const ckptFormat = 12

type checkpointInfo struct {
	id     int64
	seq    uint64
	at     time.Time
	bytes  int64
	took   time.Duration
	reason string
	tables map[uint64]int64 // table id -> watermark
	views  map[uint64]bool  // view ids covered
}

// checkpoint delivers the queue and writes a checkpoint of every committed change. The
// engine's lock must be held.
func (e *Engine) checkpoint(reason string) error { return e.checkpointAt(reason, true) }

// checkpointAt writes a checkpoint; with drain, after delivering the queue. Without, it
// covers what the views have been delivered: up to the sequence number before the oldest
// queued change, with each table's watermark before its oldest queued change, and the
// queue is replayed after it on recovery. The engine's lock is held and no delivery is in
// flight.
func (e *Engine) checkpointAt(reason string, drain bool) error {
	if drain {
		e.deliverQueued()
	}
	start := time.Now()
	seq, wms := e.seq.Last(), map[*tableObj]int64{}
	e.qmu.Lock()
	queue := e.queue // stays queued: no delivery runs, and writes wait for the engine's lock
	e.qmu.Unlock()
	if len(queue) > 0 {
		seq = queue[0].from
		for _, q := range queue {
			if _, ok := wms[q.t]; !ok {
				wms[q.t] = q.prevW
			}
		}
	}
	wb := e.store.NewBatch()
	wb.DeleteMetaPrefix("ckpt/view/")
	info := &checkpointInfo{id: e.ckptID + 1, seq: seq, at: start, reason: reason,
		tables: map[uint64]int64{}, views: map[uint64]bool{}}
	var total int64
	var saved []func()
	e.beginSpills()
	for _, v := range e.views {
		w := &exec.StateWriter{}
		n, done := e.saveView(v, w, wb)
		wb.PutMeta("ckpt/view/"+strconv.FormatUint(v.entry.ID, 10), w.Buf)
		total += int64(len(w.Buf)) + n
		info.views[v.entry.ID] = true
		saved = append(saved, done)
	}
	for _, t := range e.tables {
		w, ok := wms[t]
		if !ok {
			w = t.wm.W
		}
		info.tables[t.entry.ID] = w
	}
	// Changes the views emitted before the checkpoint are not replayed after it, so the
	// sinks must have them acknowledged first.
	ctx, cancel := context.WithTimeout(context.Background(), kafkaCheckTimeout)
	defer cancel()
	if err := e.flushSinks(ctx); err != nil {
		wb.Discard()
		e.keepSpills()
		return fmt.Errorf("checkpoint: %w", err)
	}
	h := &exec.StateWriter{}
	h.Int(-ckptFormat)
	h.Int(info.id)
	h.Int(int64(info.seq))
	h.Int(start.UnixMilli())
	h.Int(int64(len(info.tables)))
	for id, w := range info.tables {
		h.Int(int64(id))
		h.Int(w)
	}
	h.Int(int64(len(info.views)))
	for id := range info.views {
		h.Int(int64(id))
	}
	wb.PutMeta(ckptKey, h.Buf)
	total += int64(len(h.Buf))
	n, spilled := e.flushSpills(wb)
	total += n
	if err := e.store.Commit(wb); err != nil {
		e.keepSpills()
		return fmt.Errorf("checkpoint: %w", err)
	}
	spilled()
	for _, done := range saved {
		done()
	}
	info.bytes, info.took = total, time.Since(start)
	e.ckpt, e.ckptID, e.dirty = info, info.id, len(queue) > 0
	e.ckpts = append(e.ckpts, info)
	if len(e.ckpts) > 100 {
		e.ckpts = e.ckpts[1:]
	}
	return nil
}

// saveView writes a view's checkpoint record into w, and what changed in its rows since the
// last checkpoint into wb (bytes of them); done, called once wb is committed, records that
// the store holds them.
func (e *Engine) saveView(v *viewObj, w *exec.StateWriter, wb *state.Batch) (bytes int64, done func()) {
	w.Int(int64(len(v.state)))
	for _, op := range v.state {
		sub := &exec.StateWriter{}
		op.SaveState(sub)
		w.Int(int64(len(sub.Buf)))
		w.Buf = append(w.Buf, sub.Buf...)
	}
	bytes, done = v.store.persist(w, wb, e.spillStore(v, segmentsOp))
	w.Int(v.watermark)
	w.Int(v.lateCount)
	// The late rows not yet in the log go to it, in segments of at most lateSegRows.
	logged := len(v.lateRows)
	w.Int(int64(logged))
	segs := v.lateSegs
	for lo := v.lateLogged; lo < logged; lo += lateSegRows {
		seg := &exec.StateWriter{}
		for _, l := range v.lateRows[lo:min(lo+lateSegRows, logged)] {
			seg.Value(l.table)
			seg.Int(l.eventTime)
			seg.Int(l.watermark)
			seg.Value(l.rowJSON)
		}
		e.spillStore(v, lateOp).Write(wb, binary.BigEndian.AppendUint64(nil, uint64(segs)), seg.Buf)
		bytes += int64(len(seg.Buf))
		segs++
	}
	rowsDone := done
	return bytes, func() {
		rowsDone()
		v.lateLogged, v.lateSegs = logged, segs
	}
}

// lateSegRows is the most late rows a segment of a view's late-row log holds.
const lateSegRows = 1 << 14

// How a checkpoint holds a view's rows.
const (
	rowsSpilled  = -1 // in the row store (state.Spill op 0), each under its encoding with its count
	rowsSegments = -2 // as a log of segments (segmentsOp), replayed in order; and in memory
)

// segmentsOp is the operator number (state.Spill) of a view's row segments, lateOp of its
// late rows' log (segments of rows, each checkpoint's new ones); 0 is its spilled rows', i+1
// its operator i's.
const (
	segmentsOp = 0xffff
	lateOp     = 0xfffe
)

// A segment is a kind byte, then: segCols, a batch of rows added, in the segment encoding
// (exec.AppendSegment), or segColsWM, the same with the watermark each row was judged against as
// a last column (a view over this one judges lateness by it); segAdd, rows added, and
// segSub, rows retracted, as row encodings each after its length (segAdd for a batch
// AppendSegment refuses: its rows lose their watermarks). A checkpoint appends what changed
// since the last one as segments, so it writes a few large values, not a key per row; once
// the log holds more than twice the rows it adds up to, or more than twice their bytes (as
// Batch.MemSize weighs rows; a retraction segment by its length), the next checkpoint
// rewrites it as the rows alone.
const (
	segCols   = 'C'
	segColsWM = 'W'
	segAdd    = 'A'
	segSub    = 'D'
	// minLogRows and minLogBytes are a log length and size never worth a rewrite.
	minLogRows  = 4096
	minLogBytes = 4 << 20
)

// persist records in w how the checkpoint holds the rows, and writes into wb what changed
// in them since the last checkpoint (written bytes of it) as segments (segs); spilled rows are
// staged in rows, which the checkpoint flushes. done, called once wb is committed, records
// that the store holds them.
func (s *viewStore) persist(w *exec.StateWriter, wb *state.Batch, segs *state.Spill) (written int64, done func()) {
	if s.spill != nil {
		w.Int(rowsSpilled)
		w.Int(s.n)
		if !s.dropSegs {
			return 0, func() {}
		}
		segs.Clear(wb) // the rows moved to the row store
		return 0, func() { s.dropSegs, s.segs, s.logRows, s.logBytes = false, 0, 0, 0 }
	}
	w.Int(rowsSegments)
	n, logRows, logBytes := s.segs, s.logRows, s.logBytes
	// write appends a segment of rows rows, weighing size (Batch.MemSize for rows added, as
	// viewStore.bytes weighs the live ones; a retraction segment's length).
	write := func(buf []byte, rows, size int64) {
		segs.Write(wb, binary.BigEndian.AppendUint64(nil, n), buf)
		n++
		logRows += rows
		logBytes += size
		written += int64(len(buf))
	}
	writeAdds := func(bs []*exec.Batch) {
		var kb []byte
		var parts []*exec.Batch // bs, in segments of at most exec.MaxSegmentRows rows
		for _, b := range bs {
			for lo := 0; lo < b.N; lo += exec.MaxSegmentRows {
				if b.N <= exec.MaxSegmentRows {
					parts = append(parts, b)
					break
				}
				parts = append(parts, b.Slice(lo, min(lo+exec.MaxSegmentRows, b.N)))
			}
		}
		for _, b := range parts {
			kind, cols, ts := byte(segCols), b, s.types
			if b.WM != nil { // the watermarks go along as a last column
				kind, ts = segColsWM, append(append([]types.T{}, s.types...), types.TBigInt)
				cols = &exec.Batch{N: b.N, Cols: append(append([]arrow.Array{}, b.Cols...), exec.NewInt64(b.WM, nil))}
			}
			if enc, err := exec.AppendSegment([]byte{kind}, cols, ts); err == nil {
				write(enc, int64(b.N), b.MemSize())
				continue
			}
			buf := []byte{segAdd} // a column of another Arrow type (a NULL literal's)
			for i := 0; i < b.N; i++ {
				kb = exec.AllKey(kb[:0], b, i)
				buf = append(binary.AppendUvarint(buf, uint64(len(kb))), kb...)
			}
			write(buf, int64(b.N), b.MemSize())
		}
	}
	newRows, newBytes := s.nSubs, int64(0)
	for _, b := range s.newAdds {
		newRows += int64(b.N)
		newBytes += b.MemSize()
	}
	live := s.rows - s.retracted
	liveBytes := s.bytes / max(s.rows, 1) * live
	if logRows+newRows > 2*live+minLogRows || logBytes+newBytes > 2*liveBytes+minLogBytes {
		// The log has outgrown the rows: rewrite it as the rows alone, and the retractions
		// still waiting for their rows.
		s.compact()
		segs.Clear(wb)
		n, logRows, logBytes = 0, 0, 0
		writeAdds(s.added)
		if s.retracted > 0 {
			var subs subsWriter
			s.settle() // (compact did, unless nothing was retracted)
			s.minus.eachKey(subs.add)
			seg := subs.segment()
			write(seg, s.retracted, int64(len(seg)))
		}
	} else {
		writeAdds(s.newAdds)
		if s.nSubs > 0 {
			var subs subsWriter
			var kb []byte
			for _, r := range s.newSubs {
				kb = exec.AllKey(kb[:0], r.b, int(r.i))
				subs.add(kb, r.n)
			}
			seg := subs.segment()
			write(seg, s.nSubs, int64(len(seg)))
		}
	}
	return written, func() {
		s.newAdds, s.newSubs, s.nSubs = nil, nil, 0
		s.segs, s.logRows, s.logBytes = n, logRows, logBytes
	}
}

// subsWriter builds a segSub segment: n copies of each encoding, after its length, in chunks
// of subsChunk bytes joined once, so that a long segment is not copied as it grows.
type subsWriter struct{ chunks [][]byte }

const subsChunk = 64 << 10

func (w *subsWriter) add(kb []byte, n int64) {
	for ; n > 0; n-- {
		need := binary.MaxVarintLen64 + len(kb)
		last := len(w.chunks) - 1
		if last < 0 || len(w.chunks[last])+need > cap(w.chunks[last]) {
			w.chunks = append(w.chunks, make([]byte, 0, max(subsChunk, need)))
			last++
		}
		w.chunks[last] = append(binary.AppendUvarint(w.chunks[last], uint64(len(kb))), kb...)
	}
}

func (w *subsWriter) segment() []byte {
	return slices.Concat(append([][]byte{{segSub}}, w.chunks...)...)
}

// load restores the rows as a checkpoint holds them (persist).
func (s *viewStore) load(r *exec.StateReader, rows, segs *state.Spill) error {
	switch mode := r.Int(); mode {
	case rowsSpilled:
		s.spill, s.n = rows, r.Int()
		return nil
	case rowsSegments:
		corrupt := fmt.Errorf("a stored segment of view %s is corrupt", s.view.name)
		err := segs.Each(func(_, buf []byte) error {
			s.segs++
			if len(buf) > 0 && (buf[0] == segCols || buf[0] == segColsWM) {
				ts := s.types
				if buf[0] == segColsWM {
					ts = append(append([]types.T{}, s.types...), types.TBigInt)
				}
				b, err := exec.DecodeSegment(buf[1:], ts)
				if err != nil {
					return fmt.Errorf("a stored segment of view %s: %w", s.view.name, err)
				}
				if buf[0] == segColsWM {
					last := len(b.Cols) - 1
					b.WM = exec.Int64s(b.Cols[last])
					b.Cols = b.Cols[:last]
				}
				s.logRows += int64(b.N)
				s.logBytes += b.MemSize()
				s.add(b, false)
				return nil
			}
			if len(buf) == 0 || buf[0] != segAdd && buf[0] != segSub {
				return corrupt
			}
			kind, size := buf[0], int64(len(buf))
			var out [][]any
			for buf = buf[1:]; len(buf) > 0; {
				n, k := binary.Uvarint(buf)
				if k <= 0 || uint64(len(buf)-k) < n {
					return corrupt
				}
				kb := buf[k : k+int(n)]
				buf = buf[k+int(n):]
				s.logRows++
				if kind == segSub {
					s.minus.add(kb, 1)
					s.retracted++
					continue
				}
				row, err := exec.DecodeKey(kb, len(s.types))
				if err != nil {
					return fmt.Errorf("a stored segment of view %s: %w", s.view.name, err)
				}
				out = append(out, row)
			}
			if kind == segSub {
				s.logBytes += size
			}
			if len(out) > 0 {
				b := exec.RowsToBatch(out, s.types)
				s.logBytes += b.MemSize()
				s.add(b, false)
			}
			return nil
		})
		if err == nil {
			s.compact()
		}
		return err
	default:
		return fmt.Errorf("checkpoint of view %s holds its rows in an unknown way (%d)", s.view.name, mode)
	}
}

func (e *Engine) loadView(v *viewObj, r *exec.StateReader) error {
	n := r.Len()
	if n != len(v.state) {
		return fmt.Errorf("checkpoint of view %s has %d operator states, the plan has %d", v.name, n, len(v.state))
	}
	for _, op := range v.state {
		size := r.Len()
		if size < 0 || size > len(r.Buf) {
			return fmt.Errorf("checkpoint of view %s is corrupt", v.name)
		}
		sub := &exec.StateReader{Buf: r.Buf[:size]}
		if err := op.LoadState(sub); err != nil {
			return fmt.Errorf("checkpoint of view %s: %w", v.name, err)
		}
		r.Buf = r.Buf[size:]
	}
	if err := v.store.load(r, e.spillStore(v, 0), e.spillStore(v, segmentsOp)); err != nil {
		return err
	}
	v.watermark = r.Int()
	v.lateCount = r.Int()
	logged := int(r.Int())
	if err := r.Err(); err != nil {
		return err
	}
	// The log is written in the checkpoint's batch: it holds exactly the checkpoint's rows.
	err := e.spillStore(v, lateOp).Each(func(_, buf []byte) error {
		seg := &exec.StateReader{Buf: buf}
		for len(seg.Buf) > 0 {
			var l lateRow
			l.table, _ = seg.Value().(string)
			l.eventTime = seg.Int()
			l.watermark = seg.Int()
			l.rowJSON, _ = seg.Value().(string)
			if err := seg.Err(); err != nil {
				return fmt.Errorf("late rows of view %s: %w", v.name, err)
			}
			v.lateRows = append(v.lateRows, l)
			v.lateLogged++
		}
		v.lateSegs++
		return nil
	})
	if err == nil && v.lateLogged != logged {
		err = fmt.Errorf("late rows of view %s: the log holds %d, the checkpoint %d", v.name, v.lateLogged, logged)
	}
	return err
}

// loadCheckpoint reads the last checkpoint's header, or nil.
func (e *Engine) loadCheckpoint() (*checkpointInfo, error) {
	v, ok, err := e.store.Meta(ckptKey)
	if err != nil || !ok {
		return nil, err
	}
	r := &exec.StateReader{Buf: v}
	if r.Int() != -ckptFormat {
		return nil, nil
	}
	info := &checkpointInfo{id: r.Int(), seq: uint64(r.Int()), tables: map[uint64]int64{}, views: map[uint64]bool{}, reason: "restored"}
	info.at = time.UnixMilli(r.Int())
	info.bytes = int64(len(v))
	n := r.Len()
	for i := 0; i < n; i++ {
		id := uint64(r.Int())
		info.tables[id] = r.Int()
	}
	n = r.Len()
	for i := 0; i < n; i++ {
		info.views[uint64(r.Int())] = true
	}
	if r.Err() != nil {
		return nil, fmt.Errorf("checkpoint header: %w", r.Err())
	}
	return info, nil
}

// recover brings every view up to date at Open: from the last checkpoint when it covers
// every view, else from the start; then replays the stored segments after that point, in
// acceptance order across tables, into all views at once, as they were first delivered.
func (e *Engine) recover() error {
	ck, err := e.loadCheckpoint()
	if err != nil {
		return err
	}
	if ck != nil {
		e.ckptID = ck.id
		for _, v := range e.views {
			if !ck.views[v.entry.ID] {
				ck = nil
				break
			}
		}
	}
	gens := map[*tableObj]*watermark.Generator{}
	for _, t := range e.tables {
		gens[t] = watermark.New()
	}
	var from uint64
	if ck != nil {
		for _, v := range e.views {
			val, ok, err := e.store.Meta("ckpt/view/" + strconv.FormatUint(v.entry.ID, 10))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("checkpoint %d lacks the state of view %s", ck.id, v.name)
			}
			if err := e.loadView(v, &exec.StateReader{Buf: val}); err != nil {
				return err
			}
		}
		for t, g := range gens {
			if w, ok := ck.tables[t.entry.ID]; ok {
				g.Set(w)
			}
		}
		from = ck.seq
		e.ckpt = ck
		e.ckpts = append(e.ckpts, ck)
	} else {
		// The views are rebuilt from their tables: state they spilled before is stale, and so
		// is the checkpoint, which must not be taken for theirs should the view it lacked be
		// dropped before the next one.
		wb := e.store.NewBatch()
		for _, v := range e.views {
			wb.ClearOwner(v.entry.ID)
		}
		wb.DeleteMeta(ckptKey)
		wb.DeleteMetaPrefix("ckpt/view/")
		if err := e.store.Commit(wb); err != nil {
			return err
		}
		for _, v := range e.views {
			for _, src := range v.sources {
				if src.Rel == nil {
					if err := src.Out.EmitBatch(exec.RowsToBatch(src.Rows, src.Types)); err != nil {
						return err
					}
				}
			}
		}
	}
	var cs []*replayCursor
	for _, t := range e.tables {
		r, err := t.data.Replay(from)
		if err != nil {
			return err
		}
		t := t
		cs = append(cs, &replayCursor{t: t, r: r, gen: gens[t], emit: func(b *exec.Batch, w int64) error {
			for _, l := range t.listeners {
				if err := l.deliver([]step{{b, w}}); err != nil {
					return fmt.Errorf("replaying into materialized view %s: %w", l.view.name, err)
				}
			}
			return nil
		}})
	}
	if err := e.replayMerged(cs); err != nil {
		return err
	}
	e.writeSinks()
	for _, c := range cs {
		c.t.wm.Set(gens[c.t].W)
		// Idleness may have moved a partitioned table's watermark past its rows.
		if v, ok, err := e.store.Meta(tickKey(c.t)); err != nil {
			return err
		} else if ok && len(v) == 8 {
			c.t.wm.Set(int64(binary.BigEndian.Uint64(v)))
		}
		for _, l := range c.t.listeners {
			if err := l.emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: c.t.wm.W}); err != nil {
				return err
			}
		}
	}
	e.flushLate()
	// A checkpoint soon, so the next Open replays only what comes after it.
	e.dirty = len(e.views) > 0
	return nil
}

// checkpointLoop takes a checkpoint every interval while there are changes to capture. A
// checkpoint writes the operators' state whole (and the views' rows incrementally), so the
// loop waits at least ten times as long as the last one took: checkpointing never costs more
// than about a tenth of the engine's time.
func (e *Engine) checkpointLoop(interval time.Duration) {
	defer close(e.ckptDone)
	wait := interval
	for {
		select {
		case <-e.ckptStop:
			return
		case <-time.After(wait):
			e.mu.Lock()
			wait = interval
			if !e.closed && e.dirty {
				// A failed periodic checkpoint leaves the previous one in force.
				if err := e.checkpoint("interval"); err == nil {
					wait = max(interval, 10*e.ckpt.took)
				}
			}
			e.mu.Unlock()
		}
	}
}

func checkpointRows(e *Engine) [][]any {
	out := make([][]any, 0, len(e.ckpts))
	for _, c := range e.ckpts {
		out = append(out, []any{c.id, c.at.UnixMilli(), c.bytes, c.took.Milliseconds(), int64(c.seq), c.reason})
	}
	return out
}

var checkpointColumns = []struct {
	name string
	t    types.T
}{{"id", types.TBigInt}, {"time", types.TTimestamp}, {"bytes", types.TBigInt}, {"duration_ms", types.TBigInt}, {"position", types.TBigInt}, {"reason", types.TVarchar}}
