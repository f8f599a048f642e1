package engine

import (
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec"
)

// Ingestion is asynchronous and batched: a write commits its rows durably and returns;
// its change waits in a queue, and a background worker (or the next statement that reads,
// whichever comes first) delivers queued changes to the views. Consecutive insert-only
// changes of one table are delivered as one batch, with each row's watermark kept, so
// batching never changes a result (views do not depend on batch boundaries — the
// metamorphic slt runs check it). FLUSH, queries, DDL, SUBSCRIBE, CHECKPOINT and Close
// drain the queue first, so after INSERT ...; FLUSH; a view is exact. The queue is bounded:
// past maxQueuedRows a write drains it itself, so a slow view slows its writers.

// maxQueuedRows bounds the rows waiting for the views.
const maxQueuedRows = 1 << 20

// queued is a committed change not yet delivered to views.
type queued struct {
	t          *tableObj
	change     *exec.Batch
	insertOnly bool
	wm         int64 // the table's watermark after the change
}

// enqueue queues a committed change and wakes the worker.
func (e *Engine) enqueue(t *tableObj, change *exec.Batch, insertOnly bool) {
	if len(t.listeners) == 0 {
		return
	}
	e.queue = append(e.queue, queued{t: t, change: change, insertOnly: insertOnly, wm: t.wm.W})
	if change != nil {
		e.queuedRows += change.N
	}
	if e.queuedRows > maxQueuedRows {
		e.deliverQueued()
		return
	}
	e.ingest.Signal()
}

// drain delivers every queued change to the views, in order. The engine's lock is held.
// It returns the first error a view raised (the rows stay stored; the view misses them).
func (e *Engine) drain() error {
	var firstErr error
	for len(e.queue) > 0 {
		q := e.queue[0]
		n := 1
		parts := []*exec.Batch{q.change}
		if q.insertOnly {
			for n < len(e.queue) && e.queue[n].t == q.t && e.queue[n].insertOnly {
				parts = append(parts, e.queue[n].change)
				n++
			}
		}
		last := e.queue[n-1]
		change := parts[0]
		if len(parts) > 1 {
			change = exec.ConcatChanges(parts...)
		}
		e.queue = e.queue[n:]
		if change != nil {
			e.queuedRows -= change.N
		}
		deliver := []*exec.Batch{change}
		if e.split != nil && q.insertOnly && change != nil {
			deliver = e.splitBatch(change, q.t.types())
		}
		for _, l := range q.t.listeners {
			if err := l.deliver(deliver, last.wm); err != nil && firstErr == nil {
				firstErr = viewError(l.view.name, err)
			}
		}
	}
	e.queue, e.queuedRows = nil, 0
	return firstErr
}

// ingestLoop is the worker that drains the queue in the background.
func (e *Engine) ingestLoop() {
	defer close(e.ingestDone)
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for len(e.queue) == 0 && !e.closed {
			e.ingest.Wait()
		}
		if e.closed {
			return
		}
		e.deliverQueued()
	}
}

// deliverQueued drains the queue and keeps the first error a view raised for the next
// FLUSH: the rows that caused it are committed (the view misses them), so the write that
// queued them is not failed, nor is the worker stopped.
func (e *Engine) deliverQueued() {
	if err := e.drain(); err != nil && e.ingestErr == nil {
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
