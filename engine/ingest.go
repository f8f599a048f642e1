package engine

import (
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
func (e *Engine) enqueue(t *tableObj, change *exec.Batch, insertOnly bool) error {
	if len(t.listeners) == 0 {
		return nil
	}
	e.queue = append(e.queue, queued{t: t, change: change, insertOnly: insertOnly, wm: t.wm.W})
	if change != nil {
		e.queuedRows += change.N
	}
	if e.queuedRows > maxQueuedRows {
		return e.drain()
	}
	e.ingest.Signal()
	return nil
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
				firstErr = fmt.Errorf("materialized view %s: %w", l.view.name, err)
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
		// A view's error surfaces at the next FLUSH or query of it; the worker goes on.
		if err := e.drain(); err != nil {
			e.ingestErr = err
		}
	}
}

// drained drains the queue and reports the error a view raised since the last report.
func (e *Engine) drained() error {
	err := e.drain()
	if err == nil {
		err = e.ingestErr
	}
	e.ingestErr = nil
	return err
}
