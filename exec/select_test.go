package exec

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SelectTrue keeps exactly the TRUE rows, in order, for any mix of TRUE, FALSE and NULL,
// any length and any offset into the bitmaps (a sliced array).
func TestSelectTrue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		n := rng.IntN(200)
		pTrue, pNull := rng.Float64(), rng.Float64()*float64(iter%2)
		bl := array.NewBooleanBuilder(memory.DefaultAllocator)
		for range n {
			if rng.Float64() < pNull {
				bl.AppendNull()
			} else {
				bl.Append(rng.Float64() < pTrue)
			}
		}
		full := bl.NewBooleanArray()
		lo := rng.IntN(n + 1)
		hi := lo + rng.IntN(n-lo+1)
		a := array.NewSlice(full, int64(lo), int64(hi)).(*array.Boolean)
		var want []int32
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) && a.Value(i) {
				want = append(want, int32(i))
			}
		}
		if got := SelectTrue(a); !slices.Equal(got, want) {
			t.Fatalf("rows %d..%d of %d: got %v, want %v", lo, hi, n, got, want)
		}
	}
}

func BenchmarkSelectTrue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []float64{0.01, 0.5, 0.99} {
		bl := array.NewBooleanBuilder(memory.DefaultAllocator)
		for range 64 << 10 {
			bl.Append(rng.Float64() < p)
		}
		a := bl.NewBooleanArray()
		b.Run(map[float64]string{0.01: "1%", 0.5: "50%", 0.99: "99%"}[p], func(b *testing.B) {
			for b.Loop() {
				SelectTrue(a)
			}
		})
	}
}
