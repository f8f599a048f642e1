package exec

import (
	"testing"
)

func TestScalarCompare(t *testing.T) {
	ints := []scalarCol{scol(tyBig, 1, 2, 3, nil, 2), scol(tyBig, 2, 2, 2, 2, nil)}
	cases := []scalarCase{
		{name: "=", cols: ints, build: sbin("="), want: srows("false|true|false|NULL|NULL"), typ: "BOOLEAN", text: "(a = b)"},
		{name: "<>", cols: ints, build: sbin("<>"), want: srows("true|false|true|NULL|NULL")},
		{name: "!= is <>", cols: ints, build: sbin("!="), want: srows("true|false|true|NULL|NULL"), text: "(a <> b)"},
		{name: "<", cols: ints, build: sbin("<"), want: srows("true|false|false|NULL|NULL")},
		{name: "<=", cols: ints, build: sbin("<="), want: srows("true|true|false|NULL|NULL")},
		{name: ">", cols: ints, build: sbin(">"), want: srows("false|false|true|NULL|NULL")},
		{name: ">=", cols: ints, build: sbin(">="), want: srows("false|true|true|NULL|NULL")},
		{name: "int vs double widens", cols: []scalarCol{scol(tyInt, 1, 2), scol(tyDbl, 1.5, 2.0)},
			build: sbin("<"), want: srows("true|false")},
		{name: "decimal scales compare exactly", cols: []scalarCol{scol(sdec(3, 2), "1.50", "2.00", "-0.01"), scol(sdec(2, 1), "1.5", "2.1", "0.0")},
			build: sbin("="), want: srows("true|false|false")},
		{name: "decimal vs bigint", cols: []scalarCol{scol(sdec(5, 2), "2.00", "2.01"), scol(tyBig, 2, 2)},
			build: sbin("="), want: srows("true|false")},
		{name: "decimal vs double", cols: []scalarCol{scol(sdec(5, 2), "0.25"), scol(tyDbl, 0.25)},
			build: sbin("="), want: srows("true")},
		{name: "varchar is byte-wise", cols: []scalarCol{scol(tyStr, "a", "B", "é", "", nil), scol(tyStr, "b", "a", "z", "a", "a")},
			build: sbin("<"), want: srows("true|true|false|true|NULL")},
		{name: "varchar equality", cols: []scalarCol{scol(tyStr, "abc", "abc", "ab")},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], slit(t, "abc", tyStr)) },
			want:  srows("true|true|false"), text: "(a = 'abc')"},
		{name: "column vs constant on the left", cols: []scalarCol{scol(tyBig, 1, 5, 9)},
			build: func(c []Expr) (Expr, error) { return NewBinary("<", slit(t, 5, tyBig), c[0]) },
			want:  srows("false|false|true")},
		{name: "varchar literal vs date is parsed", cols: []scalarCol{scol(tyDate, "1969-12-31", "1970-01-02", nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary(">", c[0], slit(t, "1970-01-01", tyStr)) },
			want:  srows("false|true|NULL")},
		{name: "varchar literal vs timestamp is parsed", cols: []scalarCol{scol(tyTS, "2024-01-01 10:00:00", "2024-01-01 09:59:59.999")},
			build: func(c []Expr) (Expr, error) { return NewBinary("<=", slit(t, "2024-01-01 10:00", tyStr), c[0]) },
			want:  srows("true|false")},
		{name: "bad date literal", cols: []scalarCol{scol(tyDate, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], slit(t, "yesterday", tyStr)) },
			err:   `invalid DATE value "yesterday"`},
		{name: "date vs timestamp", cols: []scalarCol{scol(tyDate, "1970-01-01", "1970-01-01"), scol(tyTS, "1970-01-01 00:00:00", "1970-01-01 00:00:00.001")},
			build: sbin("="), want: srows("true|false")},
		{name: "booleans", cols: []scalarCol{scol(tyBool, true, false, true, nil), scol(tyBool, false, false, true, true)},
			build: sbin(">"), want: srows("true|false|false|NULL")},
		{name: "interval", cols: []scalarCol{scol(tyIv, "1 s"), scol(tyIv, "1000 ms")},
			build: sbin("="), want: srows("true")},
		{name: "NULL literal", cols: []scalarCol{scol(tyStr, "a")},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], &Const{T: tyNull}) },
			want:  srows("NULL")},
		{name: "varchar vs bigint", cols: []scalarCol{scol(tyStr, "1"), scol(tyBig, 1)},
			build: sbin("="), err: "cannot compare VARCHAR with BIGINT"},
		{name: "varchar literal vs bigint", cols: []scalarCol{scol(tyBig, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("=", c[0], slit(t, "1", tyStr)) },
			err:   "cannot compare BIGINT with VARCHAR"},
		{name: "boolean vs int", cols: []scalarCol{scol(tyBool, true), scol(tyInt, 1)},
			build: sbin("="), err: "cannot compare BOOLEAN with INT"},
		{name: "date vs interval", cols: []scalarCol{scol(tyDate, 1), scol(tyIv, 1)},
			build: sbin("<"), err: "cannot compare DATE with INTERVAL"},
	}
	runScalarCases(t, cases)
}

