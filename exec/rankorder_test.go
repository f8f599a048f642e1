package exec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRankOrderRandom: insert/remove/remap against a sorted slice.
func TestRankOrderRandom(t *testing.T) {
	for seed := uint64(0); seed < 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		keyRange := 1 + rng.IntN(50)
		var keys []int
		var seqs []int
		before := func(a, b int32) bool {
			if keys[a] != keys[b] {
				return keys[a] < keys[b]
			}
			return seqs[a] < seqs[b]
		}
		o := &rankOrder{}
		var in []int32
		for step := 0; step < 3000; step++ {
			switch r := rng.IntN(10); {
			case r < 6 || len(in) == 0:
				j := int32(len(keys))
				keys, seqs = append(keys, rng.IntN(keyRange)), append(seqs, step)
				o.insert(j, before)
				in = append(in, j)
			case r < 9:
				i := rng.IntN(len(in))
				o.remove(in[i], before)
				in = slices.Delete(in, i, i+1)
			default: // compact: drop slots not in
				to := make([]int32, len(keys))
				var nk, ns []int
				isIn := map[int32]bool{}
				for _, j := range in {
					isIn[j] = true
				}
				for j := range keys {
					if isIn[int32(j)] {
						to[j] = int32(len(nk))
						nk, ns = append(nk, keys[j]), append(ns, seqs[j])
					}
				}
				for i, j := range in {
					in[i] = to[j]
				}
				keys, seqs = nk, ns
				o.remap(to)
			}
			want := slices.Clone(in)
			slices.SortFunc(want, func(a, b int32) int {
				if before(a, b) {
					return -1
				}
				if before(b, a) {
					return 1
				}
				return 0
			})
			var got []int32
			o.each(func(j int32) bool { got = append(got, j); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: order %v, want %v", seed, step, got, want)
			}
			for _, b := range o.blocks {
				if len(b) == 0 || len(b) >= 2*orderBlock {
					t.Fatalf("block of %d", len(b))
				}
			}
			for j := range keys {
				if o.has(int32(j)) != slices.Contains(in, int32(j)) {
					t.Fatalf("seed %d step %d: has(%d) wrong", seed, step, j)
				}
			}
		}
	}
}
