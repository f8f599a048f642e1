package exec

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// NewFunc returns the scalar function name (lower-case) applied to args. The binder maps
// EXTRACT(unit FROM e), YEAR(e), HOUR(e), ... to extract_<unit>(e). A wrong number or type of
// arguments is an error naming the function; an unknown name is "unknown function name".
func NewFunc(name string, args []Expr) (Expr, error) {
	name = strings.ToLower(name)
	if e, ok, err := newStringFunc(name, args); ok {
		return e, err
	}
	if e, ok, err := newRegexpFunc(name, args); ok {
		return e, err
	}
	if e, ok, err := newEncodeFunc(name, args); ok {
		return e, err
	}
	if unit, ok := strings.CutPrefix(name, "extract_"); ok {
		return newExtract(unit, args)
	}
	if unit, ok := strings.CutPrefix(name, "timestampdiff_"); ok {
		return newTimestampDiff(unit, args)
	}
	if unit, ok := strings.CutPrefix(name, "timestampadd_"); ok {
		return newTimestampAdd(unit, args)
	}
	switch name {
	case "coalesce":
		return newCoalesce(args)
	case "ifnull", "nvl": // COALESCE of two (DuckDB, Flink; Oracle)
		if err := argCount(name, args, 2, 2); err != nil {
			return nil, err
		}
		return newCoalesce(args)
	case "nullif":
		return newNullif(args)
	case "if":
		return newIf(args)
	case "greatest", "least":
		return newGreatest(name, args)
	case "mod":
		if err := argCount(name, args, 2, 2); err != nil {
			return nil, err
		}
		e, err := NewBinary("%", args[0], args[1])
		if err != nil {
			return nil, fmt.Errorf("function mod: %w", err)
		}
		return &relabeled{Expr: e, text: callText(name, args)}, nil
	case "abs":
		return newAbs(args)
	case "round", "truncate", "trunc":
		return newRound(name, args)
	case "floor", "ceil", "ceiling":
		return newFloorCeil(name, args)
	case "sign":
		return newSign(args)
	case "log":
		// Flink: log(x) is the natural logarithm (PostgreSQL's and DuckDB's is base 10),
		// log(b, x) the logarithm to base b.
		if err := argCount(name, args, 1, 2); err != nil {
			return nil, err
		}
		if len(args) == 2 {
			return newFloatFunc2(name, args)
		}
		return newFloatFunc(name, args)
	case "power", "pow", "atan2":
		return newFloatFunc2(name, args)
	case "pi":
		if err := argCount(name, args, 0, 0); err != nil {
			return nil, err
		}
		return &Const{V: math.Pi, T: types.TDouble}, nil
	case "e": // Euler's number (Flink; DuckDB has no E())
		if err := argCount(name, args, 0, 0); err != nil {
			return nil, err
		}
		return &Const{V: math.E, T: types.TDouble}, nil
	case "date_trunc":
		return newDateTrunc(args)
	case "date_format", "strftime":
		return newDateFormat(name, args)
	case "from_unixtime":
		return newFromUnixtime(args)
	case "to_timestamp", "to_date", "unix_timestamp":
		return newParseTime(name, args)
	case "datediff":
		return newDateDiff(args)
	case "epoch_ms":
		return newEpochMs(args)
	case "make_date":
		return newMakeDate(args)
	case "last_day":
		return newLastDay(args)
	case "json_value", "json_extract_string":
		return newJSONValue(name, args)
	}
	if _, ok := floatFuncs[name]; ok {
		return newFloatFunc(name, args)
	}
	return nil, fmt.Errorf("unknown function %s", name)
}

// numArg checks that an argument of fn is numeric (an untyped NULL becomes BIGINT).
func numArg(fn string, e Expr) (Expr, error) {
	switch t := e.Type(); {
	case t.IsNumeric():
		return e, nil
	case t.Kind == types.Null:
		return newCast(e, types.TBigInt, false, true), nil
	}
	return nil, fmt.Errorf("function %s expects a number, got %s", fn, e.Type())
}

// floatFunc evaluates f on each non-null row of a DOUBLE column.
func floatFunc(f func(float64) (float64, error)) func(as []arrow.Array, n int) (arrow.Array, error) {
	return func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Float64s(as[0])
		valid, nulls := andValidity(n, as[0])
		dst := make([]float64, n)
		for i, x := range src {
			if !isValidAt(valid, i) {
				continue
			}
			r, err := f(x)
			if err != nil {
				return nil, err
			}
			dst[i] = r
		}
		return makeFloat64(dst, valid, nulls), nil
	}
}

