package engine

import (
	"fmt"
	"math/rand/v2"
	"sort"
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
		var got, want []string
		bag.each(3, func(row []any, c int64) { got = append(got, fmt.Sprint(row, c)) })
		for k, c := range model {
			row, err := exec.DecodeKey([]byte(k), 3)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprint(row, c))
		}
		sort.Strings(got)
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) || bag.total() != int64(sum(model)) {
			t.Fatalf("collide=%v: bag %v (total %d), want %v", collide, got, bag.total(), want)
		}
	}
}

func sum(m map[string]int64) (n int64) {
	for _, c := range m {
		n += c
	}
	return n
}
