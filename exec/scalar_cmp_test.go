package exec

import (
	"testing"
)

func TestScalarCompare(t *testing.T) {
	ints := []tc{col(tBig, 1, 2, 3, nil, 2), col(tBig, 2, 2, 2, 2, nil)}
	cases := []scalarCase{
		{name: "=", cols: ints, build: bin("="), want: rows("false|true|false|NULL|NULL"), typ: "BOOLEAN", text: "(a = b)"},
		{name: "<>", cols: ints, build: bin("<>"), want: rows("true|false|true|NULL|NULL")},
		{name: "!= is <>", cols: ints, build: bin("!="), want: rows("true|false|true|NULL|NULL"), text: "(a <> b)"},
		{name: "<", cols: ints, build: bin("<"), want: rows("true|false|false|NULL|NULL")},
		{name: "<=", cols: ints, build: bin("<="), want: rows("true|true|false|NULL|NULL")},
		{name: ">", cols: ints, build: bin(">"), want: rows("false|false|true|NULL|NULL")},
		{name: ">=", cols: ints, build: bin(">="), want: rows("false|true|true|NULL|NULL")},
		{name: "int vs double widens", cols: []tc{col(tInt, 1, 2), col(tDbl, 1.5, 2.0)},
			build: bin("<"), want: rows("true|false")},
		{name: "decimal scales compare exactly", cols: []tc{col(dec(3, 2), "1.50", "2.00", "-0.01"), col(dec(2, 1), "1.5", "2.1", "0.0")},
			build: bin("="), want: rows("true|false|false")},
		{name: "decimal vs bigint", cols: []tc{col(dec(5, 2), "2.00", "2.01"), col(tBig, 2, 2)},
			build: bin("="), want: rows("true|false")},
		{name: "decimal vs double", cols: []tc{col(dec(5, 2), "0.25"), col(tDbl, 0.25)},
			build: bin("="), want: rows("true")},
		{name: "varchar is byte-wise", cols: []tc{col(tStr, "a", "B", "é", "", nil), col(tStr, "b", "a", "z", "a", "a")},
			build: bin("<"), want: rows("true|true|false|true|NULL")},
		{name: "varchar equality", cols: []tc{col(tStr, "abc", "abc", "ab")},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], lit(t, "abc", tStr)) },
			want:  rows("true|true|false"), text: "(a = 'abc')"},
		{name: "column vs constant on the left", cols: []tc{col(tBig, 1, 5, 9)},
			build: func(c []Expr) (Expr, error) { return NewBinary("<", lit(t, 5, tBig), c[0]) },
			want:  rows("false|false|true")},
		{name: "varchar literal vs date is parsed", cols: []tc{col(tDate, "1969-12-31", "1970-01-02", nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary(">", c[0], lit(t, "1970-01-01", tStr)) },
			want:  rows("false|true|NULL")},
		{name: "varchar literal vs timestamp is parsed", cols: []tc{col(tTS, "2024-01-01 10:00:00", "2024-01-01 09:59:59.999")},
			build: func(c []Expr) (Expr, error) { return NewBinary("<=", lit(t, "2024-01-01 10:00", tStr), c[0]) },
			want:  rows("true|false")},
		{name: "bad date literal", cols: []tc{col(tDate, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], lit(t, "yesterday", tStr)) },
			err:   `invalid DATE value "yesterday"`},
		{name: "date vs timestamp", cols: []tc{col(tDate, "1970-01-01", "1970-01-01"), col(tTS, "1970-01-01 00:00:00", "1970-01-01 00:00:00.001")},
			build: bin("="), want: rows("true|false")},
		{name: "booleans", cols: []tc{col(tBool, true, false, true, nil), col(tBool, false, false, true, true)},
			build: bin(">"), want: rows("true|false|false|NULL")},
		{name: "interval", cols: []tc{col(tIv, "1 s"), col(tIv, "1000 ms")},
			build: bin("="), want: rows("true")},
		{name: "NULL literal", cols: []tc{col(tStr, "a")},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], &Const{T: tNull}) },
			want:  rows("NULL")},
		{name: "varchar vs bigint", cols: []tc{col(tStr, "1"), col(tBig, 1)},
			build: bin("="), err: "cannot compare VARCHAR with BIGINT"},
		{name: "varchar literal vs bigint", cols: []tc{col(tBig, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], lit(t, "1", tStr)) },
			err:   "cannot compare BIGINT with VARCHAR"},
		{name: "boolean vs int", cols: []tc{col(tBool, true), col(tInt, 1)},
			build: bin("="), err: "cannot compare BOOLEAN with INT"},
		{name: "date vs interval", cols: []tc{col(tDate, 1), col(tIv, 1)},
			build: bin("<"), err: "cannot compare DATE with INTERVAL"},
	}
	runScalarCases(t, cases)
}

