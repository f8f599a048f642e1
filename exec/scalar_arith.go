package exec

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// binaryKernel computes a strict binary operator over n rows; NULL constants never reach it.
type binaryKernel func(l, r operand, n int) (arrow.Array, error)

// binaryExpr is a strict binary operator: NULL where either operand is NULL. Constant
// operands are broadcast, not materialised.
type binaryExpr struct {
	op   string
	l, r Expr // after implicit conversions, which String does not show
	t    types.T
	k    binaryKernel
	at   Pos // where the operator stands, for its data errors
}

var _ Expr = (*binaryExpr)(nil)

func (e *binaryExpr) Type() types.T { return e.t }

func (e *binaryExpr) Eval(b *Batch) (arrow.Array, error) { return e.at.result(e.eval(b)) }

func (e *binaryExpr) eval(b *Batch) (arrow.Array, error) {
	l, err := evalOperand(e.l, b)
	if err != nil {
		return nil, err
	}
	defer func() { l.release() }() // l.a may be replaced below
	r, err := evalOperand(e.r, b)
	if err != nil {
		return nil, err
	}
	defer r.release()
	if l.null || r.null {
		return ConstArray(e.t, nil, b.N), nil
	}
	if l.a == nil && r.a == nil {
		// Kernels see at most one constant operand.
		l.a = ConstArray(e.l.Type(), l.c, b.N)
	}
	return e.k(l, r, b.N)
}

func (e *binaryExpr) String() string { return fmt.Sprintf("(%s %s %s)", e.l, e.op, e.r) }

