package exec

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestFramesMatchDefinition checks Ranker's frames, and the aggregates over them, against
// the frames' definition applied row by row: random partitions (ties, NULL keys, both
// directions) and random ROWS and RANGE bounds.
func TestFramesMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []BoundKind{UnboundedPreceding, Preceding, CurrentRow, Following, UnboundedFollowing}
	fns := []RankFunc{WinSum, WinCountStar, WinCount, WinMin, WinMax, FirstValue, LastValue}
	for iter := 0; iter < 3000; iter++ {
		n := rng.IntN(12)
		rows := make([][]any, n)
		for i := range rows {
			var key, val any = int64(rng.IntN(8)), int64(rng.IntN(100) - 50)
			if rng.IntN(6) == 0 {
				key = nil
			}
			if rng.IntN(5) == 0 {
				val = nil
			}
			rows[i] = []any{key, val}
		}
		order := SortKey{Col: 0, Desc: rng.IntN(2) == 0}
		f := &Frame{Range: rng.IntN(2) == 0}
		f.Start = Bound{Kind: kinds[rng.IntN(4)]}
		f.End = Bound{Kind: kinds[1+rng.IntN(4)]}
		for _, b := range []*Bound{&f.Start, &f.End} {
			if b.Kind == Preceding || b.Kind == Following {
				b.Offset = int64(rng.IntN(4))
			}
		}
		fn := fns[rng.IntN(len(fns))]
		r := &Ranker{Fn: fn, Order: []SortKey{order}, Types: []types.T{types.TBigInt, types.TBigInt}, Arg: 1, Frame: f}
		sort.SliceStable(rows, func(a, b int) bool { return r.less(rows[a], rows[b]) })
		got, err := r.values(rows)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			var in []any
			for j := range rows {
				if inFrame(rows, i, j, f, order) {
					in = append(in, rows[j][1])
				}
			}
			if want := naive(fn, in); fmt.Sprint(got[i]) != fmt.Sprint(want) {
				t.Fatalf("%v over %v, frame %+v (desc %v), row %d: got %v, want %v", fn, rows, *f, order.Desc, i, got[i], want)
			}
		}
	}
}

// inFrame reports whether row j is in row i's frame, from the definition: ROWS by position,
// RANGE by the key's distance in the order's direction.
func inFrame(rows [][]any, i, j int, f *Frame, key SortKey) bool {
	if !f.Range {
		d := int64(j - i)
		return boundOK(f.Start, d, true) && boundOK(f.End, d, false)
	}
	vi, vj := rows[i][0], rows[j][0]
	if vi == nil || vj == nil {
		// A NULL key's bounds other than unbounded reach its peers (the NULLs); across a
		// NULL and a key, a bounded start lets in only rows after the current one, a
		// bounded end only rows before it.
		if vi == nil && vj == nil {
			return true
		}
		startOK := f.Start.Kind == UnboundedPreceding || j > i
		endOK := f.End.Kind == UnboundedFollowing || j < i
		return startOK && endOK
	}
	d := vj.(int64) - vi.(int64) // how far j is after i, in the order's direction
	if key.Desc {
		d = -d
	}
	return boundOK(f.Start, d, true) && boundOK(f.End, d, false)
}

// boundOK reports whether a row d after the current one (rows or key distance; negative
// before it) is within bound b, a start or an end.
func boundOK(b Bound, d int64, start bool) bool {
	switch b.Kind {
	case UnboundedPreceding, UnboundedFollowing:
		return true
	case CurrentRow:
		if start {
			return d >= 0
		}
		return d <= 0
	case Preceding:
		if start {
			return d >= -b.Offset.(int64)
		}
		return d <= -b.Offset.(int64)
	}
	if start {
		return d >= b.Offset.(int64)
	}
	return d <= b.Offset.(int64)
}

// naive computes fn over the frame's values, in order.
func naive(fn RankFunc, in []any) any {
	switch fn {
	case FirstValue, LastValue:
		if len(in) == 0 {
			return nil
		}
		if fn == FirstValue {
			return in[0]
		}
		return in[len(in)-1]
	case WinCountStar:
		return int64(len(in))
	}
	var sum, count int64
	var lo, hi any
	for _, v := range in {
		if v == nil {
			continue
		}
		x := v.(int64)
		sum, count = sum+x, count+1
		if lo == nil || x < lo.(int64) {
			lo = x
		}
		if hi == nil || x > hi.(int64) {
			hi = x
		}
	}
	switch fn {
	case WinCount:
		return count
	case WinMin:
		return lo
	case WinMax:
		return hi
	}
	if count == 0 {
		return nil
	}
	return sum
}