// floatFuncs are the functions of one DOUBLE (log is Flink's natural logarithm).
// Out-of-domain arguments are errors, as in PostgreSQL; overflow is ±Inf (IEEE).
var floatFuncs = map[string]func(float64) (float64, error){
	"sqrt": func(x float64) (float64, error) {
		if x < 0 {
			return 0, fmt.Errorf("cannot take square root of a negative number")
		}
		return math.Sqrt(x), nil
	},
	"ln": logOf(math.Log), "log": logOf(math.Log), "log10": logOf(math.Log10), "log2": logOf(math.Log2),
	"exp": total(math.Exp), "cbrt": total(math.Cbrt),
	"sin": total(math.Sin), "cos": total(math.Cos), "tan": total(math.Tan), "atan": total(math.Atan),
	"asin": inUnitRange(math.Asin), "acos": inUnitRange(math.Acos),
	"degrees": total(func(x float64) float64 { return x * (180 / math.Pi) }),
	"radians": total(func(x float64) float64 { return x * (math.Pi / 180) }),
}

// total is f defined everywhere.
func total(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) { return f(x), nil }
}

// logOf is the logarithm g, defined on positive numbers.
func logOf(g func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		switch {
		case x == 0:
			return 0, fmt.Errorf("cannot take logarithm of zero")
		case x < 0:
			return 0, fmt.Errorf("cannot take logarithm of a negative number")
		}
		return g(x), nil
	}
}

// inUnitRange is f defined on [-1, 1] (asin, acos).
func inUnitRange(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if x < -1 || x > 1 {
			return 0, fmt.Errorf("input is out of range: %g is not between -1 and 1", x)
		}
		return f(x), nil
	}
}

// floatArgs checks that fn's arguments are numbers and converts them to DOUBLE.
func floatArgs(fn string, args []Expr) ([]Expr, error) {
	conv := make([]Expr, len(args))
	for i, a := range args {
		a, err := numArg(fn, a)
		if err != nil {
			return nil, err
		}
		if conv[i], err = implicitConv(a, types.TDouble); err != nil {
			return nil, err
		}
	}
	return conv, nil
}

// newFloatFunc builds a function of floatFuncs: DOUBLE in (any number converts), DOUBLE out.
func newFloatFunc(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	conv, err := floatArgs(name, args)
	if err != nil {
		return nil, err
	}
	return &kernelExpr{t: types.TDouble, args: conv, text: callText(name, args), k: floatFunc(floatFuncs[name])}, nil
}

// floatFuncs2 are the functions of two DOUBLEs: power(x, y) and log(b, x) with PostgreSQL's
// domain errors, atan2(y, x).
var floatFuncs2 = map[string]func(x, y float64) (float64, error){
	"power": power, "pow": power, "log": logBase,
	"atan2": func(y, x float64) (float64, error) { return math.Atan2(y, x), nil },
}

// power is x raised to y.
func power(x, y float64) (float64, error) {
	switch {
	case x == 0 && y < 0:
		return 0, fmt.Errorf("zero raised to a negative power is undefined")
	case x < 0 && y != math.Trunc(y):
		return 0, fmt.Errorf("a negative number raised to a non-integer power yields a complex result")
	}
	return math.Pow(x, y), nil
}

// logBase is the logarithm of x to base b (exact at powers of 2 and 10 in those bases).
func logBase(b, x float64) (float64, error) {
	switch b {
	case 2:
		return floatFuncs["log2"](x)
	case 10:
		return floatFuncs["log10"](x)
	}
	ln := logOf(math.Log)
	lb, err := ln(b)
	if err != nil {
		return 0, err
	}
	lx, err := ln(x)
	if err != nil {
		return 0, err
	}
	if lb == 0 {
		return 0, errDivByZero
	}
	return lx / lb, nil
}

// newFloatFunc2 builds a function of floatFuncs2: DOUBLE in (any number converts), DOUBLE out.
func newFloatFunc2(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	conv, err := floatArgs(name, args)
	if err != nil {
		return nil, err
	}
	f := floatFuncs2[name]
	k := func(l, r operand, n int) (arrow.Array, error) {
		a, am := l.float64s()
		b, bm := r.float64s()
		valid, nulls := andValidity(n, l.a, r.a)
		dst := make([]float64, n)
		for i := range dst {
			if !isValidAt(valid, i) {
				continue
			}
			v, err := f(a[i&am], b[i&bm])
			if err != nil {
				return nil, err
			}
			dst[i] = v
		}
		return makeFloat64(dst, valid, nulls), nil
	}
	return &relabeled{Expr: &binaryExpr{op: ",", l: conv[0], r: conv[1], t: types.TDouble, k: k}, text: callText(name, args)}, nil
}

