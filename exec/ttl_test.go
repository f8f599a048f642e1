package exec

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// liveCounts keeps the rows an aggregate's changes leave: key -> count.
type liveCounts map[string]int64

func (l liveCounts) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return nil
	}
	for i := 0; i < m.Batch.N; i++ {
		k := fmt.Sprint(m.Batch.Row(i))
		l[k] += m.Batch.Weight(i)
		if l[k] == 0 {
			delete(l, k)
		}
	}
	return nil
}

func (l liveCounts) String() string {
	var s []string
	for k, v := range l {
		s = append(s, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(s)
	return strings.Join(s, "\n")
}

// TestTTLIndependentOfBatching feeds one stream — rows with the watermark before each, the
// first ones before any watermark — to a TTL aggregate cut into batches at random places,
// with or without the Watermark message a delivery sends after a batch: the rows left, and
// so what was forgotten, must not depend on the cuts.
func TestTTLIndependentOfBatching(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 50 + rng.IntN(200)
		keys := make([]int64, n)
		wms := make([]int64, n)
		w := NoWatermark
		for i := range keys {
			keys[i] = rng.Int64N(12)
			wms[i] = w
			if i > n/10 && rng.IntN(3) == 0 {
				w = max(w, int64(i*10+rng.IntN(30)))
			}
		}
		final := w // the watermark after the last row
		run := func(cuts bool) string {
			out := liveCounts{}
			h := &HashAgg{Keys: []int{0}, KeyT: []types.T{types.TBigInt}, Aggs: []AggSpec{{Fn: AggCountStar}},
				Retract: true, TTL: 120, Out: Output{Op: out}}
			for start := 0; start < n; {
				end := n
				if cuts {
					end = min(n, start+1+rng.IntN(20))
				}
				var rows [][]any
				for _, k := range keys[start:end] {
					rows = append(rows, []any{k})
				}
				b := RowsToBatch(rows, []types.T{types.TBigInt})
				b.WM = wms[start:end]
				if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
					t.Fatal(err)
				}
				if end < n && rng.IntN(2) == 0 {
					// The watermark after the batch: the one before the next row.
					if err := h.Push(0, Msg{Kind: MsgWatermark, Watermark: wms[end]}); err != nil {
						t.Fatal(err)
					}
				}
				start = end
			}
			if err := h.Push(0, Msg{Kind: MsgWatermark, Watermark: final}); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(map[string]int64(out))
		}
		want := run(false)
		for i := 0; i < 5; i++ {
			if got := run(true); got != want {
				t.Fatalf("seed %d: cut into batches the aggregate keeps %s, whole %s", seed, got, want)
			}
		}
	}
}

// TestTTLForgetsAKeyChangedEarlierInTheBatch: a key changed by a batch's first row and due by
// its last (nothing queued before the batch, as after a restart) is forgotten before that
// row, as it is when the rows come one by one.
func TestTTLForgetsAKeyChangedEarlierInTheBatch(t *testing.T) {
	out := liveCounts{}
	h := &HashAgg{Keys: []int{0}, KeyT: []types.T{types.TBigInt}, Aggs: []AggSpec{{Fn: AggCountStar}},
		Retract: true, TTL: 60, Out: Output{Op: out}}
	if err := h.Push(0, Msg{Kind: MsgWatermark, Watermark: 200}); err != nil {
		t.Fatal(err)
	}
	b := RowsToBatch([][]any{{int64(2)}, {int64(3)}, {int64(2)}}, []types.T{types.TBigInt})
	b.WM = []int64{200, 205, 266} // key 2's clock is 205: past the TTL at 266
	if err := h.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(map[string]int64(out)), "map[[2 1]:1 [3 1]:1]"; got != want {
		t.Fatalf("rows %s, want %s (key 2 forgotten before its second row)", got, want)
	}
}
