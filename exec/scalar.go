package exec

// Scalar expressions. The constructors in scalar*.go (NewBinary, NewCast, NewFunc, ...) are
// what the binder calls: each type-checks its operands once, inserts the implicit conversions
// SQL asks for, and returns an Expr whose Eval runs one vectorised kernel per batch.
//
// Conventions shared by every kernel in scalar*.go:
//   - A result row is NULL exactly where SQL says so. Strict operators (arithmetic,
//     comparison, most functions) are NULL where any operand is NULL.
//   - Data errors (overflow, division by zero, bad cast text) are raised only for rows whose
//     operands are all non-null: a value under a null bit is unspecified and never judged.
//     Hot kernels compute every row branch-free and only re-examine the validity bitmap when
//     the fast pass flagged a possible error.
//   - CASE, COALESCE and IF evaluate a branch only on the rows that select it, as PostgreSQL
//     does, so `CASE WHEN b = 0 THEN 0 ELSE a / b END` never divides by zero.
//   - Arrays returned by a child's Eval are released as soon as the kernel is done with them.
//   - Constructor errors are user errors: plain errors whose message names the operator or
//     function and the types found.

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Data errors raised by kernels.
var (
	errIntOverflow  = errors.New("integer overflow")
	errDecOverflow  = errors.New("DECIMAL overflow")
	errTimeOverflow = errors.New("timestamp out of range")
	errDivByZero    = errors.New("division by zero")
)

// releaseAll releases every non-nil array.
func releaseAll(as ...arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// validityOf returns a's validity bitmap aligned to row 0 (bit i set = row i non-null), or
// nil when a has no nulls. The result may alias a's buffer: callers only read it.
func validityOf(a arrow.Array) []byte {
	if a == nil || a.NullN() == 0 {
		return nil
	}
	n := a.Len()
	d := a.Data()
	buf := d.Buffers()[0]
	if buf == nil || buf.Len() == 0 { // e.g. *array.Null: every row is null
		return make([]byte, (n+7)/8)
	}
	off := d.Offset()
	if off%8 == 0 {
		return buf.Bytes()[off/8:]
	}
	out := make([]byte, (n+7)/8)
	bitutil.CopyBitmap(buf.Bytes(), off, n, out, 0)
	return out
}

// andValidity returns a fresh bitmap that is the AND of the validity of arrs (nil entries
// count as all-valid) and its null count, or (nil, 0) when no array has nulls.
func andValidity(n int, arrs ...arrow.Array) ([]byte, int) {
	var out []byte
	for _, a := range arrs {
		v := validityOf(a)
		if v == nil {
			continue
		}
		if out == nil {
			out = make([]byte, (n+7)/8)
			copy(out, v[:len(out)])
			continue
		}
		for i := range out {
			out[i] &= v[i]
		}
	}
	if out == nil {
		return nil, 0
	}
	return out, n - bitutil.CountSetBits(out, 0, n)
}

// isValidAt reports bit i of a validity bitmap; nil means all valid.
func isValidAt(valid []byte, i int) bool { return valid == nil || bitutil.BitIsSet(valid, i) }

// anyValidRow reports whether bad(i) holds for some valid row i < n. It is the slow path
// that confirms an error a branch-free kernel flagged, ignoring rows under a null bit.
func anyValidRow(n int, valid []byte, bad func(i int) bool) bool {
	for i := 0; i < n; i++ {
		if isValidAt(valid, i) && bad(i) {
			return true
		}
	}
	return false
}

func newArrayData(dt arrow.DataType, n int, valid []byte, nulls int, bufs ...*memory.Buffer) arrow.ArrayData {
	var bm *memory.Buffer
	if valid != nil && nulls != 0 {
		bm = memory.NewBufferBytes(valid)
	} else {
		nulls = 0
	}
	return array.NewData(dt, n, append([]*memory.Buffer{bm}, bufs...), nil, nulls, 0)
}

// makeInt64 wraps vals (not copied) with a validity bitmap (nil: no nulls).
func makeInt64(vals []int64, valid []byte, nulls int) arrow.Array {
	d := newArrayData(arrow.PrimitiveTypes.Int64, len(vals), valid, nulls, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals)))
	defer d.Release()
	return array.NewInt64Data(d)
}

// makeFloat64 wraps vals (not copied) with a validity bitmap (nil: no nulls).
func makeFloat64(vals []float64, valid []byte, nulls int) arrow.Array {
	d := newArrayData(arrow.PrimitiveTypes.Float64, len(vals), valid, nulls, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals)))
	defer d.Release()
	return array.NewFloat64Data(d)
}

// makeBool wraps a packed value bitmap of n rows with a validity bitmap (nil: no nulls).
func makeBool(vals []byte, n int, valid []byte, nulls int) arrow.Array {
	d := newArrayData(arrow.FixedWidthTypes.Boolean, n, valid, nulls, memory.NewBufferBytes(vals))
	defer d.Release()
	return array.NewBooleanData(d)
}