// NewBinary returns the binary operator op applied to l and r: arithmetic (+ - * / %),
// comparison (= <> != < <= > >=), logic (AND OR) or string concatenation (||).
func NewBinary(op string, l, r Expr) (Expr, error) {
	switch strings.ToUpper(op) {
	case "+", "-", "*", "/", "%":
		return newArith(op, l, r)
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return newCompare(op, l, r)
	case "AND", "OR":
		return newLogic(strings.ToUpper(op), l, r)
	case "||":
		return newConcatOp(l, r)
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// implicitConv converts e to t for an operator, folding a constant operand now so kernels
// see a broadcast constant rather than a per-batch cast.
func implicitConv(e Expr, t types.T) (Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	c := newCast(e, t, false, true)
	if _, ok := e.(*Const); !ok {
		return c, nil
	}
	v, err := EvalConst(c)
	if err != nil {
		return nil, err
	}
	return &Const{V: v, T: t}, nil
}

// nullAs gives an untyped NULL operand the type of the other side, so NULL + 1 is a BIGINT
// NULL; two untyped NULLs become BIGINT.
func nullAs(l, r Expr) (Expr, Expr) {
	lt, rt := l.Type(), r.Type()
	switch {
	case lt.Kind == types.Null && rt.Kind == types.Null:
		return newCast(l, types.TBigInt, false, true), newCast(r, types.TBigInt, false, true)
	case lt.Kind == types.Null:
		return newCast(l, rt, false, true), r
	case rt.Kind == types.Null:
		return l, newCast(r, lt, false, true)
	}
	return l, r
}

// newArith type-checks an arithmetic operator. Result types:
//   - INT op INT is INT (overflow checked at the int32 range); other integer pairs BIGINT.
//   - DECIMAL + - % DECIMAL keeps the larger scale, precision min(18, int digits + scale + 1);
//     multiplication adds scales (an error beyond 18); / is DOUBLE, since a scaled int64 cannot hold the
//     quotient's scale (PostgreSQL's numeric can; Flink widens to DECIMAL(38)). INT and
//     BIGINT act as DECIMAL(10,0) and DECIMAL(18,0); any DOUBLE operand makes it DOUBLE.
//   - TIMESTAMP ± INTERVAL and DATE ± INTERVAL are TIMESTAMP; DATE ± integer days is DATE;
//     DATE - DATE is BIGINT days (PostgreSQL's integer); TIMESTAMP - TIMESTAMP is INTERVAL;
//     INTERVAL ± INTERVAL, INTERVAL * integer and INTERVAL / integer are INTERVAL.
//
// Division and % by zero are errors for every numeric type, as in PostgreSQL; integer
// division truncates toward zero and % takes the dividend's sign.
func newArith(op string, l, r Expr) (Expr, error) {
	l, r = nullAs(l, r)
	lt, rt := l.Type(), r.Type()
	mismatch := fmt.Errorf("cannot apply %s to %s and %s", op, lt, rt)
	mk := func(l, r Expr, t types.T, k binaryKernel) (Expr, error) {
		return &binaryExpr{op: op, l: l, r: r, t: t, k: k}, nil
	}
	o := op[0]
	switch {
	case lt.IsInteger() && rt.IsInteger():
		if lt.Kind == types.Int && rt.Kind == types.Int {
			return mk(l, r, types.TInt, intArith(o, checkInt32, errIntOverflow))
		}
		return mk(l, r, types.TBigInt, intArith(o, checkInt64, errIntOverflow))

	case lt.IsNumeric() && rt.IsNumeric():
		if lt.Kind == types.Double || rt.Kind == types.Double || o == '/' {
			lc, err := implicitConv(l, types.TDouble)
			if err != nil {
				return nil, err
			}
			rc, err := implicitConv(r, types.TDouble)
			if err != nil {
				return nil, err
			}
			return mk(lc, rc, types.TDouble, floatArith(o))
		}
		dl, dr := asDecimal(lt), asDecimal(rt)
		ip := max(dl.Precision-dl.Scale, dr.Precision-dr.Scale)
		if o == '*' {
			s := int(dl.Scale) + int(dr.Scale)
			if s > types.MaxDecimalPrecision {
				return nil, fmt.Errorf("cannot apply * to %s and %s: result scale %d exceeds %d", lt, rt, s, types.MaxDecimalPrecision)
			}
			p := min(types.MaxDecimalPrecision, int(dl.Precision)+int(dr.Precision))
			return mk(l, r, types.DecimalOf(p, s), intArith(o, checkDecimal, errDecOverflow))
		}
		s := max(dl.Scale, dr.Scale)
		wide := types.DecimalOf(types.MaxDecimalPrecision, int(s))
		lc, rc := l, r
		var err error
		if dl.Scale != s {
			if lc, err = implicitConv(l, wide); err != nil {
				return nil, err
			}
		}
		if dr.Scale != s {
			if rc, err = implicitConv(r, wide); err != nil {
				return nil, err
			}
		}
		p := int(ip) + int(s)
		if o != '%' {
			p++
		}
		return mk(lc, rc, types.DecimalOf(min(types.MaxDecimalPrecision, p), int(s)), intArith(o, checkDecimal, errDecOverflow))
	}

	lk, rk := lt.Kind, rt.Kind
	ts := func(e Expr) Expr { return newCast(e, types.TTimestamp, false, true) }
	timeK := intArith(o, checkInt64, errTimeOverflow)
	switch {
	case (o == '+' || o == '-') && lt.IsTemporal() && rk == types.Interval:
		return mk(ts(l), r, types.TTimestamp, timeK)
	case o == '+' && lk == types.Interval && rt.IsTemporal():
		return mk(l, ts(r), types.TTimestamp, timeK)
	case (o == '+' || o == '-') && lk == types.Date && rt.IsInteger():
		return mk(l, r, types.TDate, timeK)
	case o == '+' && lt.IsInteger() && rk == types.Date:
		return mk(l, r, types.TDate, timeK)
	case o == '-' && lk == types.Date && rk == types.Date:
		return mk(l, r, types.TBigInt, intArith(o, checkInt64, errIntOverflow))
	case o == '-' && lt.IsTemporal() && rt.IsTemporal():
		return mk(ts(l), ts(r), types.TInterval, intArith(o, checkInt64, errIntOverflow))
	case (o == '+' || o == '-') && lk == types.Interval && rk == types.Interval,
		o == '*' && lk == types.Interval && rt.IsInteger(),
		o == '*' && lt.IsInteger() && rk == types.Interval,
		o == '/' && lk == types.Interval && rt.IsInteger():
		return mk(l, r, types.TInterval, intArith(o, checkInt64, errIntOverflow))
	}
	return nil, mismatch
}

// intCheck is the range an integer kernel's result must fall in.
type intCheck uint8

const (
	checkInt64   intCheck = iota // int64 (BIGINT, INTERVAL, TIMESTAMP, DATE)
	checkInt32                   // INT
	checkDecimal                 // |v| < 10^18, the widest DECIMAL
)

// intArith returns the kernel of one integer operator. The hot loops run branch-free over
// every row, accumulating a possible-overflow flag; only when the flag is raised does the
// slow path re-examine valid rows, so garbage under null bits can never cause an error.
func intArith(op byte, chk intCheck, ovfErr error) binaryKernel {
	return func(l, r operand, n int) (arrow.Array, error) {
		a, am := l.int64s()
		b, bm := r.int64s()
		valid, nulls := andValidity(n, l.a, r.a)
		dst := make([]int64, n)
		var ovf, zero bool
		switch op {
		case '+':
			ovf = addInt64s(dst, a, am, b, bm)
		case '-':
			ovf = subInt64s(dst, a, am, b, bm)
		case '*':
			ovf = mulInt64s(dst, a, am, b, bm)
		case '/':
			zero, ovf = divInt64s(dst, a, am, b, bm)
		case '%':
			zero = modInt64s(dst, a, am, b, bm)
		}
		if zero && anyValidRow(n, valid, func(i int) bool { return b[i&bm] == 0 }) {
			return nil, errDivByZero
		}
		if !ovf {
			ovf = outOfRange(dst, chk)
		}
		if ovf && anyValidRow(n, valid, func(i int) bool { return intOpOverflows(op, chk, a[i&am], b[i&bm]) }) {
			return nil, ovfErr
		}
		return makeInt64(dst, valid, nulls), nil
	}
}

// The hot loops below come in three layouts, column/column, column/constant and
// constant/column, each a plain indexed loop the compiler can free of bounds checks;
// binaryExpr.Eval never passes two constants. (A single loop indexing v[i&mask] is about
// three times slower.) Division and modulo branch per row anyway and use the mask form.

func addInt64s(dst, a []int64, am int, b []int64, bm int) bool {
	if am == 0 {
		a, am, b, bm = b, bm, a, am // commutative
	}
	var ovf int64
	a = a[:len(dst)]
	if bm == 0 {
		y := b[0]
		for i, x := range a {
			s := x + y
			ovf |= (x ^ s) & (y ^ s)
			dst[i] = s
		}
		return ovf < 0
	}
	b = b[:len(dst)]
	for i, x := range a {
		y := b[i]
		s := x + y
		ovf |= (x ^ s) & (y ^ s)
		dst[i] = s
	}
	return ovf < 0
}

func subInt64s(dst, a []int64, am int, b []int64, bm int) bool {
	var ovf int64
	switch {
	case am == 0:
		x := a[0]
		b = b[:len(dst)]
		for i, y := range b {
			s := x - y
			ovf |= (x ^ y) & (x ^ s)
			dst[i] = s
		}
	case bm == 0:
		y := b[0]
		a = a[:len(dst)]
		for i, x := range a {
			s := x - y
			ovf |= (x ^ y) & (x ^ s)
			dst[i] = s
		}
	default:
		a, b = a[:len(dst)], b[:len(dst)]
		for i, x := range a {
			y := b[i]
			s := x - y
			ovf |= (x ^ y) & (x ^ s)
			dst[i] = s
		}
	}
	return ovf < 0
}

func mulInt64s(dst, a []int64, am int, b []int64, bm int) bool {
	if am == 0 {
		a, am, b, bm = b, bm, a, am // commutative
	}
	var ovf int64
	a = a[:len(dst)]
	if bm == 0 {
		y := b[0]
		for i, x := range a {
			hi, lo := bits.Mul64(uint64(x), uint64(y))
			ovf |= (int64(hi) - (x>>63)&y - (y>>63)&x) ^ int64(lo)>>63
			dst[i] = int64(lo)
		}
		return ovf != 0
	}
	b = b[:len(dst)]
	for i, x := range a {
		y := b[i]
		hi, lo := bits.Mul64(uint64(x), uint64(y))
		ovf |= (int64(hi) - (x>>63)&y - (y>>63)&x) ^ int64(lo)>>63
		dst[i] = int64(lo)
	}
	return ovf != 0
}

// floatLoop applies one IEEE operator (+ - * /) to every row.
func floatLoop(op byte, dst, a []float64, am int, b []float64, bm int) {
	switch {
	case am == 0:
		x := a[0]
		b = b[:len(dst)]
		switch op {
		case '+':
			for i, y := range b {
				dst[i] = x + y
			}
		case '-':
			for i, y := range b {
				dst[i] = x - y
			}
		case '*':
			for i, y := range b {
				dst[i] = x * y
			}
		case '/':
			for i, y := range b {
				dst[i] = x / y
			}
		}
	case bm == 0:
		y := b[0]
		a = a[:len(dst)]
		switch op {
		case '+':
			for i, x := range a {
				dst[i] = x + y
			}
		case '-':
			for i, x := range a {
				dst[i] = x - y
			}
		case '*':
			for i, x := range a {
				dst[i] = x * y
			}
		case '/':
			for i, x := range a {
				dst[i] = x / y
			}
		}
	default:
		a, b = a[:len(dst)], b[:len(dst)]
		switch op {
		case '+':
			for i, x := range a {
				dst[i] = x + b[i]
			}
		case '-':
			for i, x := range a {
				dst[i] = x - b[i]
			}
		case '*':
			for i, x := range a {
				dst[i] = x * b[i]
			}
		case '/':
			for i, x := range a {
				dst[i] = x / b[i]
			}
		}
	}
}

// divInt64s truncates toward zero. Zero divisors leave 0 and raise zero; MinInt64 / -1
// raises ovf.
func divInt64s(dst, a []int64, am int, b []int64, bm int) (zero, ovf bool) {
	for i := range dst {
		x, y := a[i&am], b[i&bm]
		switch y {
		case 0:
			zero = true
		case -1:
			ovf = ovf || x == math.MinInt64
			dst[i] = -x
		default:
			dst[i] = x / y
		}
	}
	return zero, ovf
}

// modInt64s takes the dividend's sign (Go's %, PostgreSQL's %).
func modInt64s(dst, a []int64, am int, b []int64, bm int) (zero bool) {
	for i := range dst {
		x, y := a[i&am], b[i&bm]
		switch y {
		case 0:
			zero = true
		case -1:
			dst[i] = 0 // MinInt64 % -1 would trap
		default:
			dst[i] = x % y
		}
	}
	return zero
}

// outOfRange reports whether some value (valid or not) breaks chk.
func outOfRange(vals []int64, chk intCheck) bool {
	bad := false
	switch chk {
	case checkInt32:
		for _, v := range vals {
			bad = bad || v != int64(int32(v))
		}
	case checkDecimal:
		const lim = 1_000_000_000_000_000_000
		for _, v := range vals {
			bad = bad || uint64(v+lim-1) > 2*lim-2
		}
	}
	return bad
}

// intOpOverflows recomputes one row for the slow path.
func intOpOverflows(op byte, chk intCheck, x, y int64) bool {
	var v int64
	var o bool
	switch op {
	case '+':
		v = x + y
		o = (x^v)&(y^v) < 0
	case '-':
		v = x - y
		o = (x^y)&(x^v) < 0
	case '*':
		v, o = mulOverflows(x, y)
	case '/':
		if y == 0 {
			return false
		}
		o = x == math.MinInt64 && y == -1
		if !o {
			v = x / y
		}
	case '%':
		if y == 0 || y == -1 {
			return false
		}
		v = x % y
	}
	return o || outOfRange([]int64{v}, chk)
}

// floatArith is IEEE arithmetic, except that division and % by zero are errors.
func floatArith(op byte) binaryKernel {
	return func(l, r operand, n int) (arrow.Array, error) {
		a, am := l.float64s()
		b, bm := r.float64s()
		valid, nulls := andValidity(n, l.a, r.a)
		dst := make([]float64, n)
		zero := false
		switch op {
		case '%':
			for i := range dst {
				y := b[i&bm]
				zero = zero || y == 0
				dst[i] = math.Mod(a[i&am], y)
			}
		case '/':
			for i := 0; i < n; i++ {
				zero = zero || b[i&bm] == 0
			}
			floatLoop(op, dst, a, am, b, bm)
		default:
			floatLoop(op, dst, a, am, b, bm)
		}
		if zero && anyValidRow(n, valid, func(i int) bool { return b[i&bm] == 0 }) {
			return nil, errDivByZero
		}
		return makeFloat64(dst, valid, nulls), nil
	}
}

// kernelExpr evaluates all of its arguments (constants materialised) and hands the arrays
// to one kernel. text is the SQL shown by String, fixed at construction.
type kernelExpr struct {
	t    types.T
	args []Expr
	text string
	k    func(args []arrow.Array, n int) (arrow.Array, error)
	at   Pos // where the call stands, for its data errors
}

var _ Expr = (*kernelExpr)(nil)

func (e *kernelExpr) Type() types.T  { return e.t }
func (e *kernelExpr) String() string { return e.text }

func (e *kernelExpr) Eval(b *Batch) (arrow.Array, error) { return e.at.result(e.eval(b)) }

func (e *kernelExpr) eval(b *Batch) (arrow.Array, error) {
	arrs := make([]arrow.Array, len(e.args))
	defer func() { releaseAll(arrs...) }()
	for i, a := range e.args {
		v, err := a.Eval(b)
		if err != nil {
			return nil, err
		}
		arrs[i] = v
	}
	return e.k(arrs, b.N)
}

// callText renders name(arg, ...).
func callText(name string, args []Expr) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// NewNeg returns unary minus. Negating the most negative INT or BIGINT is an overflow.
func NewNeg(e Expr) (Expr, error) {
	t := e.Type()
	if t.Kind == types.Null {
		t = types.TBigInt
		e = newCast(e, t, false, true)
	}
	text := fmt.Sprintf("(- %s)", e)
	switch {
	case t.Kind == types.Double:
		return &kernelExpr{t: t, args: []Expr{e}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
			src := Float64s(as[0])
			dst := make([]float64, n)
			for i, x := range src {
				dst[i] = -x
			}
			v, nulls := andValidity(n, as[0])
			return makeFloat64(dst, v, nulls), nil
		}}, nil
	case t.IsNumeric() || t.Kind == types.Interval:
		chk := checkInt64
		if t.Kind == types.Int {
			chk = checkInt32
		}
		k := intArith('-', chk, errIntOverflow)
		zero := &Const{V: int64(0), T: t}
		return &relabeled{Expr: &binaryExpr{op: "-", l: zero, r: e, t: t, k: k}, text: text}, nil
	}
	return nil, fmt.Errorf("cannot apply unary - to %s", t)
}
