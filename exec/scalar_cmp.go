package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

var cmpOps = map[string]cmpOp{"=": cmpEq, "<>": cmpNe, "!=": cmpNe, "<": cmpLt, "<=": cmpLe, ">": cmpGt, ">=": cmpGe}

// newCompare type-checks a comparison. Numbers compare after widening to their common type
// (CommonType), DATE with TIMESTAMP as TIMESTAMP, VARCHAR byte-wise, BOOLEAN with false <
// true. A VARCHAR literal compared with a DATE or TIMESTAMP is parsed now; any other VARCHAR
// against a non-VARCHAR is an error. DOUBLE comparisons are IEEE: NaN is unequal to
// everything (PostgreSQL instead sorts NaN above all numbers).
func newCompare(op string, l, r Expr) (Expr, error) {
	if op == "!=" {
		op = "<>"
	}
	c := cmpOps[op]
	var err error
	if l.Type().Kind == types.Varchar && isConstExpr(l) && r.Type().IsTemporal() {
		if l, err = Coerce(l, r.Type()); err != nil {
			return nil, err
		}
	}
	if r.Type().Kind == types.Varchar && isConstExpr(r) && l.Type().IsTemporal() {
		if r, err = Coerce(r, l.Type()); err != nil {
			return nil, err
		}
	}
	l, r = nullAs(l, r)
	lt, rt := l.Type(), r.Type()
	if k, ok := wideDecimalCompare(c, lt, rt); ok {
		return &binaryExpr{op: op, l: l, r: r, t: types.TBool, k: k}, nil
	}
	t, err := CommonType(lt, rt)
	if err != nil {
		return nil, fmt.Errorf("cannot compare %s with %s", lt, rt)
	}
	if l, err = implicitConv(l, t); err != nil {
		return nil, err
	}
	if r, err = implicitConv(r, t); err != nil {
		return nil, err
	}
	var k binaryKernel
	switch t.Phys() {
	case types.PhysInt64:
		k = func(l, r operand, n int) (arrow.Array, error) {
			a, am := l.int64s()
			b, bm := r.int64s()
			return cmpOrdered(c, a, am, b, bm, n, l.a, r.a), nil
		}
	case types.PhysFloat64:
		k = func(l, r operand, n int) (arrow.Array, error) {
			a, am := l.float64s()
			b, bm := r.float64s()
			if !hasNaN(a, am, n) && !hasNaN(b, bm, n) {
				return cmpOrdered(c, a, am, b, bm, n, l.a, r.a), nil
			}
			// NaN is equal to NaN and above every other value (compareFloat).
			out := make([]byte, (n+7)/8)
			for i := 0; i < n; i++ {
				out[i>>3] |= b2u(cmpResult(c, compareFloat(a[i&am], b[i&bm]))) << (i & 7)
			}
			valid, nulls := andValidity(n, l.a, r.a)
			return makeBool(out, n, valid, nulls), nil
		}
	case types.PhysString:
		k = func(l, r operand, n int) (arrow.Array, error) { return cmpStrings(c, l, r, n), nil }
	default:
		k = func(l, r operand, n int) (arrow.Array, error) { return cmpBools(c, l, r, n), nil }
	}
	return &binaryExpr{op: op, l: l, r: r, t: types.TBool, k: k}, nil
}

// wideDecimalCompare compares a DECIMAL with a BIGINT, or with a DECIMAL, where their common
// DECIMAL would need more than 18 digits (a BIGINT's value takes 19) and converting either
// side to it could overflow. The values compare exactly as they are stored: the one of smaller
// scale is scaled up within cmpScaled, by division, so nothing overflows.
func wideDecimalCompare(c cmpOp, lt, rt types.T) (binaryKernel, bool) {
	exact := func(t types.T) bool { return t.IsInteger() || t.Kind == types.Decimal }
	if lt.Kind != types.Decimal && rt.Kind != types.Decimal || !exact(lt) || !exact(rt) {
		return nil, false
	}
	whole := func(t types.T) int8 {
		if t.Kind == types.BigInt {
			return 19
		}
		d := asDecimal(t)
		return d.Precision - d.Scale
	}
	ls, rs := asDecimal(lt).Scale, asDecimal(rt).Scale
	if int(max(whole(lt), whole(rt)))+int(max(ls, rs)) <= types.MaxDecimalPrecision {
		return nil, false
	}
	return func(l, r operand, n int) (arrow.Array, error) {
		a, am := l.int64s()
		b, bm := r.int64s()
		out := make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			var d int
			if x, y := a[i&am], b[i&bm]; ls <= rs {
				d = cmpScaled(x, types.Pow10[rs-ls], y)
			} else {
				d = -cmpScaled(y, types.Pow10[ls-rs], x)
			}
			out[i>>3] |= b2u(cmpResult(c, d)) << (i & 7)
		}
		valid, nulls := andValidity(n, l.a, r.a)
		return makeBool(out, n, valid, nulls), nil
	}, true
}

