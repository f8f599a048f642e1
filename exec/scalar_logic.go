package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

// asBoolOperand checks that e can be a logical operand: BOOLEAN, or an untyped NULL (made
// a BOOLEAN NULL).
func asBoolOperand(what string, e Expr) (Expr, error) {
	switch e.Type().Kind {
	case types.Bool:
		return e, nil
	case types.Null:
		return newCast(e, types.TBool, false, true), nil
	}
	return nil, fmt.Errorf("%s expects BOOLEAN operands, got %s", what, e.Type())
}

// logicExpr is AND / OR with SQL's three-valued logic: FALSE AND NULL is FALSE, TRUE OR NULL
// is TRUE, otherwise NULL in, NULL out.
//
// Both operands are evaluated over the whole batch (no per-row branching). If the right
// operand fails, it is retried on only the rows the left operand has not decided, as a
// per-row short circuit would, so `b <> 0 AND a / b > 1` does not divide by zero.
type logicExpr struct {
	and  bool
	l, r Expr
}

var _ Expr = (*logicExpr)(nil)

func newLogic(op string, l, r Expr) (Expr, error) {
	var err error
	if l, err = asBoolOperand(op, l); err != nil {
		return nil, err
	}
	if r, err = asBoolOperand(op, r); err != nil {
		return nil, err
	}
	return &logicExpr{and: op == "AND", l: l, r: r}, nil
}

func (e *logicExpr) Type() types.T { return types.TBool }

func (e *logicExpr) String() string {
	op := "OR"
	if e.and {
		op = "AND"
	}
	return fmt.Sprintf("(%s %s %s)", e.l, op, e.r)
}

