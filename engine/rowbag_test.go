package engine

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/streamsql/streamsql/exec"
)

// TestRowBagModel checks the bag against a map under random changes, with the real hash
// and with one that collides often (long probe runs, so deletion's backward shifts are
// exercised), and its counts at random steps. Enough rows come and go for the arena to be
// compacted.
func TestRowBagModel(t *testing.T) {
	for _, collide := range []bool{false, true} {
		bag := newRowBag()
		if collide {
			bag.hash = func(b []byte) uint64 { return uint64(len(b) + int(b[len(b)-1])%3) }
		}
		model := map[string]int64{}
		rng := rand.New(rand.NewPCG(5, 6))
		compactions := 0
		for step := 0; step < 200_000; step++ {
			row := []any{rng.Int64N(40), fmt.Sprint("s", rng.IntN(5)), nil}
			if rng.IntN(4) == 0 {
				row[2] = rng.Float64() < 0.5
			}
			var kb []byte
			for _, v := range row {
				kb = exec.AppendValueKey(kb, v)
			}
			w := int64(1)
			if model[string(kb)] > 0 && rng.IntN(2) == 0 {
				w = -1
			}
			dead := bag.deadBytes
			bag.add(kb, w)
			if bag.deadBytes < dead {
				compactions++
			}
			if model[string(kb)] += w; model[string(kb)] == 0 {
				delete(model, string(kb))
			}
			if c := bag.count(kb); c != model[string(kb)] {
				t.Fatalf("collide=%v, step %d: count %d, want %d", collide, step, c, model[string(kb)])
			}
		}
		if compactions == 0 {
			t.Fatalf("collide=%v: the arena was never compacted", collide)
		}
		got := map[string]int64{}
		bag.eachKey(func(kb []byte, c int64) { got[string(kb)] = c })
		if !maps.Equal(got, model) {
			t.Fatalf("collide=%v: the bag holds %d rows, the model %d", collide, len(got), len(model))
		}
	}
}

func sum(m map[string]int64) (n int64) {
	for _, c := range m {
		n += c
	}
	return n
}
