package exec

import "testing"

func plainAdd(d, x, y []int64) bool {
	y = y[:len(x)]
	d = d[:len(x)]
	var ovf int64
	for i := range x {
		a, b := x[i], y[i]
		s := a + b
		ovf |= (a ^ s) & (b ^ s)
		d[i] = s
	}
	return ovf < 0
}

func BenchmarkZZAdd(b *testing.B) {
	n := 1 << 16
	x, y, d := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range x { x[i] = int64(i); y[i] = int64(3*i) }
	b.Run("plain", func(b *testing.B) { for i := 0; i < b.N; i++ { plainAdd(d, x, y) } })
	b.Run("add", func(b *testing.B) { for i := 0; i < b.N; i++ { addInt64s(d, x, -1, y, -1) } })
}