// newAbs is abs(x) of the argument's type; abs of the most negative integer overflows.
func newAbs(args []Expr) (Expr, error) {
	if err := argCount("abs", args, 1, 1); err != nil {
		return nil, err
	}
	a, err := numArg("abs", args[0])
	if err != nil {
		return nil, err
	}
	t := a.Type()
	text := callText("abs", args)
	if t.Kind == types.Double {
		return &kernelExpr{t: t, args: []Expr{a}, text: text, k: floatFunc(func(x float64) (float64, error) { return math.Abs(x), nil })}, nil
	}
	narrow := t.Kind == types.Int
	return &kernelExpr{t: t, args: []Expr{a}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		return mapInt64(as[0], false, func(x int64) (int64, error) {
			if x < 0 {
				x = -x
			}
			if x < 0 || (narrow && x != int64(int32(x))) {
				return 0, errIntOverflow
			}
			return x, nil
		})
	}}, nil
}

// newRound is round(x[, d]), rounding half away from zero to d fractional digits (negative
// d rounds to tens, hundreds, ...), and truncate(x[, d]) (Flink; trunc in PostgreSQL and
// DuckDB), cutting toward zero. Integers stay integers, DOUBLE stays DOUBLE; a DECIMAL
// rounded gains one digit of precision for the carry (round(9.9) = 10) and, with d a
// constant, takes d as its scale (between 0 and its own: round(2.345, 2) = 2.35, round(2.5)
// = 3, as in PostgreSQL and DuckDB); with d computed per row it keeps its scale.
func newRound(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	x, err := numArg(name, args[0])
	if err != nil {
		return nil, err
	}
	d := Expr(&Const{V: int64(0), T: types.TBigInt})
	if len(args) == 2 {
		if d, err = intArg("function "+name, args[1]); err != nil {
			return nil, err
		}
	}
	trunc := name != "round"
	t := x.Type()
	text := callText(name, args)
	if t.Kind == types.Double {
		k := func(l, r operand, n int) (arrow.Array, error) {
			a, am := l.float64s()
			ds, dm := r.int64s()
			valid, nulls := andValidity(n, l.a, r.a)
			dst := make([]float64, n)
			for i := range dst {
				dst[i] = roundFloat(a[i&am], ds[i&dm], trunc)
			}
			return makeFloat64(dst, valid, nulls), nil
		}
		return &relabeled{Expr: &binaryExpr{op: ",", l: x, r: d, t: t, k: k}, text: text}, nil
	}
	scale := int64(asDecimal(t).Scale)
	rt := t
	var unit int64 = 1 // the result's unscaled value is the rounded one divided by unit
	if t.Kind == types.Decimal {
		newScale := scale
		if c, ok := d.(*Const); ok {
			if dv, ok := c.V.(int64); ok {
				newScale = max(0, min(dv, scale))
			}
		}
		unit = types.Pow10[scale-newScale]
		carry := int(b2u(!trunc))
		rt = types.DecimalOf(min(types.MaxDecimalPrecision, int(t.Precision-t.Scale)+int(newScale)+carry), int(newScale))
	}
	chk, ovfErr := checkInt64, errIntOverflow
	switch t.Kind {
	case types.Int:
		chk = checkInt32
	case types.Decimal:
		chk, ovfErr = checkDecimal, errDecOverflow
	}
	k := func(l, r operand, n int) (arrow.Array, error) {
		a, am := l.int64s()
		ds, dm := r.int64s()
		valid, nulls := andValidity(n, l.a, r.a)
		dst := make([]int64, n)
		for i := range dst {
			if !isValidAt(valid, i) {
				continue
			}
			v, ok := roundScaled(a[i&am], scale-ds[i&dm], trunc)
			if !ok || outOfRange([]int64{v}, chk) {
				return nil, ovfErr
			}
			dst[i] = v / unit
		}
		return makeInt64(dst, valid, nulls), nil
	}
	return &relabeled{Expr: &binaryExpr{op: ",", l: x, r: d, t: rt, k: k}, text: text}, nil
}

// roundScaled rounds x half away from zero (trunc: toward zero) to a multiple of 10^drop
// (drop <= 0: x itself).
func roundScaled(x, drop int64, trunc bool) (int64, bool) {
	if drop <= 0 {
		return x, true
	}
	if drop > types.MaxDecimalPrecision {
		return 0, true // |x| < 9.3e18 < 10^19 / 2
	}
	f := types.Pow10[drop]
	if trunc {
		return x / f * f, true
	}
	p, o := mulOverflows(roundDiv(x, f), f)
	return p, !o
}