func TestScalarLogicTruthTables(t *testing.T) {
	// l and r enumerate all nine pairs of TRUE, FALSE, NULL.
	l := col(tBool, true, true, true, false, false, false, nil, nil, nil)
	r := col(tBool, true, false, nil, true, false, nil, true, false, nil)
	runScalarCases(t, []scalarCase{
		{name: "AND", cols: []tc{l, r}, build: bin("AND"),
			want: rows("true|false|NULL|false|false|false|NULL|false|NULL"), text: "(a AND b)"},
		{name: "OR", cols: []tc{l, r}, build: bin("or"),
			want: rows("true|true|true|true|false|NULL|true|NULL|NULL"), text: "(a OR b)"},
		{name: "NOT", cols: []tc{col(tBool, true, false, nil)}, build: func(c []Expr) (Expr, error) { return NewNot(c[0]) },
			want: rows("false|true|NULL"), text: "(NOT a)"},
		{name: "NULL literal AND", cols: []tc{col(tBool, true, false, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("AND", &Const{T: tNull}, c[0]) },
			want:  rows("NULL|false|NULL")},
		{name: "constant OR", cols: []tc{col(tBool, true, false, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("OR", c[0], &Const{V: true, T: tBool}) },
			want:  rows("true|true|true")},
		{name: "AND needs booleans", cols: []tc{col(tBig, 1), col(tBool, true)},
			build: bin("AND"), err: "AND expects BOOLEAN operands, got BIGINT"},
		{name: "NOT needs a boolean", cols: []tc{col(tStr, "x")},
			build: func(c []Expr) (Expr, error) { return NewNot(c[0]) }, err: "NOT expects BOOLEAN operands, got VARCHAR"},
		{name: "AND short-circuits errors per row", cols: []tc{col(tBig, 4, 4, 4), col(tBig, 0, 2, 8)},
			build: func(c []Expr) (Expr, error) {
				nz, _ := NewBinary("<>", c[1], lit(t, 0, tBig))
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, lit(t, 1, tBig))
				return NewBinary("AND", nz, gt)
			}, want: rows("false|true|false")},
		{name: "OR short-circuits errors per row", cols: []tc{col(tBig, 4, 4), col(tBig, 0, 2)},
			build: func(c []Expr) (Expr, error) {
				z, _ := NewBinary("=", c[1], lit(t, 0, tBig))
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, lit(t, 1, tBig))
				return NewBinary("OR", z, gt)
			}, want: rows("true|true")},
		{name: "AND still fails on rows it needs", cols: []tc{col(tBig, 4), col(tBig, 0)},
			build: func(c []Expr) (Expr, error) {
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, lit(t, 1, tBig))
				return NewBinary("AND", &Const{V: true, T: tBool}, gt)
			}, err: "division by zero"},
	})
}

