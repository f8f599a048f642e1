package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec"
)

// Ingestion is asynchronous and batched: a write commits its rows durably and returns;
// its change waits in a queue, and a background worker (or the next statement that reads,
// whichever comes first) delivers queued changes to the views. Runs of small consecutive
// insert-only changes of one table are delivered as one batch, with each row's watermark
// kept, so batching never changes a result (views do not depend on batch boundaries — the
// metamorphic slt runs check it). FLUSH, queries, DDL, SUBSCRIBE, CHECKPOINT and Close
// drain the queue first, so after INSERT ...; FLUSH; a view is exact. The queue is bounded,
// so a slow view slows its writers: a write waits to start while half of maxQueuedRows is
// queued (awaitRoom), which keeps the writer storing rows on one core while the worker
// delivers on the other; a single write that queues past maxQueuedRows drains the queue
// itself.
//
// Locking: the engine's lock (mu) guards the catalog and tables; the flow lock guards the
// views' dataflows and what they write (view rows, operator state, late rows, subscribers,
// sinks, ingestErr); qmu guards the queue, and is taken last. Lock order: mu, then flow,
// then qmu. A change is queued under mu and qmu (after its commit, by the write that made
// it) and taken from the queue under flow and qmu by the delivery that sends it, so changes
// reach the views in queue order. The worker holds flow alone while it takes and delivers,
// so writes (which hold mu, through their commit's syncs) run while views consume earlier
// changes. Everything else that touches a view holds mu and drains first (deliverQueued
// takes flow, so it waits for the worker's delivery in flight); while it keeps mu nothing
// can be queued, so the worker finds nothing more to deliver. The one exception is
// Subscription.Close, which takes flow alone (a cancelled SUBSCRIBE does not wait for the
// statement running then): whatever adds or removes a view's subscribers holds flow.

// maxQueuedRows bounds the rows waiting for the views: a million, or fewer under a small
// memory limit (a queued row costs some tens of bytes).
func (e *Engine) maxQueuedRows() int {
	return int(min(1<<20, e.opts.MemoryLimit/1024))
}

// queued is a committed change not yet delivered to views.
type queued struct {
	t          *tableObj
	change     *exec.Batch
	insertOnly bool
	wm         int64 // the table's watermark after the change
	// prevW is the table's watermark before it, and from the store sequence number before
	// its segments: a checkpoint taken while it waits covers up to from (checkpointAt).
	prevW int64
	from  uint64
}

// awaitRoom waits, at the start of a write, until the queue is below half its bound: the
// worker takes the queue (and signals room) as it delivers it. The engine's lock is held
// throughout (the worker needs only flow and qmu to take the queue). It first takes the
// checkpoint spilled state asked for, if the worker could not. It returns errClosed, or
// ctx's error if ctx ends first.
func (e *Engine) awaitRoom(ctx context.Context) error {
	if e.wantCkpt.Load() {
		e.flow.Lock()
		e.checkpointIfWanted()
		e.flow.Unlock()
	}
	e.qmu.Lock()
	defer e.qmu.Unlock()
	if 2*e.queuedRows > e.maxQueuedRows() {
		stop := context.AfterFunc(ctx, func() {
			e.qmu.Lock()
			e.room.Broadcast()
			e.qmu.Unlock()
		})
		defer stop()
		for 2*e.queuedRows > e.maxQueuedRows() && !e.closed && ctx.Err() == nil {
			e.room.Wait()
		}
	}
	if e.closed {
		return errClosed
	}
	return ctx.Err()
}

// enqueue queues a committed change and wakes the worker.
func (e *Engine) enqueue(t *tableObj, change *exec.Batch, insertOnly bool, prevW int64, from uint64) {
	if len(t.listeners) == 0 {
		return
	}
	e.qmu.Lock()
	e.queue = append(e.queue, queued{t: t, change: change, insertOnly: insertOnly, wm: t.wm.W, prevW: prevW, from: from})
	if change != nil {
		e.queuedRows += change.N
	}
	over := e.queuedRows > e.maxQueuedRows()
	e.ingest.Signal()
	e.qmu.Unlock()
	if over {
		e.deliverQueued()
	}
}

// maxMergedRows bounds a batch merged from queued changes: a spilled operator holds a
// batch's keys in memory while it runs, so under a memory limit batches stay smaller.
func (e *Engine) maxMergedRows() int {
	return int(min(1<<20, e.opts.MemoryLimit/4096))
}

// takeQueue removes and returns the oldest queued changes, about maxMergedRows rows of
// them (at least one change, none if the queue is empty). The flow lock is held.
func (e *Engine) takeQueue() []queued {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	if len(e.queue) == 0 {
		return nil
	}
	n, rows := 0, 0
	for n < len(e.queue) && (n == 0 || rows < e.maxMergedRows()) {
		if c := e.queue[n].change; c != nil {
			rows += c.N
		}
		n++
	}
	q := e.queue[:n:n]
	e.queue = e.queue[n:]
	e.queuedRows -= rows
	if len(e.queue) == 0 {
		e.queue, e.queuedRows = nil, 0
	}
	e.room.Broadcast()
	return q
}

// mergeTarget is the batch size small changes are merged up to: a batch costs the views
// a fixed amount (each touched group emits its old and new rows once per batch), which
// single-row INSERTs must not pay each; a change this large is passed on as it is, as
// copying it would cost more than it saves.
const mergeTarget = 1 << 14

