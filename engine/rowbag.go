package engine

import (
	"bytes"
	"hash/maphash"
)

// rowBag is a multiset of rows kept as their key encodings (exec.AppendKey) with counts, in
// slots found through an open-addressing table of 64-bit hashes of the encodings: a change
// costs one hash and usually one probe, and no value is boxed; rows are decoded when read.
// The encodings live in large chunks (an arena), so a row costs no allocation of its own and
// the slots hold no pointers for the garbage collector to scan; once the encodings of
// removed rows outweigh the live ones, the live ones are copied to fresh chunks.
//
// Invariants: a slot is free iff its count is 0 (free slots are listed in free and reused);
// every used slot j's entry sits in table between its home (its hash & mask) and the first
// empty entry after it.
type rowBag struct {
	hash  func([]byte) uint64
	table []uint64 // per entry: the top 32 bits of the row's hash, then its slot + 1; 0 marks an empty entry
	slots []rowSlot
	free  []int32
	used  int
	// chunks hold the encodings; keyBytes is the size of the live ones, deadBytes of the
	// removed ones still in chunks.
	chunks    [][]byte
	keyBytes  int64
	deadBytes int64
}

// rowSlot is a row: what a change reads of it sits together. Its encoding is
// chunks[chunk][off:off+n].
type rowSlot struct {
	hash   uint64
	count  int64
	off, n uint32
	chunk  uint32
}

// chunkSize is the size of an arena chunk (a longer encoding gets a chunk of its own).
const chunkSize = 1 << 20

func newRowBag() *rowBag {
	seed := maphash.MakeSeed()
	return &rowBag{hash: func(b []byte) uint64 { return maphash.Bytes(seed, b) }}
}

// entry is slot j's table entry.
func entry(h uint64, j int32) uint64 { return h&^(1<<32-1) | uint64(j+1) }

// key is slot j's encoding (valid until the next change).
func (r *rowBag) key(j int32) []byte {
	sl := &r.slots[j]
	return r.chunks[sl.chunk][sl.off : sl.off+sl.n : sl.off+sl.n]
}

// find returns the slot of kb, whose hash is h.
func (r *rowBag) find(kb []byte, h uint64) (int32, bool) {
	if r.used == 0 {
		return 0, false
	}
	mask := uint64(len(r.table) - 1)
	tag := h &^ (1<<32 - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := r.table[i]
		if e == 0 {
			return 0, false
		}
		if e&^(1<<32-1) == tag {
			if j := int32(uint32(e)) - 1; bytes.Equal(r.key(j), kb) {
				return j, true
			}
		}
	}
}

// add changes the count of row kb by w; a row whose count reaches 0 leaves.
func (r *rowBag) add(kb []byte, w int64) {
	h := r.hash(kb)
	j, ok := r.find(kb, h)
	if !ok {
		j = r.insert(kb, h)
	}
	if r.slots[j].count += w; r.slots[j].count == 0 {
		r.remove(j)
	}
}

// count is row kb's count (0 when absent).
func (r *rowBag) count(kb []byte) int64 {
	if j, ok := r.find(kb, r.hash(kb)); ok {
		return r.slots[j].count
	}
	return 0
}

// place copies an encoding into the arena and returns where it is.
func (r *rowBag) place(kb []byte) (chunk, off uint32) {
	last := len(r.chunks) - 1
	if last < 0 || len(r.chunks[last])+len(kb) > cap(r.chunks[last]) {
		r.chunks = append(r.chunks, make([]byte, 0, max(chunkSize, len(kb))))
		last++
	}
	c := r.chunks[last]
	r.chunks[last] = append(c, kb...)
	return uint32(last), uint32(len(c))
}

// insert gives a new row a slot (count 0) and indexes it.
func (r *rowBag) insert(kb []byte, h uint64) int32 {
	if 4*(r.used+1) > 3*len(r.table) {
		r.grow()
	}
	chunk, off := r.place(kb)
	sl := rowSlot{hash: h, off: off, n: uint32(len(kb)), chunk: chunk}
	var j int32
	if n := len(r.free); n > 0 {
		j, r.free = r.free[n-1], r.free[:n-1]
		r.slots[j] = sl
	} else {
		j = int32(len(r.slots))
		r.slots = append(r.slots, sl)
	}
	r.used++
	r.keyBytes += int64(len(kb))
	r.index(j)
	return j
}

// index puts slot j in the table.
func (r *rowBag) index(j int32) {
	mask := uint64(len(r.table) - 1)
	h := r.slots[j].hash
	i := h & mask
	for r.table[i] != 0 {
		i = (i + 1) & mask
	}
	r.table[i] = entry(h, j)
}

func (r *rowBag) grow() {
	r.table = make([]uint64, max(64, 2*len(r.table)))
	for j := range r.slots {
		if r.slots[j].count != 0 {
			r.index(int32(j))
		}
	}
}

// remove frees slot j (its count is 0), shifting later entries of its probe run back so
// none is cut off from its home.
func (r *rowBag) remove(j int32) {
	mask := uint64(len(r.table) - 1)
	sl := &r.slots[j]
	i := sl.hash & mask
	for uint32(r.table[i]) != uint32(j+1) {
		i = (i + 1) & mask
	}
	for k := (i + 1) & mask; r.table[k] != 0; k = (k + 1) & mask {
		// Move entry k into the hole at i unless its home lies cyclically in (i, k].
		home := r.slots[uint32(r.table[k])-1].hash & mask
		if (k > i && (home <= i || home > k)) || (k < i && home <= i && home > k) {
			r.table[i] = r.table[k]
			i = k
		}
	}
	r.table[i] = 0
	r.keyBytes -= int64(sl.n)
	r.deadBytes += int64(sl.n)
	r.free = append(r.free, j)
	r.used--
	if r.deadBytes > r.keyBytes && r.deadBytes > chunkSize/16 {
		r.compact()
	}
}

// compact copies the live encodings to fresh chunks, dropping the removed ones.
func (r *rowBag) compact() {
	old := r.chunks
	r.chunks, r.deadBytes = nil, 0
	for j := range r.slots {
		if sl := &r.slots[j]; sl.count != 0 {
			sl.chunk, sl.off = r.place(old[sl.chunk][sl.off : sl.off+sl.n])
		}
	}
}

// eachKey calls fn with every row's key encoding and its count.
func (r *rowBag) eachKey(fn func(kb []byte, count int64)) {
	for j := range r.slots {
		if c := r.slots[j].count; c != 0 {
			fn(r.key(int32(j)), c)
		}
	}
}
