package exec

import "testing"

func BenchmarkGroupKeyLookup(b *testing.B) {
	var keys [][4]int64
	for w := int64(0); w < 8; w++ {
		for k := int64(0); k < 1000; k++ {
			keys = append(keys, [4]int64{1_704_067_200_000 + w*10_000, 1_704_067_210_000 + w*10_000, k, 0})
		}
	}
	b.Run("intTable", func(b *testing.B) {
		var t intTable
		for i, k := range keys {
			t.put(k, int32(i))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, ok := t.get(keys[(i*7919)%len(keys)]); !ok {
				b.Fatal("missing")
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		m := map[[4]int64]int32{}
		for i, k := range keys {
			m[k] = int32(i)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, ok := m[keys[(i*7919)%len(keys)]]; !ok {
				b.Fatal("missing")
			}
		}
	})
}
