package exec

import (
	"math/rand/v2"
	"testing"
)

// TestIntTableModel checks intTable against a Go map under random puts, gets and deletes
// over a small key space (long probe runs, wrap-around, many deletions).
func TestIntTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab intTable
	model := map[[4]int64]int32{}
	for step := 0; step < 200_000; step++ {
		k := [4]int64{rng.Int64N(300), rng.Int64N(3), 0, 0}
		switch rng.IntN(3) {
		case 0:
			g := rng.Int32N(1000)
			tab.put(k, g)
			model[k] = g
		case 1:
			tab.del(k)
			delete(model, k)
		}
		g, ok := tab.get(k)
		want, wantOK := model[k]
		if ok != wantOK || g != want {
			t.Fatalf("step %d: get(%v) = %d %v, want %d %v", step, k, g, ok, want, wantOK)
		}
		if tab.n != len(model) {
			t.Fatalf("step %d: %d entries, want %d", step, tab.n, len(model))
		}
	}
	for k, want := range model {
		if g, ok := tab.get(k); !ok || g != want {
			t.Fatalf("get(%v) = %d %v, want %d", k, g, ok, want)
		}
	}
}