func TestScalarLogicTruthTables(t *testing.T) {
	// l and r enumerate all nine pairs of TRUE, FALSE, NULL.
	l := scol(tyBool, true, true, true, false, false, false, nil, nil, nil)
	r := scol(tyBool, true, false, nil, true, false, nil, true, false, nil)
	runScalarCases(t, []scalarCase{
		{name: "AND", cols: []scalarCol{l, r}, build: sbin("AND"),
			want: srows("true|false|NULL|false|false|false|NULL|false|NULL"), text: "(a AND b)"},
		{name: "OR", cols: []scalarCol{l, r}, build: sbin("or"),
			want: srows("true|true|true|true|false|NULL|true|NULL|NULL"), text: "(a OR b)"},
		{name: "NOT", cols: []scalarCol{scol(tyBool, true, false, nil)}, build: func(c []Expr) (Expr, error) { return NewNot(c[0]) },
			want: srows("false|true|NULL"), text: "(NOT a)"},
		{name: "NULL literal AND", cols: []scalarCol{scol(tyBool, true, false, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("AND", &Const{T: tyNull}, c[0]) },
			want:  srows("NULL|false|NULL")},
		{name: "constant OR", cols: []scalarCol{scol(tyBool, true, false, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("OR", c[0], &Const{V: true, T: tyBool}) },
			want:  srows("true|true|true")},
		{name: "AND needs booleans", cols: []scalarCol{scol(tyBig, 1), scol(tyBool, true)},
			build: sbin("AND"), err: "AND expects BOOLEAN operands, got BIGINT"},
		{name: "NOT needs a boolean", cols: []scalarCol{scol(tyStr, "x")},
			build: func(c []Expr) (Expr, error) { return NewNot(c[0]) }, err: "NOT expects BOOLEAN operands, got VARCHAR"},
		{name: "AND short-circuits errors per row", cols: []scalarCol{scol(tyBig, 4, 4, 4), scol(tyBig, 0, 2, 8)},
			build: func(c []Expr) (Expr, error) {
				nz, _ := NewBinary("<>", c[1], slit(t, 0, tyBig))
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, slit(t, 1, tyBig))
				return NewBinary("AND", nz, gt)
			}, want: srows("false|true|false")},
		{name: "OR short-circuits errors per row", cols: []scalarCol{scol(tyBig, 4, 4), scol(tyBig, 0, 2)},
			build: func(c []Expr) (Expr, error) {
				z, _ := NewBinary("=", c[1], slit(t, 0, tyBig))
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, slit(t, 1, tyBig))
				return NewBinary("OR", z, gt)
			}, want: srows("true|true")},
		{name: "AND still fails on rows it needs", cols: []scalarCol{scol(tyBig, 4), scol(tyBig, 0)},
			build: func(c []Expr) (Expr, error) {
				q, _ := NewBinary("/", c[0], c[1])
				gt, _ := NewBinary(">", q, slit(t, 1, tyBig))
				return NewBinary("AND", &Const{V: true, T: tyBool}, gt)
			}, err: "division by zero"},
	})
}

