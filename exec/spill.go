package exec

// Spilling (the engine's memory_limit): an operator whose keyed state can grow without
// bound keeps it in a KeyedStore instead of memory once the engine asks it to. The store
// holds the values of the last checkpoint overlaid with the changes since (package state's
// Spill), so a checkpoint stays one consistent snapshot.

// KeyedStore is keyed state beyond memory.
type KeyedStore interface {
	Get(key []byte) ([]byte, bool, error)
	Put(key, val []byte)
	Delete(key []byte)
}

// Spiller is a stateful operator that can keep its keyed state in a KeyedStore.
type Spiller interface {
	Stateful
	// CanSpill reports whether the operator's state can move to a store.
	CanSpill() bool
	// Spill moves the state into store and keeps it there from now on.
	Spill(store KeyedStore)
	// Spilled reports whether it does (after LoadState: whether the checkpointed state was).
	Spilled() bool
}

// spillResident is how many groups a spilled aggregate keeps in memory between batches.
const spillResident = 1 << 16

var _ Spiller = (*HashAgg)(nil)

// CanSpill implements Spiller: a non-windowed streaming aggregate without TTL (windowed
// state is freed by the watermark; TTL state is bounded by time).
func (h *HashAgg) CanSpill() bool {
	return !h.Windowed && h.TTL == 0 && len(h.Keys) > 0 && !h.Batch
}

// Spill implements Spiller. From now on a group is resident only while batches use it:
// assign loads (or creates) the groups of a batch's rows, and after a batch that leaves more
// than spillResident groups resident, every group is written back and memory released.
func (h *HashAgg) Spill(store KeyedStore) {
	if h.accs == nil {
		h.init()
	}
	h.spill = store
	h.spillLoaded = false
	h.evictAll()
}

// Spilled implements Spiller.
func (h *HashAgg) Spilled() bool { return h.spill != nil || h.spillLoaded }

// spillKey is a group's key in the store.
func spillKey(key []any) []byte {
	var kb []byte
	for _, v := range key {
		kb = AppendValueKey(kb, v)
	}
	return kb
}

// evictAll writes every resident group to the store and starts over with empty memory.
func (h *HashAgg) evictAll() {
	for g, used := range h.inUse {
		if !used {
			continue
		}
		key := h.key(int32(g))
		if h.counts[g] == 0 {
			// No rows left: the group is gone (its accumulators hold nothing).
			h.spill.Delete(spillKey(key))
			continue
		}
		w := &StateWriter{}
		w.Int(h.counts[g])
		for _, a := range h.accs {
			a.save(w, int32(g))
		}
		h.spill.Put(spillKey(key), w.Buf)
	}
	started := h.started
	*h = HashAgg{Keys: h.Keys, KeyT: h.KeyT, Aggs: h.Aggs, Batch: h.Batch, Retract: h.Retract,
		Windowed: h.Windowed, WindowEnd: h.WindowEnd, EmitOnClose: h.EmitOnClose, TTL: h.TTL, Out: h.Out,
		spill: h.spill, swept: h.swept}
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
	v, ok, err := h.spill.Get(h.keyBuf)
	if err != nil && h.spillErr == nil {
		h.spillErr = err
	}
	if ok {
		r := &StateReader{Buf: v}
		h.counts[g] = r.Int()
		for _, a := range h.accs {
			a.load(r, g)
		}
		if err := r.Err(); err != nil && h.spillErr == nil {
			h.spillErr = err
		}
	}
	return g
}