// step is a batch of changes a table's listeners receive, and the table's watermark after
// it (exec.NoWatermark: none is sent after it).
type step struct {
	b  *exec.Batch
	wm int64
}

// mergeSmall concatenates runs of consecutive small batches up to mergeTarget rows; a
// merged step carries the watermark after its last change.
func mergeSmall(steps []step) []step {
	var out []step
	var run []*exec.Batch
	rows := 0
	flush := func(wm int64) {
		switch len(run) {
		case 0:
			return
		case 1:
			out = append(out, step{run[0], wm})
		default:
			out = append(out, step{exec.ConcatChanges(run...), wm})
		}
		run, rows = nil, 0
	}
	for i, s := range steps {
		if s.b != nil && rows+s.b.N > mergeTarget && i > 0 {
			flush(steps[i-1].wm)
		}
		run = append(run, s.b)
		if s.b != nil {
			rows += s.b.N
		}
	}
	if len(steps) > 0 {
		flush(steps[len(steps)-1].wm)
	}
	return out
}

// deliver sends changes to the views, in order, merging runs of consecutive small
// insert-only changes of one table; the table's watermark follows each delivered batch, so
// windows close (and free their state) as the stream goes, not once per queue. The flow
// lock is held. It returns the first error a view raised (the rows stay stored; the view
// misses them).
func (e *Engine) deliver(queue []queued) error {
	var firstErr error
	for len(queue) > 0 {
		q := queue[0]
		n := 1
		steps := []step{{q.change, q.wm}}
		if q.insertOnly {
			rows := q.change.N
			for n < len(queue) && queue[n].t == q.t && queue[n].insertOnly && rows < e.maxMergedRows() {
				steps = append(steps, step{queue[n].change, queue[n].wm})
				rows += queue[n].change.N
				n++
			}
		}
		queue = queue[n:]
		deliver := mergeSmall(steps)
		if e.split != nil && q.insertOnly {
			parts := make([]*exec.Batch, len(steps))
			for i, s := range steps {
				parts[i] = s.b
			}
			if all := exec.ConcatChanges(parts...); all != nil {
				deliver = nil
				for _, b := range e.splitBatch(all, q.t.types()) {
					deliver = append(deliver, step{b, exec.NoWatermark})
				}
				deliver[len(deliver)-1].wm = steps[len(steps)-1].wm
			}
		}
		for _, l := range q.t.listeners {
			if err := l.deliver(deliver); err != nil && firstErr == nil {
				firstErr = viewError(l.view.name, err)
			}
		}
		e.flushLate()
		e.writeSinks()
		e.checkMemory()
	}
	return firstErr
}

// ingestLoop is the worker that delivers the queue in the background. It takes the queue
// under the engine's lock and delivers it under the flow lock alone, so writers store new
// rows (on the other core) while the views consume earlier ones.
func (e *Engine) ingestLoop() {
	defer close(e.ingestDone)
	for {
		e.qmu.Lock()
		for len(e.queue) == 0 && !e.closed {
			e.ingest.Wait()
		}
		closed := e.closed
		e.qmu.Unlock()
		if closed {
			return
		}
		e.flow.Lock()
		if q := e.takeQueue(); len(q) > 0 {
			e.keepError(e.deliverSafely(q))
		}
		e.flow.Unlock()
		// The checkpoint spilled state asked for, unless a write holds the engine's lock
		// (it takes the checkpoint itself: awaitRoom).
		if e.wantCkpt.Load() && e.mu.TryLock() {
			e.checkpointIfWanted()
			e.mu.Unlock()
		}
	}
}

// deliverQueued delivers the queue now; the engine's lock is held. It first waits for a
// delivery the worker has in flight, so changes reach the views in order; between chunks
// it takes the checkpoint spilled state may ask for.
func (e *Engine) deliverQueued() {
	e.flow.Lock()
	defer e.flow.Unlock()
	for q := e.takeQueue(); len(q) > 0; q = e.takeQueue() {
		e.keepError(e.deliverSafely(q))
		e.checkpointIfWanted()
	}
}

// deliverSafely is deliver with a bug's panic turned into the error it returns: the rows
// are committed, and a panic must neither take the process down nor stop the worker.
func (e *Engine) deliverSafely(q []queued) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (please report it) while keeping the views current: %v", r)
		}
	}()
	return e.deliver(q)
}

// keepError keeps the first error a view raised for the next FLUSH: the rows that caused it
// are committed (the view misses them), so the write that queued them is not failed, nor is
// the worker stopped. It runs during delivery (or a backfill, which no delivery overlaps).
func (e *Engine) keepError(err error) {
	if err != nil && e.ingestErr == nil {
		e.ingestErr = err
	}
}

// drained drains the queue. A view's error is kept until a FLUSH, the statement that asks
// for the views to be current, reports it (report set); other statements are not failed by
// a view they may not even read.
func (e *Engine) drained(report bool) error {
	e.deliverQueued()
	if !report {
		return nil
	}
	err := e.ingestErr
	e.ingestErr = nil
	return err
}

// viewError names the view an error of its dataflow comes from. A data error's place is in
// the view's definition (system.views), not in the statement that fed the view, so it is
// not given as "at line L, column C" of that statement.
func viewError(name string, err error) error {
	var de *exec.DataError
	if errors.As(err, &de) {
		return fmt.Errorf("materialized view %s: %w (in its definition: line %d, column %d)", name, de.Err, de.Pos.Line, de.Pos.Col)
	}
	return fmt.Errorf("materialized view %s: %w", name, err)
}
