// Package watermark tracks event-time progress: a table's watermark generated from its
// WATERMARK declaration, advanced row by row in acceptance order (SPEC.md §3).
//
// Invariant: an emitted watermark never decreases.
package watermark

import (
	"math"

	"github.com/streamsql/streamsql/exec"
)

// Generator holds a table's watermark W: the largest value of the WATERMARK expression over
// the rows taken so far.
type Generator struct {
	W int64
}

// New returns a generator before any row: W = exec.NoWatermark.
func New() *Generator { return &Generator{W: exec.NoWatermark} }

// Advance takes the WATERMARK expression's values for rows in acceptance order and returns,
// for each row, the watermark in force just before it, and the watermark after the last row.
// It does not change g: the caller commits the new W with Set once the rows are accepted.
func (g *Generator) Advance(vals []int64) (before []int64, after int64) {
	before = make([]int64, len(vals))
	w := g.W
	for i, v := range vals {
		before[i] = w
		if v > w {
			w = v
		}
	}
	return before, w
}

// AdvanceShifted is Advance over the values vals[i] - d (a WATERMARK `col - INTERVAL ...`),
// computed as it goes; ok is false, and nothing else meaningful, when one of them overflows
// (the caller then evaluates the expression, which reports the error).
func (g *Generator) AdvanceShifted(vals []int64, d int64) (before []int64, after int64, ok bool) {
	before = make([]int64, len(vals))
	w := g.W
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // the values v - d does not overflow for
	if d > 0 {
		lo += d
	} else {
		hi += d
	}
	var out bool
	for i, v := range vals {
		before[i] = w
		out = out || v < lo || v > hi
		w = max(w, v-d)
	}
	return before, w, !out
}

// Set moves W forward to w (never back).
func (g *Generator) Set(w int64) {
	if w > g.W {
		g.W = w
	}
}