// cmpScaled compares x·p with y (p a power of ten, x·p possibly past int64) as -1, 0 or +1:
// with y = q·p + rem, |rem| < p, x·p - y is (x - q)·p - rem, whose sign is x - q's unless
// x = q.
func cmpScaled(x, p, y int64) int {
	q, rem := y/p, y%p
	switch {
	case x < q:
		return -1
	case x > q:
		return 1
	case rem > 0:
		return -1
	case rem < 0:
		return 1
	}
	return 0
}

// hasNaN reports whether the first n values of an operand (m: its index mask) hold a NaN.
func hasNaN(a []float64, m, n int) bool {
	if m == 0 {
		n = 1
	}
	for _, x := range a[:n] {
		if x != x {
			return true
		}
	}
	return false
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// flipped is the operator with its operands swapped: c < x is x > c.
func (op cmpOp) flipped() cmpOp {
	switch op {
	case cmpLt:
		return cmpGt
	case cmpLe:
		return cmpGe
	case cmpGt:
		return cmpLt
	case cmpGe:
		return cmpLe
	}
	return op
}

// cmpOrdered compares two numeric operands row by row into a packed BOOLEAN array. A
// constant on the left is moved to the right, so the loops come in two layouts.
func cmpOrdered[T int64 | float64](op cmpOp, a []T, am int, b []T, bm int, n int, la, ra arrow.Array) arrow.Array {
	out := make([]byte, (n+7)/8)
	if am == 0 {
		a, am, b, bm, op = b, bm, a, am, op.flipped()
	}
	if bm == 0 {
		cmpColConst(op, a[:n], b[0], out)
	} else {
		cmpColCol(op, a[:n], b[:n], out)
	}
	valid, nulls := andValidity(n, la, ra)
	return makeBool(out, n, valid, nulls)
}

func cmpColCol[T int64 | float64](op cmpOp, a, b []T, out []byte) {
	b = b[:len(a)]
	switch op {
	case cmpEq:
		for i, x := range a {
			out[i>>3] |= b2u(x == b[i]) << (i & 7)
		}
	case cmpNe:
		for i, x := range a {
			out[i>>3] |= b2u(x != b[i]) << (i & 7)
		}
	case cmpLt:
		for i, x := range a {
			out[i>>3] |= b2u(x < b[i]) << (i & 7)
		}
	case cmpLe:
		for i, x := range a {
			out[i>>3] |= b2u(x <= b[i]) << (i & 7)
		}
	case cmpGt:
		for i, x := range a {
			out[i>>3] |= b2u(x > b[i]) << (i & 7)
		}
	case cmpGe:
		for i, x := range a {
			out[i>>3] |= b2u(x >= b[i]) << (i & 7)
		}
	}
}

func cmpColConst[T int64 | float64](op cmpOp, a []T, c T, out []byte) {
	switch op {
	case cmpEq:
		for i, x := range a {
			out[i>>3] |= b2u(x == c) << (i & 7)
		}
	case cmpNe:
		for i, x := range a {
			out[i>>3] |= b2u(x != c) << (i & 7)
		}
	case cmpLt:
		for i, x := range a {
			out[i>>3] |= b2u(x < c) << (i & 7)
		}
	case cmpLe:
		for i, x := range a {
			out[i>>3] |= b2u(x <= c) << (i & 7)
		}
	case cmpGt:
		for i, x := range a {
			out[i>>3] |= b2u(x > c) << (i & 7)
		}
	case cmpGe:
		for i, x := range a {
			out[i>>3] |= b2u(x >= c) << (i & 7)
		}
	}
}

// cmpResult maps a three-way comparison to op.
func cmpResult(op cmpOp, c int) bool {
	switch op {
	case cmpEq:
		return c == 0
	case cmpNe:
		return c != 0
	case cmpLt:
		return c < 0
	case cmpLe:
		return c <= 0
	case cmpGt:
		return c > 0
	}
	return c >= 0
}

func cmpStrings(op cmpOp, l, r operand, n int) arrow.Array {
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		out[i>>3] |= b2u(cmpResult(op, strings.Compare(l.str(i), r.str(i)))) << (i & 7)
	}
	valid, nulls := andValidity(n, l.a, r.a)
	return makeBool(out, n, valid, nulls)
}

func cmpBools(op cmpOp, l, r operand, n int) arrow.Array {
	get := func(o operand, i int) int {
		if o.a == nil {
			return int(b2u(o.c.(bool)))
		}
		return int(b2u(o.a.(*array.Boolean).Value(i)))
	}
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		out[i>>3] |= b2u(cmpResult(op, get(l, i)-get(r, i))) << (i & 7)
	}
	valid, nulls := andValidity(n, l.a, r.a)
	return makeBool(out, n, valid, nulls)
}

// NewIsNull returns e IS NULL, or e IS NOT NULL when not is set. The result is never NULL.
func NewIsNull(e Expr, not bool) Expr {
	text := fmt.Sprintf("(%s IS NULL)", e)
	if not {
		text = fmt.Sprintf("(%s IS NOT NULL)", e)
	}
	return &kernelExpr{t: types.TBool, args: []Expr{e}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		out := make([]byte, (n+7)/8)
		v := validityOf(as[0])
		if v != nil {
			copy(out, v[:len(out)])
		} else {
			for i := range out {
				out[i] = 0xff
			}
		}
		if !not {
			for i := range out {
				out[i] = ^out[i]
			}
		}
		return makeBool(out, n, nil, 0), nil
	}}
}

