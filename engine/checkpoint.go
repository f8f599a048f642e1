package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
)

// A checkpoint snapshots, in one Pebble batch, the state of every view's dataflow (its
// operators' state, its rows, its late rows and watermark) and each table's watermark, as
// of the store-wide sequence number seq: every segment numbered <= seq had reached the
// views. Open restores the snapshot and replays only the segments after seq, so restart
// time follows the rows since the last checkpoint, not all rows stored. Source offsets need
// no snapshot: each connector batch commits its offset with its rows.
//
// Tables are changelogs (package table), so no write invalidates a checkpoint. It is not
// used when a view exists that it does not cover (created after it); Open then replays every
// stored change, which gives the same views, only slower.

const ckptKey = "ckpt"

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
	if len(e.queue) > 0 {
		seq = e.queue[0].from
		for _, q := range e.queue {
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
	for _, v := range e.views {
		w := &exec.StateWriter{}
		e.saveView(v, w)
		wb.PutMeta("ckpt/view/"+strconv.FormatUint(v.entry.ID, 10), w.Buf)
		total += int64(len(w.Buf))
		info.views[v.entry.ID] = true
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
		return fmt.Errorf("checkpoint: %w", err)
	}
	h := &exec.StateWriter{}
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
	spilled := e.flushSpills(wb)
	if err := e.store.Commit(wb); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	spilled()
	info.bytes, info.took = total, time.Since(start)
	e.ckpt, e.ckptID, e.dirty = info, info.id, len(e.queue) > 0
	e.ckpts = append(e.ckpts, info)
	if len(e.ckpts) > 100 {
		e.ckpts = e.ckpts[1:]
	}
	return nil
}

func (e *Engine) saveView(v *viewObj, w *exec.StateWriter) {
	w.Int(int64(len(v.state)))
	for _, op := range v.state {
		sub := &exec.StateWriter{}
		op.SaveState(sub)
		w.Int(int64(len(sub.Buf)))
		w.Buf = append(w.Buf, sub.Buf...)
	}
	if v.store.spill != nil {
		// The rows are in the store; the checkpoint writes their staged changes.
		w.Int(-1)
		w.Int(v.store.n)
	} else {
		var n int64
		v.store.each(func([]any, int64) { n++ })
		w.Int(n)
		v.store.each(func(r []any, c int64) {
			w.Row(r)
			w.Int(c)
		})
	}
	w.Int(v.watermark)
	w.Int(v.lateCount)
	var late []lateRow
	for _, l := range e.late {
		if l.view == v.name {
			late = append(late, l)
		}
	}
	w.Int(int64(len(late)))
	for _, l := range late {
		w.Value(l.table)
		w.Int(l.eventTime)
		w.Int(l.watermark)
		w.Value(l.rowJSON)
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
	s := v.store
	s.consolidated = true
	rows := r.Len()
	if rows == -1 {
		e.resumeSpilled(v, true, r.Int())
	} else {
		e.resumeSpilled(v, false, 0)
	}
	for i := 0; i < rows && r.Err() == nil; i++ {
		var kb []byte
		for _, x := range r.Row() {
			kb = exec.AppendValueKey(kb, x)
		}
		s.bag.add(kb, r.Int())
	}

	v.watermark = r.Int()
	v.lateCount = r.Int()
	late := r.Len()
	for i := 0; i < late && r.Err() == nil; i++ {
		l := lateRow{view: v.name}
		l.table, _ = r.Value().(string)
		l.eventTime = r.Int()
		l.watermark = r.Int()
		l.rowJSON, _ = r.Value().(string)
		e.late = append(e.late, l)
	}
	return r.Err()
}

// loadCheckpoint reads the last checkpoint's header, or nil.
func (e *Engine) loadCheckpoint() (*checkpointInfo, error) {
	v, ok, err := e.store.Meta(ckptKey)
	if err != nil || !ok {
		return nil, err
	}
	r := &exec.StateReader{Buf: v}
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
		// The views are rebuilt from their tables: state they spilled before is stale.
		wb := e.store.NewBatch()
		for _, v := range e.views {
			wb.ClearOwner(v.entry.ID)
		}
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
				if err := l.deliver([]*exec.Batch{b}, w); err != nil {
					return fmt.Errorf("replaying into materialized view %s: %w", l.view.name, err)
				}
			}
			return nil
		}})
	}
	if err := e.replayMerged(cs); err != nil {
		return err
	}
	for _, c := range cs {
		c.t.wm.Set(gens[c.t].W)
		// Idleness may have moved a partitioned table's watermark past its rows.
		if v, ok, err := e.store.Meta(tickKey(c.t)); err != nil {
			return err
		} else if ok && len(v) == 8 {
			c.t.wm.Set(int64(binary.BigEndian.Uint64(v)))
		}
		for _, l := range c.t.listeners {
			if err := l.out.Emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: c.t.wm.W}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkpointLoop takes a checkpoint every interval while there are changes to capture. A
// checkpoint is a full snapshot, so the loop waits at least ten times as long as the last
// one took: checkpointing never costs more than about a tenth of the engine's time.
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
