package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Expr is a scalar expression evaluated over a whole batch at once.
//
// Eval returns an array of b.N values in the physical representation of Type(). It must not
// keep b, and returns an error (never panics) for data errors such as division by zero.
type Expr interface {
	Type() types.T
	Eval(b *Batch) (arrow.Array, error)
	String() string
}

// ColRef reads input column Idx.
type ColRef struct {
	Idx  int
	T    types.T
	Name string
}

var _ Expr = (*ColRef)(nil)

// Type implements Expr.
func (c *ColRef) Type() types.T { return c.T }

// Eval implements Expr.
func (c *ColRef) Eval(b *Batch) (arrow.Array, error) {
	a := b.Cols[c.Idx]
	a.Retain()
	return a, nil
}

func (c *ColRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("#%d", c.Idx)
}

// Const is a literal: a physical value (int64, float64, bool, string) or nil, of type T.
type Const struct {
	V any
	T types.T
}

var _ Expr = (*Const)(nil)

// Type implements Expr.
func (c *Const) Type() types.T { return c.T }

// Eval implements Expr.
func (c *Const) Eval(b *Batch) (arrow.Array, error) { return ConstArray(c.T, c.V, b.N), nil }

func (c *Const) String() string {
	if c.V == nil {
		return "NULL"
	}
	if s, ok := c.V.(string); ok {
		return fmt.Sprintf("'%s'", s)
	}
	return types.Display(c.V, c.T)
}

// ColumnShift reports whether e is an int64 column minus a constant — col - d, col + -d, or
// col itself with d = 0 — the form of nearly every WATERMARK expression, which a table can
// then apply row by row without evaluating it into a column.
func ColumnShift(e Expr) (col int, d int64, ok bool) {
	switch x := e.(type) {
	case *ColRef:
		return x.Idx, 0, x.T.Phys() == types.PhysInt64
	case *castExpr:
		if x.e.Type() == x.to {
			return ColumnShift(x.e)
		}
	case *binaryExpr:
		c, isConst := x.r.(*Const)
		if !isConst || x.op != "-" && x.op != "+" {
			return 0, 0, false
		}
		v, isInt := c.V.(int64)
		if !isInt {
			return 0, 0, false
		}
		col, d0, ok := ColumnShift(x.l)
		if !ok || d0 != 0 || x.op == "+" && v == math.MinInt64 {
			return 0, 0, false
		}
		if x.op == "+" {
			v = -v
		}
		return col, v, true
	}
	return 0, 0, false
}