func TestScalarIsNullAndIsBool(t *testing.T) {
	b := col(tBool, true, false, nil)
	runScalarCases(t, []scalarCase{
		{name: "IS NULL", cols: []tc{col(tBig, 1, nil)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], false), nil },
			want: rows("false|true"), text: "(a IS NULL)"},
		{name: "IS NOT NULL", cols: []tc{col(tStr, "x", nil)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], true), nil },
			want: rows("true|false"), text: "(a IS NOT NULL)"},
		{name: "IS NULL of a no-null column", cols: []tc{col(tDbl, 1.0, 2.0)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], false), nil },
			want: rows("false|false")},
		{name: "IS TRUE", cols: []tc{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, false) },
			want: rows("true|false|false"), text: "(a IS TRUE)"},
		{name: "IS NOT TRUE", cols: []tc{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, true) },
			want: rows("false|true|true"), text: "(a IS NOT TRUE)"},
		{name: "IS FALSE", cols: []tc{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], false, false) },
			want: rows("false|true|false")},
		{name: "IS NOT FALSE", cols: []tc{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], false, true) },
			want: rows("true|false|true")},
		{name: "IS TRUE of NULL literal", cols: []tc{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(&Const{T: tNull}, true, false) },
			want: rows("false|false|false")},
		{name: "IS TRUE of int", cols: []tc{col(tBig, 1)}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, false) },
			err: "IS TRUE expects BOOLEAN, got BIGINT"},
	})
}

func TestScalarIn(t *testing.T) {
	in := func(not bool, items ...any) func(c []Expr) (Expr, error) {
		return func(c []Expr) (Expr, error) {
			var list []Expr
			for _, it := range items {
				switch x := it.(type) {
				case nil:
					list = append(list, &Const{T: tNull})
				case int:
					list = append(list, lit(t, x, tBig))
				case string:
					list = append(list, lit(t, x, tStr))
				case Expr:
					list = append(list, x)
				case func([]Expr) Expr:
					list = append(list, x(c))
				}
			}
			return NewIn(c[0], list, not)
		}
	}
	colB := func(c []Expr) Expr { return c[1] }
	ints := col(tInt, 1, 2, 3, nil)
	runScalarCases(t, []scalarCase{
		{name: "IN", cols: []tc{ints}, build: in(false, 1, 2), want: rows("true|true|false|NULL"), text: "(a IN (1, 2))"},
		{name: "IN with NULL item", cols: []tc{ints}, build: in(false, 1, nil), want: rows("true|NULL|NULL|NULL")},
		{name: "NOT IN", cols: []tc{ints}, build: in(true, 1, 2), want: rows("false|false|true|NULL"), text: "(a NOT IN (1, 2))"},
		{name: "NOT IN with NULL item", cols: []tc{ints}, build: in(true, 1, nil), want: rows("false|NULL|NULL|NULL")},
		{name: "IN with a column item", cols: []tc{ints, col(tBig, 5, 2, 5, 5)}, build: in(false, 1, colB),
			want: rows("true|true|false|NULL"), text: "(a IN (1, b))"},
		{name: "NOT IN with a column item", cols: []tc{ints, col(tBig, 5, 2, nil, 5)}, build: in(true, 1, colB),
			want: rows("false|false|NULL|NULL")},
		{name: "IN strings", cols: []tc{col(tStr, "a", "b", nil)}, build: in(false, "b", "c"), want: rows("false|true|NULL")},
		{name: "IN doubles widen", cols: []tc{col(tDbl, 1.0, 1.5, -0.0)}, build: in(false, 1, 0), want: rows("true|false|true")},
		{name: "IN date literals", cols: []tc{col(tDate, "2024-01-01", "2024-01-02")}, build: in(false, "2024-01-02"), want: rows("false|true")},
		{name: "IN type mismatch", cols: []tc{col(tStr, "a")}, build: in(false, 1), err: "cannot compare VARCHAR with BIGINT"},
		{name: "IN empty", cols: []tc{ints}, build: in(false), err: "must not be empty"},
	})
}