// boolBitsOf returns the values of a BOOLEAN column as a bitmap aligned to row 0 (read only).
// A NULL-typed column (any other array) reads as all false; its validity is all null anyway.
func boolBitsOf(a arrow.Array) []byte {
	n := a.Len()
	b, ok := a.(*array.Boolean)
	if !ok {
		return make([]byte, (n+7)/8)
	}
	d := b.Data()
	buf := d.Buffers()[1]
	off := d.Offset()
	if off%8 == 0 {
		return buf.Bytes()[off/8:]
	}
	out := make([]byte, (n+7)/8)
	bitutil.CopyBitmap(buf.Bytes(), off, n, out, 0)
	return out
}

// withValidity returns a copy-free view of a whose validity is a's AND valid.
func withValidity(a arrow.Array, valid []byte) arrow.Array {
	n := a.Len()
	if valid == nil {
		a.Retain()
		return a
	}
	d := a.Data()
	off := d.Offset()
	bm := make([]byte, (off+n+7)/8)
	bitutil.CopyBitmap(valid, 0, n, bm, off)
	if old := validityOf(a); old != nil {
		for i := 0; i < n; i++ {
			if !bitutil.BitIsSet(old, i) {
				bitutil.ClearBit(bm, off+i)
			}
		}
	}
	bufs := append([]*memory.Buffer{memory.NewBufferBytes(bm)}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), n, bufs, nil, array.UnknownNullCount, off)
	defer nd.Release()
	return array.MakeFromData(nd)
}

// physTypes returns, for each column of b, a logical type with the column's physical
// representation: enough for Take, which needs only the Arrow type of a builder.
func physTypes(b *Batch) []types.T {
	ts := make([]types.T, len(b.Cols))
	for i, c := range b.Cols {
		switch c.DataType().ID() {
		case arrow.FLOAT64:
			ts[i] = types.TDouble
		case arrow.BOOL:
			ts[i] = types.TBool
		case arrow.STRING:
			ts[i] = types.TVarchar
		default:
			ts[i] = types.TBigInt
		}
	}
	return ts
}

// operand is one evaluated argument of a strict kernel: a column, or a non-null constant
// broadcast without materialising it. Kernels index values as v[i&mask]: mask is -1 for a
// column and 0 for a constant, so one loop serves column/column, column/constant and
// constant/column.
type operand struct {
	a    arrow.Array // nil for a constant
	c    any         // the constant's physical value
	null bool        // a NULL constant
}

func evalOperand(e Expr, b *Batch) (operand, error) {
	if c, ok := e.(*Const); ok {
		return operand{c: c.V, null: c.V == nil}, nil
	}
	a, err := e.Eval(b)
	return operand{a: a}, err
}

func (o operand) release() {
	if o.a != nil {
		o.a.Release()
	}
}

func (o operand) int64s() ([]int64, int) {
	if o.a == nil {
		return []int64{o.c.(int64)}, 0
	}
	return Int64s(o.a), -1
}

func (o operand) float64s() ([]float64, int) {
	if o.a == nil {
		return []float64{o.c.(float64)}, 0
	}
	return Float64s(o.a), -1
}

// str returns row i as a string (the constant for a constant operand).
func (o operand) str(i int) string {
	if o.a == nil {
		return o.c.(string)
	}
	return o.a.(*array.String).Value(i)
}

// relabeled shows a different SQL text for an expression built from simpler ones (IF as
// CASE, NOT IN as NOT (... OR ...)), so EXPLAIN prints what the user wrote.
type relabeled struct {
	Expr
	text string
}

func (r *relabeled) String() string { return r.text }

// isConstExpr reports whether e is a literal.
func isConstExpr(e Expr) bool { _, ok := e.(*Const); return ok }

// CommonType is the type both sides of a comparison, the branches of CASE, the arguments of
// COALESCE/GREATEST/LEAST and the columns of UNION widen to: NULL adopts the other type,
// INT < BIGINT < DECIMAL < DOUBLE, DATE < TIMESTAMP; otherwise the kinds must be equal.
// DECIMALs widen to the larger scale and integer-digit count, capped at 18 digits (INT counts
// as 10 integer digits, BIGINT as 18).
func CommonType(a, b types.T) (types.T, error) {
	switch {
	case a.Kind == types.Null:
		return b, nil
	case b.Kind == types.Null:
		return a, nil
	case a.IsNumeric() && b.IsNumeric():
		switch {
		case a.Kind == types.Double || b.Kind == types.Double:
			return types.TDouble, nil
		case a.Kind == types.Decimal || b.Kind == types.Decimal:
			da, db := asDecimal(a), asDecimal(b)
			s := max(da.Scale, db.Scale)
			ip := max(da.Precision-da.Scale, db.Precision-db.Scale)
			return types.DecimalOf(int(min(types.MaxDecimalPrecision, ip+s)), int(s)), nil
		case a.Kind == types.BigInt || b.Kind == types.BigInt:
			return types.TBigInt, nil
		}
		return types.TInt, nil
	case a.IsTemporal() && b.IsTemporal():
		if a.Kind == types.Timestamp || b.Kind == types.Timestamp {
			return types.TTimestamp, nil
		}
		return types.TDate, nil
	case a.Kind == b.Kind:
		return a, nil
	}
	return types.T{}, fmt.Errorf("incompatible types %s and %s", a, b)
}

