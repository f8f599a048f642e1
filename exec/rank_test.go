package exec

import (
	"fmt"
	"math"
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
		floats := rng.IntN(3) == 0 // DOUBLE keys, NaN among them
		for i := range rows {
			var key, val any = int64(rng.IntN(8)), int64(rng.IntN(100) - 50)
			if floats {
				key = float64(rng.IntN(16)) / 2
				if rng.IntN(5) == 0 {
					key = math.NaN()
				}
			}
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
			switch {
			case b.Kind != Preceding && b.Kind != Following:
			case floats && f.Range:
				b.Offset = float64(rng.IntN(8)) / 4
			case f.Range && rng.IntN(3) == 0:
				b.Offset = Fraction{V: int64(rng.IntN(40)), Shift: 1} // a tenth of the key's unit
			default:
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
		d := int64(10 * (j - i)) // rows, in tenths like the RANGE distances
		return boundOK(f.Start, d, true) && boundOK(f.End, d, false)
	}
	vi, vj := rows[i][0], rows[j][0]
	if x, ok := vi.(float64); ok && math.IsNaN(x) {
		vi = nil // NaN has NaN alone for peers, and sorts beyond the numbers: like NULL here
	}
	if x, ok := vj.(float64); ok && math.IsNaN(x) {
		vj = nil
	}
	if (vi == nil) != (rows[i][0] == nil) || (vj == nil) != (rows[j][0] == nil) {
		// A NaN against a NULL or a number: apart, ordered by position, as a NULL is.
		if vi == nil && vj == nil && rows[i][0] != nil && rows[j][0] != nil {
			return true // NaN and NaN: peers
		}
		if vi == nil && vj == nil {
			return boundsApart(f, i, j)
		}
	}
	if vi == nil || vj == nil {
		// A NULL key's bounds other than unbounded reach its peers (the NULLs); across a
		// NULL and a key, a bounded start lets in only rows after the current one, a
		// bounded end only rows before it.
		if vi == nil && vj == nil {
			return true
		}
		return boundsApart(f, i, j)
	}
	// How far j is after i, in the order's direction, in tenths of the key's unit (floats
	// are quarters here, and offsets of them exact in tenths too).
	var d int64
	switch x := vj.(type) {
	case int64:
		d = 10 * (x - vi.(int64))
	case float64:
		d = int64(math.Round(10 * (x - vi.(float64))))
	}
	if key.Desc {
		d = -d
	}
	return boundOK(f.Start, d, true) && boundOK(f.End, d, false)
}

// boundsApart reports whether row j is in row i's frame when their keys are not comparable
// by distance (a NULL or NaN against another key): a bounded start lets in only rows after
// the current one, a bounded end only rows before it.
func boundsApart(f *Frame, i, j int) bool {
	startOK := f.Start.Kind == UnboundedPreceding || j > i
	endOK := f.End.Kind == UnboundedFollowing || j < i
	return startOK && endOK
}

// tenths is a RANGE offset in tenths of the key's unit.
func tenths(off any) int64 {
	switch o := off.(type) {
	case int64:
		return 10 * o
	case Fraction:
		return o.V // Shift 1
	}
	return int64(math.Round(10 * off.(float64)))
}

// boundOK reports whether a row d tenths after the current one (of rows or of the key's
// unit; negative before it) is within bound b, a start or an end.
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
			return d >= -tenths(b.Offset)
		}
		return d <= -tenths(b.Offset)
	}
	if start {
		return d >= tenths(b.Offset)
	}
	return d <= tenths(b.Offset)
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