// allOnes returns a bitmap of n set bits.
func allOnes(n int) []byte {
	b := make([]byte, (n+7)/8)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

// validOrOnes is validityOf with nil replaced by all ones.
func validOrOnes(a arrow.Array) []byte {
	if v := validityOf(a); v != nil {
		return v
	}
	return allOnes(a.Len())
}

func (e *logicExpr) Eval(b *Batch) (arrow.Array, error) {
	n := b.N
	la, err := e.l.Eval(b)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	lv, lb := validOrOnes(la), boolBitsOf(la)
	var rv, rb []byte
	ra, err := e.r.Eval(b)
	if err == nil {
		defer ra.Release()
		rv, rb = validOrOnes(ra), boolBitsOf(ra)
	} else {
		// Undecided rows: AND needs r where l is not FALSE, OR where l is not TRUE.
		var idx []int32
		for i := 0; i < n; i++ {
			known := isValidAt(lv, i) && bitutil.BitIsSet(lb, i) != e.and
			if !known {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == n {
			return nil, err
		}
		rv, rb = make([]byte, (n+7)/8), make([]byte, (n+7)/8)
		if len(idx) > 0 {
			sb := takeRows(b, idx)
			sub, err := e.r.Eval(sb)
			releaseBatch(sb)
			if err != nil {
				return nil, err
			}
			defer sub.Release()
			for j, i := range idx {
				if sub.IsValid(j) {
					bitutil.SetBit(rv, int(i))
					if sub.(*array.Boolean).Value(j) {
						bitutil.SetBit(rb, int(i))
					}
				}
			}
		}
	}
	m := (n + 7) / 8
	valid, out := make([]byte, m), make([]byte, m)
	for i := 0; i < m; i++ {
		if e.and {
			lf, rf := lv[i]&^lb[i], rv[i]&^rb[i]
			valid[i] = lv[i]&rv[i] | lf | rf
			out[i] = lv[i] & lb[i] & rv[i] & rb[i]
		} else {
			lt, rt := lv[i]&lb[i], rv[i]&rb[i]
			valid[i] = lv[i]&rv[i] | lt | rt
			out[i] = lt | rt
		}
	}
	return makeBool(out, n, valid, n-bitutil.CountSetBits(valid, 0, n)), nil
}

// NewNot returns NOT e (NOT NULL is NULL).
func NewNot(e Expr) (Expr, error) {
	e, err := asBoolOperand("NOT", e)
	if err != nil {
		return nil, err
	}
	return &kernelExpr{t: types.TBool, args: []Expr{e}, text: fmt.Sprintf("(NOT %s)", e), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		vals := boolBitsOf(as[0])
		out := make([]byte, (n+7)/8)
		for i := range out {
			out[i] = ^vals[i]
		}
		valid, nulls := andValidity(n, as[0])
		return makeBool(out, n, valid, nulls), nil
	}}, nil
}

// evalOn evaluates e for the rows idx of b (idx nil: all rows). It first tries the whole
// batch, which is cheaper than gathering a sub-batch; only if that fails does it retry on
// exactly the selected rows, so an error in a row the caller does not need (a division by
// zero guarded by CASE) is not raised. full reports which of the two the result covers.
func evalOn(e Expr, b *Batch, idx []int32) (a arrow.Array, full bool, err error) {
	a, err = e.Eval(b)
	if err == nil || idx == nil || len(idx) == b.N {
		return a, true, err
	}
	if len(idx) == 0 {
		return nil, false, nil
	}
	sub := takeRows(b, idx)
	defer releaseBatch(sub)
	a, err = e.Eval(sub)
	return a, false, err
}

// takeRows gathers the rows idx of b into a new batch; release it with releaseBatch.
func takeRows(b *Batch, idx []int32) *Batch { return Take(b, idx, physTypes(b)) }

func releaseBatch(b *Batch) { releaseAll(b.Cols...) }

// choice records, for lazily-evaluated expressions (CASE, COALESCE), which part supplies
// each row: part[i] (-1: NULL) at index pos[i] of that part's evaluated array.
type choice struct {
	part []int32
	pos  []int32
	rows [][]int32 // per part, the rows it supplies, ascending
}

func newChoice(n, parts int) *choice {
	c := &choice{part: make([]int32, n), pos: make([]int32, n), rows: make([][]int32, parts)}
	for i := range c.part {
		c.part[i] = -1
	}
	return c
}

// assign gives row to part, at index at of the part's array.
func (c *choice) assign(row int32, part int, at int) {
	c.part[row] = int32(part)
	c.pos[row] = int32(at)
	c.rows[part] = append(c.rows[part], row)
}

// gather assembles the result of type t from the evaluated parts (nil: NULL).
func (c *choice) gather(t types.T, n int, arrs []arrow.Array) arrow.Array {
	// One part supplying every row (rows ascending, so its array is in row order) is the
	// result as is.
	for k, a := range arrs {
		if a != nil && len(c.rows[k]) == n && a.Len() == n {
			a.Retain()
			return a
		}
	}
	switch t.Phys() {
	case types.PhysInt64, types.PhysFloat64:
		valid := make([]byte, (n+7)/8)
		nulls := 0
		var i64 []int64
		var f64 []float64
		if t.Phys() == types.PhysInt64 {
			i64 = make([]int64, n)
		} else {
			f64 = make([]float64, n)
		}
		for i := 0; i < n; i++ {
			k := c.part[i]
			if k < 0 || arrs[k] == nil || arrs[k].IsNull(int(c.pos[i])) {
				nulls++
				continue
			}
			valid[i>>3] |= 1 << (i & 7)
			if i64 != nil {
				i64[i] = arrs[k].(*array.Int64).Value(int(c.pos[i]))
			} else {
				f64[i] = arrs[k].(*array.Float64).Value(int(c.pos[i]))
			}
		}
		if i64 != nil {
			return makeInt64(i64, valid, nulls)
		}
		return makeFloat64(f64, valid, nulls)
	}
	bl := NewBuilder(t, n)
	for i := 0; i < n; i++ {
		k := c.part[i]
		if k < 0 || arrs[k] == nil {
			bl.Append(nil)
			continue
		}
		bl.AppendFrom(arrs[k], int(c.pos[i]))
	}
	return bl.Finish()
}

// forRows calls f(row, j) for each row of idx (nil: all n rows), where j is the row's index
// in an array evaluated by evalOn(.., idx) that reported full.
func forRows(n int, idx []int32, full bool, f func(row, j int)) {
	if idx == nil {
		for i := 0; i < n; i++ {
			f(i, i)
		}
		return
	}
	for p, row := range idx {
		if full {
			f(int(row), int(row))
		} else {
			f(int(row), p)
		}
	}
}

// caseExpr is a searched CASE (a simple CASE is built as one, with operand = value tests).
// Each WHEN is evaluated only for rows no earlier WHEN claimed and each THEN only for the
// rows that chose it (see evalOn).
type caseExpr struct {
	t     types.T
	whens []Expr // BOOLEAN conditions
	thens []Expr // converted to t
	els   Expr   // nil: NULL
	text  string
}

var _ Expr = (*caseExpr)(nil)

func (e *caseExpr) Type() types.T  { return e.t }
func (e *caseExpr) String() string { return e.text }

func (e *caseExpr) Eval(b *Batch) (arrow.Array, error) {
	n := b.N
	parts := len(e.thens) + 1 // the last part is ELSE
	branch := make([]int32, n)
	for i := range branch {
		branch[i] = int32(parts - 1)
	}
	var undecided []int32 // nil: every row
	for k, w := range e.whens {
		if undecided != nil && len(undecided) == 0 {
			break
		}
		c, full, err := evalOn(w, b, undecided)
		if err != nil {
			return nil, err
		}
		cb := c.(*array.Boolean)
		next := []int32{}
		forRows(n, undecided, full, func(row, j int) {
			if cb.IsValid(j) && cb.Value(j) {
				branch[row] = int32(k)
			} else {
				next = append(next, int32(row))
			}
		})
		c.Release()
		undecided = next
	}
	ch := newChoice(n, parts)
	for i, k := range branch {
		ch.assign(int32(i), int(k), len(ch.rows[k]))
	}
	arrs := make([]arrow.Array, parts)
	defer func() { releaseAll(arrs...) }()
	for k := 0; k < parts; k++ {
		ex := e.els
		if k < len(e.thens) {
			ex = e.thens[k]
		}
		if ex == nil || len(ch.rows[k]) == 0 {
			continue
		}
		a, full, err := evalOn(ex, b, ch.rows[k])
		if err != nil {
			return nil, err
		}
		arrs[k] = a
		if full {
			for _, row := range ch.rows[k] {
				ch.pos[row] = row
			}
		}
	}
	return ch.gather(e.t, n, arrs), nil
}

// NewCase returns CASE [operand] WHEN .. THEN .. [ELSE els] END. With an operand (simple
// CASE) each WHEN value is compared with it by =; otherwise each WHEN must be BOOLEAN. The
// THEN and ELSE values widen to their CommonType; a missing ELSE is NULL.
func NewCase(operand Expr, whens, thens []Expr, els Expr) (Expr, error) {
	if len(whens) == 0 || len(whens) != len(thens) {
		return nil, fmt.Errorf("CASE needs at least one WHEN, each with a THEN")
	}
	var sb strings.Builder
	sb.WriteString("CASE")
	if operand != nil {
		fmt.Fprintf(&sb, " %s", operand)
	}
	conds := make([]Expr, len(whens))
	for i, w := range whens {
		fmt.Fprintf(&sb, " WHEN %s THEN %s", w, thens[i])
		var err error
		if operand != nil {
			conds[i], err = NewBinary("=", operand, w)
		} else {
			conds[i], err = asBoolOperand("CASE WHEN", w)
		}
		if err != nil {
			return nil, err
		}
	}
	if els != nil {
		fmt.Fprintf(&sb, " ELSE %s", els)
	}
	sb.WriteString(" END")
	vals := append([]Expr{}, thens...)
	if els != nil {
		vals = append(vals, els)
	}
	conv, t, err := unify("CASE", vals)
	if err != nil {
		return nil, err
	}
	e := &caseExpr{t: t, whens: conds, thens: conv[:len(thens)], text: sb.String()}
	if els != nil {
		e.els = conv[len(thens)]
	}
	return e, nil
}

// coalesceExpr returns, per row, its first non-NULL argument; each argument is evaluated
// only for the rows every earlier argument left NULL.
type coalesceExpr struct {
	t    types.T
	args []Expr
	text string
}

var _ Expr = (*coalesceExpr)(nil)

func (e *coalesceExpr) Type() types.T  { return e.t }
func (e *coalesceExpr) String() string { return e.text }

func (e *coalesceExpr) Eval(b *Batch) (arrow.Array, error) {
	n := b.N
	ch := newChoice(n, len(e.args))
	arrs := make([]arrow.Array, len(e.args))
	defer func() { releaseAll(arrs...) }()
	var undecided []int32 // nil: every row
	for k, x := range e.args {
		if undecided != nil && len(undecided) == 0 {
			break
		}
		a, full, err := evalOn(x, b, undecided)
		if err != nil {
			return nil, err
		}
		arrs[k] = a
		next := []int32{}
		forRows(n, undecided, full, func(row, j int) {
			if a.IsValid(j) {
				ch.assign(int32(row), k, j)
			} else {
				next = append(next, int32(row))
			}
		})
		undecided = next
	}
	return ch.gather(e.t, n, arrs), nil
}

func newCoalesce(args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("function coalesce expects at least 1 argument")
	}
	conv, t, err := unify("coalesce", args)
	if err != nil {
		return nil, err
	}
	return &coalesceExpr{t: t, args: conv, text: callText("coalesce", args)}, nil
}

// newIf is if(cond, a, b): CASE WHEN cond THEN a ELSE b END.
func newIf(args []Expr) (Expr, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("function if expects 3 arguments, got %d", len(args))
	}
	if k := args[0].Type().Kind; k != types.Bool && k != types.Null {
		return nil, fmt.Errorf("function if expects a BOOLEAN condition, got %s", args[0].Type())
	}
	c, err := NewCase(nil, args[:1], args[1:2], args[2])
	if err != nil {
		return nil, fmt.Errorf("function if: %w", err)
	}
	return &relabeled{Expr: c, text: callText("if", args)}, nil
}

// newNullif is nullif(a, b): NULL where a = b is TRUE, else a (of a's type).
func newNullif(args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("function nullif expects 2 arguments, got %d", len(args))
	}
	eq, err := NewBinary("=", args[0], args[1])
	if err != nil {
		return nil, fmt.Errorf("function nullif: %w", err)
	}
	return &kernelExpr{t: args[0].Type(), args: []Expr{args[0], eq}, text: callText("nullif", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		eqv, eqb := validityOf(as[1]), boolBitsOf(as[1])
		keep := make([]byte, (n+7)/8)
		for i := range keep {
			hit := eqb[i]
			if eqv != nil {
				hit &= eqv[i]
			}
			keep[i] = ^hit
		}
		return withValidity(as[0], keep), nil
	}}, nil
}