// asDecimal views an integer or DECIMAL type as a DECIMAL.
func asDecimal(t types.T) types.T {
	switch t.Kind {
	case types.Int:
		return types.DecimalOf(10, 0)
	case types.BigInt:
		return types.DecimalOf(types.MaxDecimalPrecision, 0)
	}
	return t
}

// unify finds the common type of es and converts each to it. A VARCHAR literal among
// non-VARCHAR expressions is treated like PostgreSQL's untyped literal: it takes the type of
// the others and is parsed now (COALESCE(d, '2024-01-01') is a DATE). what names the
// construct in errors.
func unify(what string, es []Expr) ([]Expr, types.T, error) {
	t := types.TNull
	for _, e := range es {
		if c, ok := e.(*Const); ok && c.T.Kind == types.Varchar {
			continue
		}
		nt, err := CommonType(t, e.Type())
		if err != nil {
			return nil, t, fmt.Errorf("%s: %w", what, err)
		}
		t = nt
	}
	if t.Kind == types.Null {
		for _, e := range es {
			if e.Type().Kind == types.Varchar {
				t = types.TVarchar
			}
		}
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		c, err := Coerce(e, t)
		if err != nil {
			return nil, t, fmt.Errorf("%s: %w", what, err)
		}
		out[i] = c
	}
	return out, t, nil
}

// Coerce is the implicit cast the binder inserts for INSERT values, UNION columns and CASE
// branches. It allows: widening INT -> BIGINT -> DECIMAL -> DOUBLE and DATE -> TIMESTAMP;
// NULL to anything; a literal (Const) of a number to any numeric type, checked now (the
// PostgreSQL assignment cast that lets `INSERT INTO t(int_col) VALUES (1)` work); and a
// VARCHAR literal to DATE, TIMESTAMP, BOOLEAN or a number, parsed now. A Const in gives a
// folded Const out. Anything else is an error.
func Coerce(e Expr, to types.T) (Expr, error) {
	from := e.Type()
	if from == to {
		return e, nil
	}
	c, isConst := e.(*Const)
	ok := false
	switch {
	case from.Kind == types.Null:
		if isConst {
			return &Const{T: to}, nil
		}
		ok = true
	case from.IsNumeric() && to.IsNumeric():
		// DECIMAL -> DECIMAL is always allowed (PostgreSQL's assignment cast): it rounds to
		// the target scale and fails at run time only on overflow.
		ok = isConst || widens(from, to) || (from.Kind == types.Decimal && to.Kind == types.Decimal)
	case from.Kind == types.Date && to.Kind == types.Timestamp:
		ok = true
	case from.Kind == types.Varchar && isConst:
		ok = to.IsNumeric() || to.IsTemporal() || to.Kind == types.Bool
	}
	if !ok {
		return nil, fmt.Errorf("cannot convert %s to %s implicitly", from, to)
	}
	ce := newCast(e, to, false, !isConst)
	if !isConst {
		return ce, nil
	}
	v, err := EvalConst(ce)
	if err != nil {
		if from.Kind == types.Varchar {
			return nil, err
		}
		return nil, fmt.Errorf("cannot convert %s to %s: %w", c, to, err)
	}
	return &Const{V: v, T: to}, nil
}

// widens reports whether numeric type from converts to numeric type to without loss of
// range: up the INT < BIGINT < DECIMAL < DOUBLE ladder, or to a DECIMAL with at least as
// many integer and fraction digits.
func widens(from, to types.T) bool {
	rank := func(t types.T) int {
		switch t.Kind {
		case types.Int:
			return 0
		case types.BigInt:
			return 1
		case types.Decimal:
			return 2
		}
		return 3
	}
	if from.Kind == types.Decimal && to.Kind == types.Decimal {
		return to.Scale >= from.Scale && to.Precision-to.Scale >= from.Precision-from.Scale
	}
	return rank(to) > rank(from) || (from.IsInteger() && to.Kind == types.Decimal)
}

// EvalConst evaluates an expression without column references over a one-row batch
// (constant folding) and returns its physical value or nil.
func EvalConst(e Expr) (v any, err error) {
	if c, ok := e.(*Const); ok {
		return c.V, nil
	}
	defer func() {
		// A column reference indexes an empty Cols slice: report it instead of crashing.
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("expression %s is not constant", e)
		}
	}()
	a, err := e.Eval(&Batch{N: 1})
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return Value(a, 0), nil
}

// mulOverflows computes x*y and reports whether the exact product exceeds int64, without a
// division: the high word of the 128-bit signed product must be the sign of the low word.
func mulOverflows(x, y int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	h := int64(hi) - (x>>63)&y - (y>>63)&x
	return int64(lo), h != int64(lo)>>63
}
