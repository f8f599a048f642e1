package engine

import (
	"bytes"
	"hash/maphash"

	"github.com/streamsql/streamsql/exec"
)

// rowBag is a multiset of rows kept as their key encodings (exec.AppendKey) with counts,
// indexed by a 64-bit hash of the encoding: a change costs one hash and one map probe, and
// no value is boxed; rows are decoded when read.
//
// Invariant: slot j is found through index[hashes[j]] == j, or, when another row with the
// same hash holds that entry, through overflow[string(keys[j])] == j.
type rowBag struct {
	hash     func([]byte) uint64
	index    map[uint64]int32
	overflow map[string]int32
	keys     [][]byte
	hashes   []uint64
	counts   []int64
}

func newRowBag() *rowBag {
	seed := maphash.MakeSeed()
	return &rowBag{hash: func(b []byte) uint64 { return maphash.Bytes(seed, b) }, index: map[uint64]int32{}}
}

func (r *rowBag) find(kb []byte, h uint64) (int32, bool) {
	if j, ok := r.index[h]; ok && bytes.Equal(r.keys[j], kb) {
		return j, true
	}
	if len(r.overflow) > 0 {
		j, ok := r.overflow[string(kb)]
		return j, ok
	}
	return 0, false
}

// add changes the count of row kb by w; a row whose count reaches 0 leaves.
func (r *rowBag) add(kb []byte, w int64) {
	h := r.hash(kb)
	j, ok := r.find(kb, h)
	if !ok {
		j = int32(len(r.keys))
		r.keys = append(r.keys, bytes.Clone(kb))
		r.hashes = append(r.hashes, h)
		r.counts = append(r.counts, 0)
		r.locate(j)
	}
	r.counts[j] += w
	if r.counts[j] == 0 {
		r.remove(j)
	}
}

// locate records where slot j is found.
func (r *rowBag) locate(j int32) {
	h := r.hashes[j]
	if k, taken := r.index[h]; taken && k != j {
		if r.overflow == nil {
			r.overflow = map[string]int32{}
		}
		r.overflow[string(r.keys[j])] = j
		return
	}
	r.index[h] = j
}

// remove deletes slot j, moving the last slot into it.
func (r *rowBag) remove(j int32) {
	if r.index[r.hashes[j]] == j {
		delete(r.index, r.hashes[j])
	} else {
		delete(r.overflow, string(r.keys[j]))
	}
	last := int32(len(r.keys) - 1)
	if j != last {
		if r.index[r.hashes[last]] == last {
			delete(r.index, r.hashes[last])
		} else {
			delete(r.overflow, string(r.keys[last]))
		}
		r.keys[j], r.hashes[j], r.counts[j] = r.keys[last], r.hashes[last], r.counts[last]
		r.locate(j)
	}
	r.keys, r.hashes, r.counts = r.keys[:last], r.hashes[:last], r.counts[:last]
}

// each calls fn with every row (of n columns) and its count.
func (r *rowBag) each(n int, fn func(row []any, count int64)) {
	r.eachKey(func(kb []byte, c int64) {
		row, err := exec.DecodeKey(kb, n)
		if err != nil {
			panic(err) // the bag encoded it: a bug, reported as an internal error
		}
		fn(row, c)
	})
}

// eachKey calls fn with every row's key encoding and its count.
func (r *rowBag) eachKey(fn func(kb []byte, count int64)) {
	for j, kb := range r.keys {
		fn(kb, r.counts[j])
	}
}

// total is the number of rows, counting repeats.
func (r *rowBag) total() int64 {
	var n int64
	for _, c := range r.counts {
		n += c
	}
	return n
}
