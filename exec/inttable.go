package exec

// intTable maps group keys of up to four int64s to group ids. It is open addressing with
// linear probing over a power-of-two array and backward-shift deletion: a lookup mixes the
// key with a few multiplications and usually touches one slot — key and value side by side,
// so one memory access — where the runtime's map hashes the 32-byte key generically. Unused
// key positions are zero.
//
// Invariant: every entry sits between its home slot and the first empty slot after it.
type intTable struct {
	slots []intSlot
	n     int
}

// intSlot is an entry: a key and its group id + 1 (0 marks an empty slot).
type intSlot struct {
	key [4]int64
	val int32
}

func (t *intTable) home(k *[4]int64) int {
	h := uint64(k[0])*0x9E3779B97F4A7C15 ^ uint64(k[1])*0xC2B2AE3D27D4EB4F ^
		uint64(k[2])*0x165667B19E3779F9 ^ uint64(k[3])*0x27D4EB2F165667C5
	h ^= h >> 31
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 29
	return int(h & uint64(len(t.slots)-1))
}

// get returns k's group.
func (t *intTable) get(k [4]int64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(&k); ; i = (i + 1) & mask {
		switch sl := &t.slots[i]; {
		case sl.val == 0:
			return 0, false
		case sl.key == k:
			return sl.val - 1, true
		}
	}
}

// put sets k's group.
func (t *intTable) put(k [4]int64, g int32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(&k); ; i = (i + 1) & mask {
		switch sl := &t.slots[i]; {
		case sl.val == 0:
			sl.key, sl.val = k, g+1
			t.n++
			return
		case sl.key == k:
			sl.val = g + 1
			return
		}
	}
}

// del removes k, shifting later entries of its probe run back so none is cut off from its
// home slot.
func (t *intTable) del(k [4]int64) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(&k)
	for ; t.slots[i].val != 0 && t.slots[i].key != k; i = (i + 1) & mask {
	}
	if t.slots[i].val == 0 {
		return
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].val != 0; j = (j + 1) & mask {
		// Move j into the hole at i unless its home lies cyclically in (i, j].
		h := t.home(&t.slots[j].key)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = intSlot{}
}

func (t *intTable) grow() {
	old := t.slots
	t.slots, t.n = make([]intSlot, max(64, 2*len(old))), 0
	for _, sl := range old {
		if sl.val != 0 {
			t.put(sl.key, sl.val-1)
		}
	}
}

// reset empties the table, keeping its size (a window's table reused for the next window).
func (t *intTable) reset() {
	clear(t.slots)
	t.n = 0
}

// winKeys is a key table of a windowed aggregate, one per window. Its keys share the window
// columns, so when a single other column (col) varies, a key equal to the first one put in
// every other column is found by its col value alone: directly (dense) when it lies within
// winDenseSpan of the first one's, else in far; any other key goes to the hash table of
// whole keys. The first put fixes ref and base, so each key has one home, whichever column
// col names.
type winKeys struct {
	intTable
	col   int      // the varying key column, -1: the hash table only
	ref   [4]int64 // the first key put, its col zeroed
	base  int64    // the col value at dense[0]
	dense []int32  // group id + 1; empty until the first put
	far   colTable
}

// colTable maps one int64 (a winKeys' col value) to a group id: open addressing with linear
// probing at most half full, a slot being 16 bytes, so that a window of many keys, most of
// them new to it, probes few cache lines (intTable's slots hold whole keys).
type colTable struct {
	slots []colSlot
	n     int
}

// colSlot is an entry: a key and its group id + 1 (0 marks an empty slot).
type colSlot struct {
	key int64
	val int32
}

func (t *colTable) home(k int64) int {
	h := uint64(k) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	return int(h & uint64(len(t.slots)-1))
}

func (t *colTable) get(k int64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		switch sl := &t.slots[i]; {
		case sl.val == 0:
			return 0, false
		case sl.key == k:
			return sl.val - 1, true
		}
	}
}

func (t *colTable) put(k int64, g int32) {
	if sl := t.slot(k); sl.val == 0 {
		t.fill(sl, k, g)
	} else {
		sl.val = g + 1
	}
}

// slot returns k's slot, or the empty slot where k goes, growing the table first so that
// one more key fits: finding a key and adding it when missing is one probe.
func (t *colTable) slot(k int64) *colSlot {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots, t.n = make([]colSlot, max(64, 2*len(old))), 0
		for _, sl := range old {
			if sl.val != 0 {
				t.fill(t.slot(sl.key), sl.key, sl.val-1)
			}
		}
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		if sl := &t.slots[i]; sl.val == 0 || sl.key == k {
			return sl
		}
	}
}

// fill puts k with group g into sl, an empty slot that slot(k) returned.
func (t *colTable) fill(sl *colSlot, k int64, g int32) {
	sl.key, sl.val = k, g+1
	t.n++
}

// winDenseSpan is the width of a window's directly indexed key range.
const winDenseSpan = 4096

// slot returns k's dense slot, or -1.
func (w *winKeys) slot(k [4]int64) int {
	if w.col < 0 || len(w.dense) == 0 {
		return -1
	}
	v := k[w.col]
	k[w.col] = 0
	if d := uint64(v - w.base); k == w.ref && d < uint64(len(w.dense)) {
		return int(d)
	}
	return -1
}

// isFar reports whether k, not in dense's range, is found by its col value in far.
func (w *winKeys) isFar(k [4]int64) bool {
	if w.col < 0 || len(w.dense) == 0 {
		return false
	}
	k[w.col] = 0
	return k == w.ref
}

func (w *winKeys) get(k [4]int64) (int32, bool) {
	if d := w.slot(k); d >= 0 {
		if g := w.dense[d]; g > 0 {
			return g - 1, true
		}
		return 0, false
	}
	if w.isFar(k) {
		return w.far.get(k[w.col])
	}
	return w.intTable.get(k)
}

func (w *winKeys) put(k [4]int64, g int32) {
	if w.col >= 0 && len(w.dense) == 0 {
		w.ref, w.base = k, k[w.col]-winDenseSpan/2
		w.ref[w.col] = 0
		if cap(w.dense) >= winDenseSpan {
			w.dense = w.dense[:winDenseSpan]
		} else {
			w.dense = make([]int32, winDenseSpan)
		}
	}
	if d := w.slot(k); d >= 0 {
		w.dense[d] = g + 1
		return
	}
	if w.isFar(k) {
		w.far.put(k[w.col], g)
		return
	}
	w.intTable.put(k, g)
}

// reset empties the table, keeping its sizes (a window's table reused for the next window).
func (w *winKeys) reset() {
	w.intTable.reset()
	clear(w.dense)
	w.dense, w.ref = w.dense[:0], [4]int64{}
	clear(w.far.slots)
	w.far.n = 0
}
