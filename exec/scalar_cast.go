package exec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// castExpr converts its operand to another type. Choices where SQL dialects differ:
//   - DOUBLE and DECIMAL to INT/BIGINT truncate toward zero, as Flink does (PostgreSQL
//     rounds); DOUBLE to DECIMAL and DECIMAL to a smaller scale round half away from zero.
//   - VARCHAR parses with the literal syntax (types.Parse*); BOOLEAN accepts true/false,
//     t/f, yes/no, on/off and 1/0, case-insensitively, as PostgreSQL does.
//   - Anything to VARCHAR is its types.Display text (DOUBLE as strconv 'g' -1).
//   - BOOLEAN <-> INT/BIGINT map true to 1 and any non-zero to true.
//   - DATE -> TIMESTAMP is midnight; TIMESTAMP -> DATE floors (dates before 1970 included).
//
// Under TRY_CAST a row that fails to convert becomes NULL instead of failing the query.
type castExpr struct {
	e        Expr
	to       types.T
	try      bool
	implicit bool // inserted by the binder or an operator: not shown by String
	k        func(a arrow.Array) (arrow.Array, error)
	at       Pos // where the CAST stands, for its data errors
}

var _ Expr = (*castExpr)(nil)

func (c *castExpr) Type() types.T { return c.to }

func (c *castExpr) Eval(b *Batch) (arrow.Array, error) { return c.at.result(c.eval(b)) }

