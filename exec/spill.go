package exec

// Keyed state: an operator whose state grows with distinct keys keeps it, as of each
// checkpoint, as one entry per key in a KeyedStore (package state's Spill: Pebble under the
// view and the operator, with the changes since the last checkpoint staged in memory and
// written by the next checkpoint in its batch). In memory it tracks which keys changed, so
// a checkpoint writes only those — dirty entries, not the whole state — and a restart reads
// the entries back. Under the engine's memory_limit the same entries let it spill: from
// then on only the keys a batch uses are resident.

// KeyedStore is keyed state in the store: the values of the last checkpoint overlaid with
// the changes staged since.
type KeyedStore interface {
	Get(key []byte) ([]byte, bool, error)
	Put(key, val []byte)
	Delete(key []byte)
	// Each calls fn for every key and value, in key order.
	Each(fn func(key, val []byte) error) error
}

// Keyed is a stateful operator whose keyed state lives in a KeyedStore as of each
// checkpoint: SaveState puts there the entries changed since the last checkpoint (and
// deletes those gone), writing only the rest of its state into the checkpoint's record;
// LoadState reads the entries back. The engine attaches the store before the first message
// and before LoadState.
type Keyed interface {
	Stateful
	Attach(store KeyedStore)
}

// Spiller is a Keyed operator that can also keep its entries out of memory.
type Spiller interface {
	Keyed
	// CanSpill reports whether the operator's state can move to the store.
	CanSpill() bool
	// Spill writes back what changed, releases memory, and from now on keeps resident only
	// the entries a batch uses.
	Spill()
}

// spillResident is how many groups a spilled aggregate keeps in memory between batches.
const spillResident = 1 << 16

var _ Spiller = (*HashAgg)(nil)

// Attach implements Keyed.
func (h *HashAgg) Attach(store KeyedStore) { h.store = store }

// CanSpill implements Spiller: a non-windowed streaming aggregate without TTL (windowed
// state is freed by the watermark; TTL state is bounded by time).
func (h *HashAgg) CanSpill() bool {
	return !h.Windowed && h.TTL == 0 && len(h.Keys) > 0 && len(h.Always) == 0 && !h.Batch
}

// Spill implements Spiller. From now on a group is resident only while batches use it:
// assign loads (or creates) the groups of a batch's rows, and after a batch that leaves more
// than spillResident groups resident, the changed ones are written back and memory released.
func (h *HashAgg) Spill() {
	if h.accs == nil {
		h.init()
	}
	h.spilled = true
	h.evictAll()
}

// groupKey appends group g's key in the store (its values' AppendValueKey encodings).
func (h *HashAgg) groupKey(buf []byte, g int32) []byte {
	if key, ok := h.keyRows[g]; ok {
		buf = AppendValuesKey(buf, key)
		return buf
	}
	for _, v := range h.ints[int(g)*len(h.Keys) : int(g+1)*len(h.Keys)] {
		buf = AppendValueKey(buf, v)
	}
	return buf
}

// markDirty records that groups gs changed since the last checkpoint.
func (h *HashAgg) markDirty(gs []int32) {
	if h.store == nil {
		return
	}
	for _, g := range gs {
		if !h.dirty[g] {
			h.dirty[g] = true
			h.dirtyGs = append(h.dirtyGs, g)
		}
	}
}