func TestScalarIsNullAndIsBool(t *testing.T) {
	b := scol(tyBool, true, false, nil)
	runScalarCases(t, []scalarCase{
		{name: "IS NULL", cols: []scalarCol{scol(tyBig, 1, nil)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], false), nil },
			want: srows("false|true"), text: "(a IS NULL)"},
		{name: "IS NOT NULL", cols: []scalarCol{scol(tyStr, "x", nil)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], true), nil },
			want: srows("true|false"), text: "(a IS NOT NULL)"},
		{name: "IS NULL of a no-null column", cols: []scalarCol{scol(tyDbl, 1.0, 2.0)}, build: func(c []Expr) (Expr, error) { return NewIsNull(c[0], false), nil },
			want: srows("false|false")},
		{name: "IS TRUE", cols: []scalarCol{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, false) },
			want: srows("true|false|false"), text: "(a IS TRUE)"},
		{name: "IS NOT TRUE", cols: []scalarCol{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, true) },
			want: srows("false|true|true"), text: "(a IS NOT TRUE)"},
		{name: "IS FALSE", cols: []scalarCol{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], false, false) },
			want: srows("false|true|false")},
		{name: "IS NOT FALSE", cols: []scalarCol{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], false, true) },
			want: srows("true|false|true")},
		{name: "IS TRUE of NULL literal", cols: []scalarCol{b}, build: func(c []Expr) (Expr, error) { return NewIsBool(&Const{T: tyNull}, true, false) },
			want: srows("false|false|false")},
		{name: "IS TRUE of int", cols: []scalarCol{scol(tyBig, 1)}, build: func(c []Expr) (Expr, error) { return NewIsBool(c[0], true, false) },
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
					list = append(list, &Const{T: tyNull})
				case int:
					list = append(list, slit(t, x, tyBig))
				case string:
					list = append(list, slit(t, x, tyStr))
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
	ints := scol(tyInt, 1, 2, 3, nil)
	runScalarCases(t, []scalarCase{
		{name: "IN", cols: []scalarCol{ints}, build: in(false, 1, 2), want: srows("true|true|false|NULL"), text: "(a IN (1, 2))"},
		{name: "IN with NULL item", cols: []scalarCol{ints}, build: in(false, 1, nil), want: srows("true|NULL|NULL|NULL")},
		{name: "NOT IN", cols: []scalarCol{ints}, build: in(true, 1, 2), want: srows("false|false|true|NULL"), text: "(a NOT IN (1, 2))"},
		{name: "NOT IN with NULL item", cols: []scalarCol{ints}, build: in(true, 1, nil), want: srows("false|NULL|NULL|NULL")},
		{name: "IN with a column item", cols: []scalarCol{ints, scol(tyBig, 5, 2, 5, 5)}, build: in(false, 1, colB),
			want: srows("true|true|false|NULL"), text: "(a IN (1, b))"},
		{name: "NOT IN with a column item", cols: []scalarCol{ints, scol(tyBig, 5, 2, nil, 5)}, build: in(true, 1, colB),
			want: srows("false|false|NULL|NULL")},
		{name: "IN strings", cols: []scalarCol{scol(tyStr, "a", "b", nil)}, build: in(false, "b", "c"), want: srows("false|true|NULL")},
		{name: "IN doubles widen", cols: []scalarCol{scol(tyDbl, 1.0, 1.5, -0.0)}, build: in(false, 1, 0), want: srows("true|false|true")},
		{name: "IN date literals", cols: []scalarCol{scol(tyDate, "2024-01-01", "2024-01-02")}, build: in(false, "2024-01-02"), want: srows("false|true")},
		{name: "IN type mismatch", cols: []scalarCol{scol(tyStr, "a")}, build: in(false, 1), err: "cannot compare VARCHAR with BIGINT"},
		{name: "IN empty", cols: []scalarCol{ints}, build: in(false), err: "must not be empty"},
	})
}

