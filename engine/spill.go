package engine

import (
	"runtime/metrics"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// Spilling keeps the engine under its memory limit (Options.MemoryLimit). Operators' keyed
// state is in the store as of each checkpoint anyway (exec.Keyed: one entry per key, in a
// state.Spill); once the live heap passes an eighth of the limit (the garbage collector lets
// the heap grow to twice what is live), every view stops keeping in memory what grows with
// distinct keys — a non-windowed aggregate's groups and a regular join's rows stay resident
// only while a batch uses them — and moves its rows to the store. What changes since the
// last checkpoint is staged in memory, encoded; a checkpoint writes it in its one batch, and
// once it takes 1/16 of the limit, the next holder of the engine's lock after the delivery
// takes a checkpoint early. Windowed state (freed by the watermark), interval or TTL joins'
// state (bounded by the watermark or 'state.ttl') and tables (their own cache) stay in memory.

// spillStore is a view's store for operator op (0: its rows; i+1: v.state[i]).
func (e *Engine) spillStore(v *viewObj, op int) *state.Spill {
	if v.spills == nil {
		v.spills = map[int]*state.Spill{}
	}
	p, ok := v.spills[op]
	if !ok {
		p = e.store.Spill(v.entry.ID, op)
		v.spills[op] = p
	}
	return p
}

// spillView moves a view's unbounded state into the store. The flow lock is held (or no
// delivery can run).
func (e *Engine) spillView(v *viewObj) {
	if v.store.spill != nil {
		return
	}
	for _, op := range v.state {
		if sp, ok := op.(exec.Spiller); ok && sp.CanSpill() {
			sp.Spill()
		}
	}
	v.store.startSpill(e.spillStore(v, 0))
}

// attachStores gives a view's keyed operators their stores, where checkpoints keep their
// entries (exec.Keyed).
func (e *Engine) attachStores(v *viewObj) {
	for i, op := range v.state {
		if k, ok := op.(exec.Keyed); ok {
			k.Attach(e.spillStore(v, i+1))
		}
	}
}

// checkMemory spills every view once the live heap passes an eighth of the memory limit,
// and asks for an early checkpoint once the spilled changes staged since the last one pass a
// sixteenth of it. It runs after each delivery, under the flow lock.
func (e *Engine) checkMemory() {
	if heapLive() > e.opts.MemoryLimit/8 {
		for _, v := range e.views {
			e.spillView(v)
		}
	}
	var staged int64
	for _, v := range e.views {
		for _, p := range v.spills {
			staged += p.Staged()
		}
	}
	if staged > e.opts.MemoryLimit/16 {
		e.wantCkpt.Store(true)
	}
}

// checkpointIfWanted takes the checkpoint checkMemory asked for, at the point the views
// have reached (the queue stays queued). The engine's lock is held and no delivery is in
// flight: the worker calls it after a delivery (if no write holds the lock), deliverQueued
// between two, and a write before it starts (awaitRoom), holding flow.
func (e *Engine) checkpointIfWanted() {
	if e.wantCkpt.CompareAndSwap(true, false) && !e.closed {
		_ = e.checkpointAt("memory", false)
	}
}

// heapLive is the heap the last garbage collection found live.
func heapLive() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}

// beginSpills starts a checkpoint in every view's stores: the keyed state the operators
// write from memory is listed for the checkpoint's batch (state.Spill.Begin).
func (e *Engine) beginSpills() {
	for _, v := range e.views {
		for _, p := range v.spills {
			p.Begin()
		}
	}
}

// keepSpills stages what a checkpoint that did not commit listed, for the next one.
func (e *Engine) keepSpills() {
	for _, v := range e.views {
		for _, p := range v.spills {
			p.Keep()
		}
	}
}

// flushSpills writes every view's staged changes into a checkpoint's batch (n bytes); done,
// called once the batch is committed, forgets them.
func (e *Engine) flushSpills(wb *state.Batch) (n int64, done func()) {
	var dones []func()
	for _, v := range e.views {
		for _, p := range v.spills {
			k, d := p.Flush(wb)
			n += k
			dones = append(dones, d)
		}
	}
	return n, func() {
		for _, d := range dones {
			d()
		}
	}
}