func TestScalarCase(t *testing.T) {
	x := col(tBig, 1, 2, 3, nil)
	runScalarCases(t, []scalarCase{
		{name: "searched", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			w1, _ := NewBinary("=", c[0], lit(t, 1, tBig))
			w2, _ := NewBinary("<", c[0], lit(t, 3, tBig))
			return NewCase(nil, []Expr{w1, w2}, []Expr{lit(t, "one", tStr), lit(t, "small", tStr)}, lit(t, "big", tStr))
		}, want: rows("one|small|big|big"), typ: "VARCHAR", text: "CASE WHEN (a = 1) THEN 'one' WHEN (a < 3) THEN 'small' ELSE 'big' END"},
		{name: "simple without ELSE", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(c[0], []Expr{lit(t, 1, tBig), lit(t, 3, tBig)}, []Expr{lit(t, 10, tInt), lit(t, 30, tInt)}, nil)
		}, want: rows("10|NULL|30|NULL"), typ: "INT", text: "CASE a WHEN 1 THEN 10 WHEN 3 THEN 30 END"},
		{name: "branches widen", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary(">", c[0], lit(t, 1, tBig))
			return NewCase(nil, []Expr{w}, []Expr{lit(t, 1.5, tDbl)}, c[0])
		}, want: rows("1|1.5|1.5|NULL"), typ: "DOUBLE"},
		{name: "THEN from columns", cols: []tc{x, col(tStr, "p", "q", "r", "s")}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary(">=", c[0], lit(t, 2, tBig))
			u, _ := NewFunc("upper", []Expr{c[1]})
			return NewCase(nil, []Expr{w}, []Expr{u}, c[1])
		}, want: rows("p|Q|R|s")},
		{name: "guarded division is lazy", cols: []tc{col(tBig, 10, 10, nil), col(tBig, 0, 5, 0)}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary("=", c[1], lit(t, 0, tBig))
			q, _ := NewBinary("/", c[0], c[1])
			return NewCase(nil, []Expr{w}, []Expr{lit(t, -1, tBig)}, q)
		}, want: rows("-1|2|-1")},
		{name: "later WHEN evaluated only on undecided rows", cols: []tc{col(tBig, 0, 5)}, build: func(c []Expr) (Expr, error) {
			w1, _ := NewBinary("=", c[0], lit(t, 0, tBig))
			q, _ := NewBinary("/", lit(t, 10, tBig), c[0])
			w2, _ := NewBinary("=", q, lit(t, 2, tBig))
			return NewCase(nil, []Expr{w1, w2}, []Expr{lit(t, "zero", tStr), lit(t, "five", tStr)}, nil)
		}, want: rows("zero|five")},
		{name: "error in a selected branch", cols: []tc{col(tBig, 1, 0)}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary("=", c[0], lit(t, 0, tBig))
			q, _ := NewBinary("/", lit(t, 1, tBig), c[0])
			return NewCase(nil, []Expr{w}, []Expr{q}, nil)
		}, err: "division by zero"},
		{name: "date literal branch", cols: []tc{col(tDate, "2024-01-01", nil)}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{NewIsNull(c[0], false)}, []Expr{lit(t, "1970-01-01", tStr)}, c[0])
		}, want: rows("2024-01-01|1970-01-01"), typ: "DATE"},
		{name: "incompatible branches", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{&Const{V: true, T: tBool}}, []Expr{c[0]}, &Const{V: true, T: tBool})
		}, err: "incompatible types BIGINT and BOOLEAN"},
		{name: "non-boolean WHEN", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{c[0]}, []Expr{c[0]}, nil)
		}, err: "expects BOOLEAN"},
		{name: "simple CASE type mismatch", cols: []tc{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(c[0], []Expr{lit(t, "a", tStr)}, []Expr{c[0]}, nil)
		}, err: "cannot compare BIGINT with VARCHAR"},
	})
}