func (c *castExpr) eval(b *Batch) (arrow.Array, error) {
	a, err := c.e.Eval(b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return c.k(a)
}

func (c *castExpr) String() string {
	switch {
	case c.implicit:
		return c.e.String()
	case c.try:
		return fmt.Sprintf("TRY_CAST(%s AS %s)", c.e, c.to)
	}
	return fmt.Sprintf("CAST(%s AS %s)", c.e, c.to)
}

// castable reports whether CAST(from AS to) is defined.
func castable(from, to types.T) bool {
	switch {
	case from == to, from.Kind == types.Null, to.Kind == types.Varchar:
		return true
	case from.Kind == types.Varchar:
		return to.Kind != types.Interval
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.Kind == types.Bool:
		return to.IsInteger()
	case to.Kind == types.Bool:
		return from.IsInteger()
	case from.IsTemporal() && to.IsTemporal():
		return true
	}
	return false
}

// NewCast returns CAST(e AS to), or TRY_CAST when try is set. A cast to the operand's own
// type is the operand itself.
func NewCast(e Expr, to types.T, try bool) (Expr, error) {
	from := e.Type()
	if !castable(from, to) {
		return nil, fmt.Errorf("cannot cast %s to %s", from, to)
	}
	if from == to {
		return e, nil
	}
	return newCast(e, to, try, false), nil
}

// newCast builds a cast the caller has checked with castable.
func newCast(e Expr, to types.T, try, implicit bool) *castExpr {
	c := &castExpr{e: e, to: to, try: try, implicit: implicit}
	from := e.Type()
	switch {
	case from == to || (from.Kind == types.Int && to.Kind == types.BigInt):
		c.k = func(a arrow.Array) (arrow.Array, error) { a.Retain(); return a, nil }
	case from.Kind == types.Null:
		c.k = func(a arrow.Array) (arrow.Array, error) { return ConstArray(to, nil, a.Len()), nil }
	case to.Kind == types.Varchar:
		c.k = func(a arrow.Array) (arrow.Array, error) { return castToText(a, from), nil }
	case from.Kind == types.Varchar:
		c.k = func(a arrow.Array) (arrow.Array, error) { return castFromText(a.(*array.String), to, try) }
	case from.Kind == types.Bool:
		c.k = func(a arrow.Array) (arrow.Array, error) {
			bs := a.(*array.Boolean)
			vals := make([]int64, a.Len())
			for i := range vals {
				if bs.Value(i) {
					vals[i] = 1
				}
			}
			v, nulls := andValidity(a.Len(), a)
			return makeInt64(vals, v, nulls), nil
		}
	case to.Kind == types.Bool:
		c.k = func(a arrow.Array) (arrow.Array, error) {
			src := Int64s(a)
			out := make([]byte, (len(src)+7)/8)
			for i, x := range src {
				if x != 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
			v, nulls := andValidity(a.Len(), a)
			return makeBool(out, len(src), v, nulls), nil
		}
	case from.Kind == types.Date && to.Kind == types.Timestamp:
		c.k = func(a arrow.Array) (arrow.Array, error) {
			return scaleInt64(a, types.MsPerDay, 0, errTimeOverflow, try)
		}
	case from.Kind == types.Timestamp && to.Kind == types.Date:
		c.k = func(a arrow.Array) (arrow.Array, error) {
			return mapInt64(a, try, func(x int64) (int64, error) { return types.FloorDiv(x, types.MsPerDay), nil })
		}
	case to.Kind == types.Double:
		div := 1.0
		if from.Kind == types.Decimal {
			div = float64(types.Pow10[from.Scale])
		}
		c.k = func(a arrow.Array) (arrow.Array, error) {
			src := Int64s(a)
			vals := make([]float64, len(src))
			if div == 1 {
				for i, x := range src {
					vals[i] = float64(x)
				}
			} else {
				for i, x := range src {
					vals[i] = float64(x) / div
				}
			}
			v, nulls := andValidity(len(src), a)
			return makeFloat64(vals, v, nulls), nil
		}
	case from.Kind == types.Double:
		c.k = func(a arrow.Array) (arrow.Array, error) { return castFromDouble(a, to, try) }
	case to.Kind == types.Decimal:
		// From INT, BIGINT or DECIMAL: rescale, then check the target precision.
		fs := int(asDecimal(from).Scale)
		ts := int(to.Scale)
		limit := types.Pow10[to.Precision]
		if ts >= fs {
			f := types.Pow10[ts-fs]
			c.k = func(a arrow.Array) (arrow.Array, error) { return scaleInt64(a, f, limit, decRangeErr(to), try) }
		} else {
			d := types.Pow10[fs-ts]
			c.k = func(a arrow.Array) (arrow.Array, error) {
				return mapInt64(a, try, func(x int64) (int64, error) {
					r := roundDiv(x, d)
					if r >= limit || r <= -limit {
						return 0, decRangeErr(to)
					}
					return r, nil
				})
			}
		}
	default:
		// DECIMAL to INT/BIGINT (truncating) and BIGINT to INT.
		d := types.Pow10[asDecimal(from).Scale]
		narrow := to.Kind == types.Int
		c.k = func(a arrow.Array) (arrow.Array, error) {
			return mapInt64(a, try, func(x int64) (int64, error) {
				r := x / d
				if narrow && r != int64(int32(r)) {
					return 0, fmt.Errorf("value %s out of range for INT", types.Display(x, from))
				}
				return r, nil
			})
		}
	}
	return c
}

func decRangeErr(t types.T) error { return fmt.Errorf("value out of range for %s", t) }

// roundDiv divides rounding half away from zero.
func roundDiv(x, d int64) int64 {
	q, r := x/d, x%d
	if r < 0 {
		r = -r
	}
	if 2*r >= d {
		if x < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// scaleInt64 multiplies every row by f, failing (or, under try, nulling) rows that overflow
// int64 or, when limit > 0, reach ±limit. It is the rescale of DECIMAL arithmetic and the
// DATE to TIMESTAMP cast, so it is a branch-free loop with a slow path only on overflow.
func scaleInt64(a arrow.Array, f, limit int64, ovfErr error, try bool) (arrow.Array, error) {
	src := Int64s(a)
	valid, nulls := andValidity(len(src), a)
	vals := make([]int64, len(src))
	var ovf bool
	for i, x := range src {
		p, o := mulOverflows(x, f)
		vals[i] = p
		ovf = ovf || o
	}
	if limit > 0 {
		for _, p := range vals {
			ovf = ovf || p >= limit || p <= -limit
		}
	}
	if ovf {
		bad := func(i int) bool {
			p, o := mulOverflows(src[i], f)
			return o || (limit > 0 && (p >= limit || p <= -limit))
		}
		if !try {
			if anyValidRow(len(src), valid, bad) {
				return nil, ovfErr
			}
		} else {
			valid, nulls = nullWhere(len(src), valid, bad)
		}
	}
	return makeInt64(vals, valid, nulls), nil
}

// nullWhere clears the validity of rows where bad holds and returns the new bitmap.
func nullWhere(n int, valid []byte, bad func(i int) bool) ([]byte, int) {
	out := make([]byte, (n+7)/8)
	nulls := 0
	for i := 0; i < n; i++ {
		if isValidAt(valid, i) && !bad(i) {
			out[i>>3] |= 1 << (i & 7)
		} else {
			nulls++
		}
	}
	return out, nulls
}

// mapInt64 applies f to each non-null row of an int64 column. A row where f fails aborts
// the evaluation, or becomes NULL under try.
func mapInt64(a arrow.Array, try bool, f func(int64) (int64, error)) (arrow.Array, error) {
	src := Int64s(a)
	valid, nulls := andValidity(len(src), a)
	vals := make([]int64, len(src))
	var failed []byte
	for i, x := range src {
		if !isValidAt(valid, i) {
			continue
		}
		r, err := f(x)
		if err != nil {
			if !try {
				return nil, err
			}
			if failed == nil {
				failed = make([]byte, (len(src)+7)/8)
			}
			failed[i>>3] |= 1 << (i & 7)
			continue
		}
		vals[i] = r
	}
	if failed != nil {
		valid, nulls = nullWhere(len(src), valid, func(i int) bool { return failed[i>>3]&(1<<(i&7)) != 0 })
	}
	return makeInt64(vals, valid, nulls), nil
}

// castFromDouble converts DOUBLE to INT, BIGINT (truncating toward zero) or DECIMAL
// (rounding half away from zero).
func castFromDouble(a arrow.Array, to types.T, try bool) (arrow.Array, error) {
	src := Float64s(a)
	b := NewBuilder(to, len(src))
	for i, x := range src {
		if a.IsNull(i) {
			b.Append(nil)
			continue
		}
		var r int64
		var err error
		switch to.Kind {
		case types.Decimal:
			r, err = types.DecimalFromFloat(x, to.Precision, to.Scale)
		default:
			t := math.Trunc(x)
			if !(t >= -(1<<63) && t < 1<<63) || (to.Kind == types.Int && t != float64(int32(t))) {
				err = fmt.Errorf("value %s out of range for %s", strconv.FormatFloat(x, 'g', -1, 64), to)
			}
			r = int64(t)
		}
		if err != nil {
			if !try {
				return nil, err
			}
			b.Append(nil)
			continue
		}
		b.Append(r)
	}
	return b.Finish(), nil
}

// castToText renders each row as types.Display text.
func castToText(a arrow.Array, from types.T) arrow.Array {
	n := a.Len()
	b := array.NewStringBuilder(Mem)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		v := Value(a, i)
		if v == nil {
			b.AppendNull()
			continue
		}
		b.Append(types.Display(v, from))
	}
	return b.NewArray()
}

// castFromText parses each row as a literal of type to.
func castFromText(a *array.String, to types.T, try bool) (arrow.Array, error) {
	n := a.Len()
	b := NewBuilder(to, n)
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			b.Append(nil)
			continue
		}
		v, err := parseText(a.Value(i), to)
		if err != nil {
			if !try {
				return nil, err
			}
			b.Append(nil)
			continue
		}
		b.Append(v)
	}
	return b.Finish(), nil
}

// parseText parses s as a value of type t, returning its physical value.
func parseText(s string, t types.T) (any, error) {
	ts := strings.TrimSpace(s)
	bad := func() error { return fmt.Errorf("invalid %s value %q", t, s) }
	switch t.Kind {
	case types.Int, types.BigInt:
		bitSize := 64
		if t.Kind == types.Int {
			bitSize = 32
		}
		v, err := strconv.ParseInt(ts, 10, bitSize)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, fmt.Errorf("value %q out of range for %s", s, t)
			}
			return nil, bad()
		}
		return v, nil
	case types.Double:
		v, err := strconv.ParseFloat(ts, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, fmt.Errorf("value %q out of range for DOUBLE", s)
			}
			return nil, bad()
		}
		return v, nil
	case types.Decimal:
		v, err := types.ParseDecimal(ts, t.Precision, t.Scale)
		if errors.Is(err, types.ErrDecimalRange) {
			return nil, fmt.Errorf("value %q out of range for %s", s, t)
		}
		if err != nil {
			return nil, bad()
		}
		return v, nil
	case types.Bool:
		if v, ok := types.ParseBool(ts); ok {
			return v, nil
		}
		return nil, bad()
	case types.Date:
		if v, err := types.ParseDate(ts); err == nil {
			return v, nil
		}
		if ms, err := types.ParseTimestamp(ts); err == nil {
			return types.FloorDiv(ms, types.MsPerDay), nil
		}
		return nil, bad()
	case types.Timestamp:
		v, err := types.ParseTimestamp(ts)
		if err != nil {
			return nil, bad()
		}
		return v, nil
	case types.Varchar:
		return s, nil
	}
	return nil, fmt.Errorf("cannot cast VARCHAR to %s", t)
}