// NewIsBool returns e IS [NOT] TRUE / FALSE: never NULL; a NULL e is neither true nor false.
func NewIsBool(e Expr, val, not bool) (Expr, error) {
	t := e.Type()
	if t.Kind != types.Bool && t.Kind != types.Null {
		return nil, fmt.Errorf("IS %s expects BOOLEAN, got %s", strings.ToUpper(fmt.Sprint(val)), t)
	}
	text := fmt.Sprintf("(%s IS %s)", e, strings.ToUpper(fmt.Sprint(val)))
	if not {
		text = fmt.Sprintf("(%s IS NOT %s)", e, strings.ToUpper(fmt.Sprint(val)))
	}
	return &kernelExpr{t: types.TBool, args: []Expr{e}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		vals := boolBitsOf(as[0])
		valid := validityOf(as[0])
		out := make([]byte, (n+7)/8)
		for i := range out {
			x := vals[i]
			if !val {
				x = ^x
			}
			if valid != nil {
				x &= valid[i]
			}
			if not {
				x = ^x
			}
			out[i] = x
		}
		return makeBool(out, n, nil, 0), nil
	}}, nil
}

// NewIn returns e [NOT] IN (list) with SQL's NULL rules: TRUE if e equals an item; else NULL
// if e or any item is NULL; else FALSE. A list of literals is hashed once at construction;
// otherwise the test is the equivalent OR of equalities.
func NewIn(e Expr, list []Expr, not bool) (Expr, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("IN list must not be empty")
	}
	parts := make([]string, len(list))
	allConst := true
	for i, x := range list {
		parts[i] = x.String()
		allConst = allConst && isConstExpr(x)
	}
	kw := "IN"
	if not {
		kw = "NOT IN"
	}
	text := fmt.Sprintf("(%s %s (%s))", e, kw, strings.Join(parts, ", "))
	if !allConst {
		var acc Expr
		for _, x := range list {
			eq, err := NewBinary("=", e, x)
			if err != nil {
				return nil, fmt.Errorf("IN: %w", err)
			}
			if acc == nil {
				acc = eq
			} else if acc, err = NewBinary("OR", acc, eq); err != nil {
				return nil, err
			}
		}
		if not {
			var err error
			if acc, err = NewNot(acc); err != nil {
				return nil, err
			}
		}
		return &relabeled{Expr: acc, text: text}, nil
	}
	// Type-check each item as the equality would, then fold the items to the common type.
	all := append([]Expr{e}, list...)
	for _, x := range list {
		if _, err := NewBinary("=", e, x); err != nil {
			return nil, fmt.Errorf("IN: %w", err)
		}
	}
	conv, t, err := unify("IN", all)
	if err != nil {
		return nil, err
	}
	set := map[any]struct{}{}
	hasNull := false
	for _, x := range conv[1:] {
		v, err := EvalConst(x)
		if err != nil {
			return nil, err
		}
		if v == nil {
			hasNull = true
			continue
		}
		if f, ok := v.(float64); ok && f == 0 {
			v = 0.0 // -0 equals +0
		}
		set[multisetKey(v)] = struct{}{} // NaN equals NaN, as = compares them
	}
	return &kernelExpr{t: types.TBool, args: []Expr{conv[0]}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		return inSet(as[0], t, set, hasNull, not, n), nil
	}}, nil
}

func inSet(a arrow.Array, t types.T, set map[any]struct{}, hasNull, not bool, n int) arrow.Array {
	out := make([]byte, (n+7)/8)
	valid := make([]byte, (n+7)/8)
	in := validityOf(a)
	hit := func(i int) bool {
		switch c := a.(type) {
		case *array.Int64:
			_, ok := set[c.Value(i)]
			return ok
		case *array.Float64:
			f := c.Value(i)
			if f == 0 {
				f = 0
			}
			_, ok := set[multisetKey(f)]
			return ok
		case *array.String:
			_, ok := set[c.Value(i)]
			return ok
		case *array.Boolean:
			_, ok := set[c.Value(i)]
			return ok
		}
		return false
	}
	if i64, ok := a.(*array.Int64); ok && t.Phys() == types.PhysInt64 {
		// The common case, typed: no boxing per row.
		s := make(map[int64]struct{}, len(set))
		for k := range set {
			s[k.(int64)] = struct{}{}
		}
		vals := i64.Int64Values()
		hit = func(i int) bool { _, ok := s[vals[i]]; return ok }
	}
	nulls := 0
	for i := 0; i < n; i++ {
		switch {
		case !isValidAt(in, i):
			nulls++
		case hit(i):
			valid[i>>3] |= 1 << (i & 7)
			out[i>>3] |= b2u(!not) << (i & 7)
		case hasNull:
			nulls++
		default:
			valid[i>>3] |= 1 << (i & 7)
			out[i>>3] |= b2u(not) << (i & 7)
		}
	}
	return makeBool(out, n, valid, nulls)
}
