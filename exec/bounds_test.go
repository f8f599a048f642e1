package exec

import (
	"fmt"
	"math"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// ValueBounds takes the comparisons of int64-backed columns with constants in a predicate's
// conjuncts, either way round, intersected per column, and nothing from an OR, a computed
// column or a NULL.
func TestValueBounds(t *testing.T) {
	col := func(i int, ty types.T) Expr { return &ColRef{Idx: i, T: ty} }
	k := func(v any, ty types.T) Expr { return &Const{V: v, T: ty} }
	cmp := func(op string, l, r Expr) Expr {
		e, err := newCompare(op, l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	and := func(l, r Expr) Expr {
		e, err := NewBinary("AND", l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	or := func(l, r Expr) Expr {
		e, err := NewBinary("OR", l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	ts, bi, db := types.TTimestamp, types.TBigInt, types.TDouble
	plus, err := newArith("+", col(0, bi), k(int64(1), bi))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pred Expr
		want string
	}{
		{and(cmp(">=", col(1, ts), k(int64(100), ts)), cmp("<=", col(1, ts), k(int64(200), ts))), "[{1 100 200}]"},
		{and(cmp("<", k(int64(5), bi), col(0, bi)), cmp(">", k(int64(9), bi), col(0, bi))), "[{0 6 8}]"},
		{and(cmp("=", col(0, bi), k(int64(7), bi)), cmp(">", col(2, bi), k(int64(math.MaxInt64), bi))), "[{0 7 7} {2 1 0}]"},
		{cmp("<", col(0, bi), k(int64(math.MinInt64), bi)), "[{0 1 0}]"},
		{or(cmp(">", col(0, bi), k(int64(1), bi)), cmp("<", col(0, bi), k(int64(0), bi))), "[]"},
		{cmp(">", plus, k(int64(1), bi)), "[]"},
		{cmp(">", col(3, db), k(1.5, db)), "[]"},
		{cmp(">", col(0, bi), k(nil, bi)), "[]"},
		{cmp("<>", col(0, bi), k(int64(1), bi)), "[]"},
		// A BIGINT column against a DECIMAL constant compares scaled values (-25 for -0.25):
		// no bound of the column's values.
		{cmp("<", col(0, bi), k(int64(-25), types.DecimalOf(3, 2))), "[]"},
		// A DATE constant against a TIMESTAMP column is folded to a TIMESTAMP: a bound.
		{cmp(">", col(1, ts), k(int64(19000), types.TDate)), "[{1 1641600000001 9223372036854775807}]"},
		// An INT column against a BIGINT constant is widened first: none.
		{cmp(">", col(0, types.TInt), k(int64(3), bi)), "[]"},
	} {
		if got := fmt.Sprint(ValueBounds(tc.pred)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.pred, got, tc.want)
		}
	}
}

// The ranges AppendSegmentRanges reports are those of the columns' non-NULL values: a
// column's NULL rows, packed as other rows' values, do not widen it, and an all-NULL column
// has none.
func TestAppendSegmentRanges(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar, types.TTimestamp, types.TBigInt}
	b := RowsToBatch([][]any{
		{int64(5), "a", int64(-3), nil},
		{nil, "b", int64(7), nil},
		{int64(-2), nil, nil, nil},
	}, ts)
	ranges := make([]ValueRange, len(ts))
	if _, err := AppendSegmentRanges(nil, b, ts, ranges); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ranges); got != "[{-2 5 true} {0 0 false} {-3 7 true} {0 0 false}]" {
		t.Errorf("ranges %s", got)
	}
	for _, c := range []int{0, 2, 3} {
		if r := Int64Range(b.Cols[c]); r != ranges[c] {
			t.Errorf("column %d: Int64Range %v, packing %v", c, r, ranges[c])
		}
	}
}
