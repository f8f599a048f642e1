package state

import (
	"hash/maphash"
	"math/bits"
)

// keyFilter tells a Spill which keys cannot be in the store, so that looking up a key never
// written (a new group, the common case of state that grows with distinct keys) costs no
// store read. It is a Bloom filter over every key written (a deleted key stays: a false
// "maybe" costs one read), in layers: when the last layer holds as many keys as it was
// sized for, a layer twice as large is added, so the false-positive rate stays about 1% per
// layer however many keys come.
//
// Invariant: mayHave(k) is true for every key added.
type keyFilter struct {
	seed   maphash.Seed
	layers []filterLayer
}

// filterLayer is one Bloom filter: len(bits)*64 bits, a power of two, for cap keys.
type filterLayer struct {
	bits   []uint64
	n, cap int
}

const (
	filterBitsPerKey = 10
	filterProbes     = 7
	filterFirstCap   = 1 << 14
)

func newKeyFilter() *keyFilter { return &keyFilter{seed: maphash.MakeSeed()} }

// probe calls fn with each of key's bit positions in a layer of 1<<logBits bits (double
// hashing: h1 + i*h2).
func probe(h uint64, logBits int, fn func(bit uint64) bool) bool {
	h1, h2 := h, h>>32|1
	mask := uint64(1)<<logBits - 1
	for i := uint64(0); i < filterProbes; i++ {
		if !fn((h1 + i*h2) & mask) {
			return false
		}
	}
	return true
}

func (l *filterLayer) logBits() int { return bits.Len(uint(len(l.bits)*64)) - 1 }

func (l *filterLayer) has(h uint64) bool {
	return probe(h, l.logBits(), func(b uint64) bool { return l.bits[b>>6]&(1<<(b&63)) != 0 })
}

// add records key (once: a key that may be there already is not added again, so updates of
// one key do not fill the filter).
func (f *keyFilter) add(key []byte) {
	h := maphash.Bytes(f.seed, key)
	if f.has(h) {
		return
	}
	if n := len(f.layers); n == 0 || f.layers[n-1].n >= f.layers[n-1].cap {
		c := filterFirstCap
		if n > 0 {
			c = 2 * f.layers[n-1].cap
		}
		words := 1 << bits.Len(uint(c*filterBitsPerKey/64-1)) // rounded up to a power of two
		f.layers = append(f.layers, filterLayer{bits: make([]uint64, words), cap: c})
	}
	l := &f.layers[len(f.layers)-1]
	probe(h, l.logBits(), func(b uint64) bool { l.bits[b>>6] |= 1 << (b & 63); return true })
	l.n++
}

// mayHave reports whether key may have been added; false is certain.
func (f *keyFilter) mayHave(key []byte) bool { return f.has(maphash.Bytes(f.seed, key)) }

func (f *keyFilter) has(h uint64) bool {
	for i := len(f.layers) - 1; i >= 0; i-- { // the newest layer holds the recent keys
		if f.layers[i].has(h) {
			return true
		}
	}
	return false
}