func TestScalarCase(t *testing.T) {
	x := scol(tyBig, 1, 2, 3, nil)
	runScalarCases(t, []scalarCase{
		{name: "searched", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			w1, _ := NewBinary("=", c[0], slit(t, 1, tyBig))
			w2, _ := NewBinary("<", c[0], slit(t, 3, tyBig))
			return NewCase(nil, []Expr{w1, w2}, []Expr{slit(t, "one", tyStr), slit(t, "small", tyStr)}, slit(t, "big", tyStr))
		}, want: srows("one|small|big|big"), typ: "VARCHAR", text: "CASE WHEN (a = 1) THEN 'one' WHEN (a < 3) THEN 'small' ELSE 'big' END"},
		{name: "simple without ELSE", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(c[0], []Expr{slit(t, 1, tyBig), slit(t, 3, tyBig)}, []Expr{slit(t, 10, tyInt), slit(t, 30, tyInt)}, nil)
		}, want: srows("10|NULL|30|NULL"), typ: "INT", text: "CASE a WHEN 1 THEN 10 WHEN 3 THEN 30 END"},
		{name: "branches widen", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary(">", c[0], slit(t, 1, tyBig))
			return NewCase(nil, []Expr{w}, []Expr{slit(t, 1.5, tyDbl)}, c[0])
		}, want: srows("1|1.5|1.5|NULL"), typ: "DOUBLE"},
		{name: "THEN from columns", cols: []scalarCol{x, scol(tyStr, "p", "q", "r", "s")}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary(">=", c[0], slit(t, 2, tyBig))
			u, _ := NewFunc("upper", []Expr{c[1]})
			return NewCase(nil, []Expr{w}, []Expr{u}, c[1])
		}, want: srows("p|Q|R|s")},
		{name: "guarded division is lazy", cols: []scalarCol{scol(tyBig, 10, 10, nil), scol(tyBig, 0, 5, 0)}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary("=", c[1], slit(t, 0, tyBig))
			q, _ := NewBinary("/", c[0], c[1])
			return NewCase(nil, []Expr{w}, []Expr{slit(t, -1, tyBig)}, q)
		}, want: srows("-1|2|-1")},
		{name: "later WHEN evaluated only on undecided rows", cols: []scalarCol{scol(tyBig, 0, 5)}, build: func(c []Expr) (Expr, error) {
			w1, _ := NewBinary("=", c[0], slit(t, 0, tyBig))
			q, _ := NewBinary("/", slit(t, 10, tyBig), c[0])
			w2, _ := NewBinary("=", q, slit(t, 2, tyBig))
			return NewCase(nil, []Expr{w1, w2}, []Expr{slit(t, "zero", tyStr), slit(t, "five", tyStr)}, nil)
		}, want: srows("zero|five")},
		{name: "error in a selected branch", cols: []scalarCol{scol(tyBig, 1, 0)}, build: func(c []Expr) (Expr, error) {
			w, _ := NewBinary("=", c[0], slit(t, 0, tyBig))
			q, _ := NewBinary("/", slit(t, 1, tyBig), c[0])
			return NewCase(nil, []Expr{w}, []Expr{q}, nil)
		}, err: "division by zero"},
		{name: "date literal branch", cols: []scalarCol{scol(tyDate, "2024-01-01", nil)}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{NewIsNull(c[0], false)}, []Expr{slit(t, "1970-01-01", tyStr)}, c[0])
		}, want: srows("2024-01-01|1970-01-01"), typ: "DATE"},
		{name: "incompatible branches", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{&Const{V: true, T: tyBool}}, []Expr{c[0]}, &Const{V: true, T: tyBool})
		}, err: "incompatible types BIGINT and BOOLEAN"},
		{name: "non-boolean WHEN", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(nil, []Expr{c[0]}, []Expr{c[0]}, nil)
		}, err: "expects BOOLEAN"},
		{name: "simple CASE type mismatch", cols: []scalarCol{x}, build: func(c []Expr) (Expr, error) {
			return NewCase(c[0], []Expr{slit(t, "a", tyStr)}, []Expr{c[0]}, nil)
		}, err: "cannot compare BIGINT with VARCHAR"},
	})
}
