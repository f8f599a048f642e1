package state

import (
	"bytes"
	"errors"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// prefixSpill holds operators' keyed state beyond memory: p/<owner id>/<operator>/<key>.
const prefixSpill = "p/"

// Spill is one operator's keyed state in the store. The store holds the values as of the
// last checkpoint. When the state is kept in the store instead of memory, what changed since
// is staged here (encoded, so a staged entry costs its bytes, not an object graph) and
// written by the next checkpoint in its batch; state kept in memory puts what changed during
// the checkpoint itself (listed: Begin), or writes it into the batch directly (Write: a view's
// row segments). Either way the store never runs ahead of the checkpoint: a restart that
// restores the checkpoint and replays the changes after it finds exactly the state the
// checkpoint saw.
//
// A Spill is used under one lock with the store's checkpoints (the engine's flow lock).
type Spill struct {
	s      *Store
	prefix []byte
	staged map[string][]byte // nil: deleted since the checkpoint
	bytes  int64
	kbuf   []byte
	// Between Begin and the checkpoint's Flush, changes to keys not staged are listed in
	// order (their keys in keys), not mapped: a checkpoint of state kept in memory writes
	// millions of them, and nothing reads them before the flush. A checkpoint that does not
	// commit stages them (Keep).
	inCkpt  bool
	pending []pendingChange
	keys    []byte
	// filter holds every key the store may hold for this Spill, so that Get of a key never
	// written skips the store; nil until the first Get builds it (see Get).
	filter *keyFilter
}

// pendingChange is a change listed during a checkpoint: key keys[off:off+n], val (nil:
// deleted).
type pendingChange struct {
	off, n int
	val    []byte
}

// Spill returns the spilled state of operator op of owner (a view's id).
func (s *Store) Spill(owner uint64, op int) *Spill {
	return &Spill{s: s, prefix: spillPrefix(owner, op), staged: map[string][]byte{}}
}

func spillPrefix(owner uint64, op int) []byte {
	p := append([]byte(prefixSpill), byte(owner>>56), byte(owner>>48), byte(owner>>40), byte(owner>>32),
		byte(owner>>24), byte(owner>>16), byte(owner>>8), byte(owner))
	return append(p, byte(op>>8), byte(op), '/')
}

// Get reads a key's value. A key the filter has never seen is not read from the store.
func (p *Spill) Get(key []byte) ([]byte, bool, error) {
	if v, ok := p.staged[string(key)]; ok {
		return v, v != nil, nil
	}
	if p.filter == nil {
		if err := p.buildFilter(); err != nil {
			return nil, false, err
		}
	}
	if !p.filter.mayHave(key) {
		return nil, false, nil
	}
	return p.s.get(append(bytes.Clone(p.prefix), key...))
}

// buildFilter makes the filter of the keys stored, staged and listed; from then on every key
// written is added as it is staged, listed or written (stage, Write), before it can reach
// the store. (Get is not called between a checkpoint's Begin or Write and its commit: the
// keys in that batch are listed or already added.)
func (p *Spill) buildFilter() error {
	f := newKeyFilter()
	it, err := p.s.db.NewIter(&pebble.IterOptions{LowerBound: p.prefix, UpperBound: prefixEnd(p.prefix)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		f.add(it.Key()[len(p.prefix):])
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	for k := range p.staged {
		f.add([]byte(k))
	}
	for _, c := range p.pending {
		f.add(p.keys[c.off : c.off+c.n])
	}
	p.filter = f
	return nil
}

// Put stages a key's new value.
func (p *Spill) Put(key, val []byte) { p.stage(key, val) }

// Delete stages a key's removal.
func (p *Spill) Delete(key []byte) { p.stage(key, nil) }

// stagedOverhead is what a staged entry costs beyond its key and value bytes (the map's
// slot, the string and slice headers, allocation rounding); pendingOverhead a listed one's.
const (
	stagedOverhead  = 96
	pendingOverhead = 40
)

// Begin starts a checkpoint: until its Flush, changes are listed for it (see Spill). Get
// must not be called before the Flush.
func (p *Spill) Begin() { p.inCkpt = true }

// Keep stages the changes listed since Begin, for a checkpoint that did not commit: the next
// one writes them.
func (p *Spill) Keep() {
	pending, keys := p.pending, p.keys
	p.inCkpt, p.pending, p.keys = false, nil, nil
	for _, c := range pending {
		p.bytes -= int64(c.n + len(c.val) + pendingOverhead)
		p.stage(keys[c.off:c.off+c.n], c.val)
	}
}

func (p *Spill) stage(key, val []byte) {
	if p.filter != nil && val != nil {
		p.filter.add(key)
	}
	old, ok := p.staged[string(key)]
	if !ok && p.inCkpt {
		p.pending = append(p.pending, pendingChange{off: len(p.keys), n: len(key), val: val})
		p.keys = append(p.keys, key...)
		p.bytes += int64(len(key) + len(val) + pendingOverhead)
		return
	}
	if ok {
		p.bytes -= int64(len(key) + len(old) + stagedOverhead)
	}
	p.staged[string(key)] = val
	p.bytes += int64(len(key) + len(val) + stagedOverhead)
}

// Write sets key to val (nil: deletes it) in a checkpoint's batch, bypassing the staged
// changes (the caller has none staged).
func (p *Spill) Write(b *Batch, key, val []byte) {
	if p.filter != nil && val != nil {
		p.filter.add(key)
	}
	p.kbuf = append(append(p.kbuf[:0], p.prefix...), key...) // the batch copies it
	if val == nil {
		_ = b.b.Delete(p.kbuf, nil)
	} else {
		_ = b.b.Set(p.kbuf, val, nil)
	}
}

// Staged is the memory what changed since the last checkpoint takes.
func (p *Spill) Staged() int64 { return p.bytes }

// Flush writes the staged changes into a checkpoint's batch (n bytes of keys and values);
// done, called once the batch is committed, forgets them.
func (p *Spill) Flush(b *Batch) (n int64, done func()) {
	// write writes p.kbuf (the full key; the batch copies it) with value v.
	write := func(v []byte) {
		n += int64(len(p.kbuf) + len(v))
		if v == nil {
			_ = b.b.Delete(p.kbuf, nil)
		} else {
			_ = b.b.Set(p.kbuf, v, nil)
		}
	}
	for k, v := range p.staged {
		p.kbuf = append(append(p.kbuf[:0], p.prefix...), k...)
		write(v)
	}
	for _, c := range p.pending { // after the staged ones, which they are newer than
		p.kbuf = append(append(p.kbuf[:0], p.prefix...), p.keys[c.off:c.off+c.n]...)
		write(c.val)
	}
	return n, func() {
		p.staged, p.bytes = map[string][]byte{}, 0
		p.inCkpt, p.pending, p.keys = false, nil, nil
	}
}

// Clear drops every value, stored or staged (a view rebuilt from its tables), in batch b.
func (p *Spill) Clear(b *Batch) {
	_ = b.b.DeleteRange(p.prefix, prefixEnd(p.prefix), nil)
	p.staged, p.bytes = map[string][]byte{}, 0
}

// Each calls fn for every key and value in key order: the stored ones overlaid with the
// staged changes.
func (p *Spill) Each(fn func(key, val []byte) error) error {
	keys := make([]string, 0, len(p.staged))
	for k := range p.staged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	it, err := p.s.db.NewIter(&pebble.IterOptions{LowerBound: p.prefix, UpperBound: prefixEnd(p.prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	// emitStaged emits the staged values of the keys before upTo ("" : all that are left).
	emitStaged := func(upTo string) error {
		for len(keys) > 0 && (upTo == "" || keys[0] < upTo) {
			if v := p.staged[keys[0]]; v != nil {
				if err := fn([]byte(keys[0]), v); err != nil {
					return err
				}
			}
			keys = keys[1:]
		}
		return nil
	}
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key()[len(p.prefix):])
		if err := emitStaged(k); err != nil {
			return err
		}
		if len(keys) > 0 && keys[0] == k {
			// The staged value (or deletion) replaces the stored one.
			if v := p.staged[k]; v != nil {
				if err := fn([]byte(k), v); err != nil {
					return err
				}
			}
			keys = keys[1:]
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return emitStaged("")
}

// ClearOwner deletes every operator's spilled state of owner (a dropped view).
func (b *Batch) ClearOwner(owner uint64) {
	p := spillPrefix(owner, 0)
	p = p[:len(p)-3]
	_ = b.b.DeleteRange(p, prefixEnd(p), nil)
}

// prefixEnd is the smallest key after every key starting with p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