// writeChanges puts the groups changed since the last checkpoint into the store and
// deletes the stored groups that are gone (released, or left with no rows).
func (h *HashAgg) writeChanges() {
	for _, k := range h.gone {
		h.store.Delete(k)
	}
	h.gone = h.gone[:0]
	var w StateWriter
	for _, g := range h.dirtyGs {
		h.dirty[g] = false
		if !h.inUse[g] {
			continue // released: its key, if stored, is in gone
		}
		h.keyBuf = h.groupKey(h.keyBuf[:0], g)
		if h.counts[g] == 0 && len(h.Keys) > 0 {
			// No rows left: the group is gone (its accumulators hold nothing).
			if h.stored[g] {
				h.store.Delete(h.keyBuf)
				h.stored[g] = false
			}
			continue
		}
		// The values share one growing buffer (the store keeps them until the checkpoint
		// commits; a value already put stays in the array it was written to).
		start := len(w.Buf)
		w.Int(h.counts[g])
		if h.TTL > 0 {
			w.Int(h.clk.seen[g])
		}
		for _, a := range h.accs {
			a.save(&w, g)
		}
		h.store.Put(h.keyBuf, w.Buf[start:len(w.Buf):len(w.Buf)])
		h.stored[g] = true
	}
	h.dirtyGs = h.dirtyGs[:0]
}

// loadGroup restores group g's count, clock and accumulators from its stored value.
func (h *HashAgg) loadGroup(g int32, val []byte) error {
	r := &StateReader{Buf: val}
	h.counts[g] = r.Int()
	if h.TTL > 0 {
		h.clk.stamp(&h.due, 0, g, r.Int())
	}
	for _, a := range h.accs {
		a.load(r, g)
	}
	h.stored[g] = true
	return r.Err()
}

// evictAll writes the changed groups to the store and starts over with empty memory.
func (h *HashAgg) evictAll() {
	h.writeChanges()
	started := h.started
	*h = HashAgg{Keys: h.Keys, KeyT: h.KeyT, Aggs: h.Aggs, Batch: h.Batch, Retract: h.Retract,
		Windowed: h.Windowed, WindowEnd: h.WindowEnd, WindowStart: h.WindowStart, EmitOnClose: h.EmitOnClose, TTL: h.TTL, Errs: h.Errs, Out: h.Out,
		store: h.store, spilled: h.spilled, outErr: h.outErr}
	h.init()
	h.started = started
}

// spillGroup finds the group of row i: resident, or loaded from the store, or new.
func (h *HashAgg) spillGroup(b *Batch, i int) int32 {
	h.keyBuf = RowKey(h.keyBuf[:0], b, h.Keys, i)
	if g, ok := h.groups[string(h.keyBuf)]; ok {
		return g
	}
	key := make([]any, len(h.Keys))
	for k, c := range h.Keys {
		key[k] = Value(b.Cols[c], i)
	}
	g := h.newGroup(key)
	h.groups[string(h.keyBuf)] = g
	v, ok, err := h.store.Get(h.keyBuf)
	if err == nil && ok {
		err = h.loadGroup(g, v)
	}
	if err != nil && h.spillErr == nil {
		h.spillErr = err
	}
	return g
}

// ChangedKeys is the keyed state of an operator that rebuilds each entry from memory when it
// changed (a ranker's partitions, a session window's, a temporal join's versions per key):
// the store, and the keys changed since the last checkpoint. Embedded, it implements Attach.
type ChangedKeys struct {
	store   KeyedStore
	changed map[string]struct{}
}

// Attach implements Keyed.
func (c *ChangedKeys) Attach(store KeyedStore) {
	c.store, c.changed = store, map[string]struct{}{}
}

// Mark records that key k's entry changed (or went).
func (c *ChangedKeys) Mark(k string) {
	if c.store != nil {
		c.changed[k] = struct{}{}
	}
}

// WriteChanged puts the entry of each key changed since the last checkpoint, as encode
// gives it (nil: the key has none left, and leaves the store).
func (c *ChangedKeys) WriteChanged(encode func(k string) []byte) {
	for k := range c.changed {
		if v := encode(k); v != nil {
			c.store.Put([]byte(k), v)
		} else {
			c.store.Delete([]byte(k))
		}
	}
	clear(c.changed)
}

// EachStored calls fn for every stored entry (at a restore).
func (c *ChangedKeys) EachStored(fn func(key, val []byte) error) error { return c.store.Each(fn) }
