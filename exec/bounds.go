package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// ValueBound is an inclusive range of the values of an int64-backed column (BIGINT, INT,
// TIMESTAMP, DATE, DECIMAL) outside which a predicate is not TRUE: a stored segment whose
// non-NULL values of Col all lie outside it holds no row the predicate keeps, and a scan
// under the predicate may skip it (Lo > Hi: no value is inside).
type ValueBound struct {
	Col    int
	Lo, Hi int64
}

// ValueBounds returns the bounds pred sets: one per column compared with a constant (=, <, <=,
// >, >=, on either side) in a conjunct of pred, the comparisons of a column intersected.
// Anything else (OR, a computed or converted column) sets none.
func ValueBounds(pred Expr) []ValueBound {
	var out []ValueBound
	var walk func(e Expr)
	walk = func(e Expr) {
		switch x := e.(type) {
		case *logicExpr:
			if x.and {
				walk(x.l)
				walk(x.r)
			}
		case *binaryExpr:
			if b, ok := compareBound(x); ok {
				for i := range out {
					if out[i].Col == b.Col {
						out[i].Lo, out[i].Hi = max(out[i].Lo, b.Lo), min(out[i].Hi, b.Hi)
						return
					}
				}
				out = append(out, b)
			}
		}
	}
	walk(pred)
	return out
}

// compareBound is the bound of a comparison of an int64-backed column with a constant.
func compareBound(e *binaryExpr) (ValueBound, bool) {
	op, col, c := e.op, e.l, e.r
	if _, ok := col.(*ColRef); !ok {
		op, col, c = flipCompare[op], e.r, e.l
	}
	ref, ok := col.(*ColRef)
	if !ok || op == "" || !isConstExpr(c) || !sameValues(ref.Type(), c.Type()) {
		return ValueBound{}, false
	}
	v, err := EvalConst(c)
	k, isInt := v.(int64)
	if err != nil || !isInt {
		return ValueBound{}, false // NULL: the comparison is never TRUE, but that is rare enough
	}
	b := ValueBound{Col: ref.Idx, Lo: math.MinInt64, Hi: math.MaxInt64}
	switch op {
	case "=":
		b.Lo, b.Hi = k, k
	case "<":
		if k == math.MinInt64 {
			b.Lo, b.Hi = 1, 0
		} else {
			b.Hi = k - 1
		}
	case "<=":
		b.Hi = k
	case ">":
		if k == math.MaxInt64 {
			b.Lo, b.Hi = 1, 0
		} else {
			b.Lo = k + 1
		}
	case ">=":
		b.Lo = k
	default:
		return ValueBound{}, false
	}
	return b, true
}

// sameValues reports whether int64-backed values of types a and b compare as they are: the
// same kind and scale, or two integer kinds. (A comparison of others, say a BIGINT column
// with a DECIMAL constant, converts one side, or compares scaled values: its constant is
// not a bound of the column's stored values.)
func sameValues(a, b types.T) bool {
	if a.Phys() != types.PhysInt64 || b.Phys() != types.PhysInt64 {
		return false
	}
	integer := func(t types.T) bool { return t.Kind == types.Int || t.Kind == types.BigInt }
	return integer(a) && integer(b) || a.Kind == b.Kind && a.Scale == b.Scale
}

// flipCompare is the comparison with its operands swapped ("" for none that bounds).
var flipCompare = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// ValueRange is the least and the greatest non-NULL value of an int64-backed column; Some
// is false when it has none.
type ValueRange struct {
	Lo, Hi int64
	Some   bool
}

// Int64Range returns the range of the non-NULL values of an int64 array.
func Int64Range(a arrow.Array) ValueRange {
	x, isInt := a.(*array.Int64)
	if !isInt || x.Len() == x.NullN() {
		return ValueRange{}
	}
	vals := x.Int64Values()
	if x.NullN() == 0 {
		lo, hi := valueRange(vals)
		return ValueRange{Lo: lo, Hi: hi, Some: true}
	}
	r := ValueRange{Lo: math.MaxInt64, Hi: math.MinInt64, Some: true}
	for i, v := range vals {
		if x.IsValid(i) {
			r.Lo, r.Hi = min(r.Lo, v), max(r.Hi, v)
		}
	}
	return r
}

// Excludes reports whether bound b leaves out every value of range r.
func (b ValueBound) Excludes(r ValueRange) bool { return !r.Some || r.Hi < b.Lo || r.Lo > b.Hi }