// roundFloat rounds x half away from zero (trunc: toward zero) to d decimal digits.
func roundFloat(x float64, d int64, trunc bool) float64 {
	cut := math.Round
	if trunc {
		cut = math.Trunc
	}
	if d == 0 {
		return cut(x)
	}
	if d > 300 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	if d < -300 {
		return 0
	}
	p := math.Pow(10, float64(d))
	r := cut(x*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return x
	}
	return r
}

// newFloorCeil: DOUBLE stays DOUBLE; DECIMAL(p,s) becomes DECIMAL(p,0); integers are
// returned unchanged.
func newFloorCeil(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numArg(name, args[0])
	if err != nil {
		return nil, err
	}
	t := x.Type()
	text := callText(name, args)
	ceil := name != "floor"
	switch t.Kind {
	case types.Double:
		f := math.Floor
		if ceil {
			f = math.Ceil
		}
		return &kernelExpr{t: t, args: []Expr{x}, text: text, k: floatFunc(func(v float64) (float64, error) { return f(v), nil })}, nil
	case types.Decimal:
		div := types.Pow10[t.Scale]
		return &kernelExpr{t: types.DecimalOf(int(t.Precision), 0), args: []Expr{x}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
			return mapInt64(as[0], false, func(v int64) (int64, error) {
				if ceil {
					return -types.FloorDiv(-v, div), nil
				}
				return types.FloorDiv(v, div), nil
			})
		}}, nil
	}
	return &relabeled{Expr: x, text: text}, nil
}

// newSign is sign(x): -1, 0 or 1; DOUBLE for a DOUBLE argument, INT otherwise.
func newSign(args []Expr) (Expr, error) {
	if err := argCount("sign", args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numArg("sign", args[0])
	if err != nil {
		return nil, err
	}
	text := callText("sign", args)
	if x.Type().Kind == types.Double {
		return &kernelExpr{t: types.TDouble, args: []Expr{x}, text: text, k: floatFunc(func(v float64) (float64, error) {
			switch {
			case v > 0:
				return 1, nil
			case v < 0:
				return -1, nil
			}
			return v, nil // 0, -0 and NaN as they are
		})}, nil
	}
	return &kernelExpr{t: types.TInt, args: []Expr{x}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Int64s(as[0])
		dst := make([]int64, n)
		for i, v := range src {
			dst[i] = int64(b2u(v > 0)) - int64(b2u(v < 0))
		}
		valid, nulls := andValidity(n, as[0])
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// newGreatest is greatest/least(args...) over the arguments' CommonType. NULL arguments are
// ignored and the result is NULL only when all are (PostgreSQL; MySQL returns NULL if any
// is).
func newGreatest(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 1, -1); err != nil {
		return nil, err
	}
	conv, t, err := unify("function "+name, args)
	if err != nil {
		return nil, err
	}
	want := 1
	if name == "least" {
		want = -1
	}
	return &kernelExpr{t: t, args: conv, text: callText(name, args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		switch t.Phys() {
		case types.PhysInt64:
			return extremeOf(as, n, want, Int64s, makeInt64), nil
		case types.PhysFloat64:
			return extremeOf(as, n, want, Float64s, makeFloat64), nil
		}
		bl := NewBuilder(t, n)
		for i := 0; i < n; i++ {
			var best any
			for _, a := range as {
				v := Value(a, i)
				if v != nil && (best == nil || compareTextOrBool(v, best)*want > 0) {
					best = v
				}
			}
			bl.Append(best)
		}
		return bl.Finish(), nil
	}}, nil
}

func extremeOf[T int64 | float64](as []arrow.Array, n, want int, vals func(arrow.Array) []T, mk func([]T, []byte, int) arrow.Array) arrow.Array {
	dst := make([]T, n)
	valid := make([]byte, (n+7)/8)
	for _, a := range as {
		src := vals(a)
		v := validityOf(a)
		for i := 0; i < n; i++ {
			if !isValidAt(v, i) {
				continue
			}
			x := src[i]
			if valid[i>>3]&(1<<(i&7)) == 0 || (want > 0 && x > dst[i]) || (want < 0 && x < dst[i]) {
				dst[i] = x
				valid[i>>3] |= 1 << (i & 7)
			}
		}
	}
	return mk(dst, valid, n-countValid(valid, n))
}

func countValid(valid []byte, n int) int {
	c := 0
	for i := 0; i < n; i++ {
		if valid[i>>3]&(1<<(i&7)) != 0 {
			c++
		}
	}
	return c
}

// compareTextOrBool orders two VARCHAR or two BOOLEAN physical values (false < true).
func compareTextOrBool(a, b any) int {
	if x, ok := a.(string); ok {
		return strings.Compare(x, b.(string))
	}
	return int(b2u(a.(bool))) - int(b2u(b.(bool)))
}
