package exec

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

var (
	tyInt   = types.TInt
	tyBig   = types.TBigInt
	tyDbl   = types.TDouble
	tyStr   = types.TVarchar
	tyBool  = types.TBool
	tyDate  = types.TDate
	tyTS    = types.TTimestamp
	tyIv    = types.TInterval
	tyNull  = types.TNull
	sdec    = types.DecimalOf
	sMaxI64 = int64(math.MaxInt64)
	sMinI64 = int64(math.MinInt64)
)

func TestScalarArithInteger(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "int+int stays INT", cols: []scalarCol{scol(tyInt, 1, nil, 2147483647, -5), scol(tyInt, 2, 3, 0, 5)},
			build: sbin("+"), want: srows("3|NULL|2147483647|0"), typ: "INT", text: "(a + b)"},
		{name: "int+int overflows at int32", cols: []scalarCol{scol(tyInt, 1, 2147483647), scol(tyInt, 1, 1)},
			build: sbin("+"), err: "integer overflow"},
		{name: "int-int underflow", cols: []scalarCol{scol(tyInt, -2147483648), scol(tyInt, 1)},
			build: sbin("-"), err: "integer overflow"},
		{name: "int*int overflow", cols: []scalarCol{scol(tyInt, 65536), scol(tyInt, 65536)},
			build: sbin("*"), err: "integer overflow"},
		{name: "int/int MinInt32 / -1", cols: []scalarCol{scol(tyInt, -2147483648), scol(tyInt, -1)},
			build: sbin("/"), err: "integer overflow"},
		{name: "int+bigint is BIGINT", cols: []scalarCol{scol(tyInt, 2147483647), scol(tyBig, 1)},
			build: sbin("+"), want: srows("2147483648"), typ: "BIGINT"},
		{name: "bigint add overflow", cols: []scalarCol{scol(tyBig, 1, sMaxI64), scol(tyBig, 1, 1)},
			build: sbin("+"), err: "integer overflow"},
		{name: "bigint sub overflow", cols: []scalarCol{scol(tyBig, sMinI64), scol(tyBig, 1)},
			build: sbin("-"), err: "integer overflow"},
		{name: "bigint mul overflow", cols: []scalarCol{scol(tyBig, int64(1)<<62), scol(tyBig, 2)},
			build: sbin("*"), err: "integer overflow"},
		{name: "bigint mul to MinInt64 is fine", cols: []scalarCol{scol(tyBig, -(int64(1) << 62), 3037000499), scol(tyBig, 2, 3037000499)},
			build: sbin("*"), want: srows("-9223372036854775808|9223372030926249001")},
		{name: "bigint mul negative overflow", cols: []scalarCol{scol(tyBig, -3037000500), scol(tyBig, 3037000500)},
			build: sbin("*"), err: "integer overflow"},
		{name: "bigint div MinInt64 / -1", cols: []scalarCol{scol(tyBig, sMinI64), scol(tyBig, -1)},
			build: sbin("/"), err: "integer overflow"},
		{name: "division truncates toward zero", cols: []scalarCol{scol(tyBig, 7, -7, 7, -7, nil), scol(tyBig, 2, 2, -2, -2, 2)},
			build: sbin("/"), want: srows("3|-3|-3|3|NULL")},
		{name: "modulo takes the dividend's sign", cols: []scalarCol{scol(tyBig, 7, -7, 7, -7, sMinI64), scol(tyBig, 2, 2, -2, -2, -1)},
			build: sbin("%"), want: srows("1|-1|1|-1|0")},
		{name: "division by zero", cols: []scalarCol{scol(tyBig, 1, 2), scol(tyBig, 1, 0)},
			build: sbin("/"), err: "division by zero"},
		{name: "modulo by zero", cols: []scalarCol{scol(tyInt, 1), scol(tyInt, 0)},
			build: sbin("%"), err: "division by zero"},
		{name: "division by zero under NULL is NULL", cols: []scalarCol{scol(tyBig, nil, 4), scol(tyBig, 0, 2)},
			build: sbin("/"), want: srows("NULL|2")},
		{name: "division by NULL zero", cols: []scalarCol{scol(tyBig, 1, 4), scol(tyBig, nil, 2)},
			build: sbin("/"), want: srows("NULL|2")},
		{name: "column * constant", cols: []scalarCol{scol(tyBig, 1, nil, -3)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", c[0], slit(t, 2, tyBig)) },
			want:  srows("2|NULL|-6"), text: "(a * 2)"},
		{name: "constant - column", cols: []scalarCol{scol(tyBig, 1, nil, -3)},
			build: func(c []Expr) (Expr, error) { return NewBinary("-", slit(t, 10, tyBig), c[0]) },
			want:  srows("9|NULL|13")},
		{name: "constant + column", cols: []scalarCol{scol(tyBig, 1, nil, sMaxI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", slit(t, -1, tyBig), c[0]) },
			want:  srows("0|NULL|9223372036854775806")},
		{name: "constant * column overflow", cols: []scalarCol{scol(tyBig, 1, sMaxI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", slit(t, 2, tyBig), c[0]) },
			err:   "integer overflow"},
		{name: "constant - column overflow", cols: []scalarCol{scol(tyBig, 1, sMinI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("-", slit(t, 0, tyBig), c[0]) },
			err:   "integer overflow"},
		{name: "constant op constant", cols: []scalarCol{scol(tyBig, 1, 2)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", slit(t, 3, tyBig), slit(t, 4, tyInt)) },
			want:  srows("12|12")},
		{name: "NULL constant operand", cols: []scalarCol{scol(tyBig, 1, 2)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", c[0], &Const{T: tyNull}) },
			want:  srows("NULL|NULL"), typ: "BIGINT"},
		{name: "constant / zero constant", cols: []scalarCol{scol(tyBig, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("/", slit(t, 1, tyBig), slit(t, 0, tyBig)) },
			err:   "division by zero"},
		{name: "VARCHAR + BIGINT", cols: []scalarCol{scol(tyStr, "a"), scol(tyBig, 1)},
			build: sbin("+"), err: "cannot apply + to VARCHAR and BIGINT"},
		{name: "BOOLEAN * INT", cols: []scalarCol{scol(tyBool, true), scol(tyInt, 1)},
			build: sbin("*"), err: "cannot apply * to BOOLEAN and INT"},
		{name: "unknown operator", cols: []scalarCol{scol(tyBig, 1), scol(tyBig, 1)},
			build: sbin("^"), err: "unknown operator ^"},
	})
}

// Overflow and division by zero under a null bit must not be reported: the value under a
// NULL is unspecified.
func TestScalarArithGarbageUnderNulls(t *testing.T) {
	a := NewInt64([]int64{sMaxI64, 1, sMinI64}, []bool{false, true, false})
	z := NewInt64([]int64{1, 1, 0}, nil)
	b := &Batch{N: 3, Cols: []arrow.Array{a, z}}
	ca := &ColRef{Idx: 0, T: tyBig, Name: "a"}
	cz := &ColRef{Idx: 1, T: tyBig, Name: "z"}
	for _, op := range []string{"+", "*", "/", "%", "-"} {
		e, err := NewBinary(op, ca, cz)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sevalDisplay(e, b)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if got[0] != "NULL" || got[2] != "NULL" {
			t.Fatalf("%s: %v", op, got)
		}
	}
	// The overflowing row itself, once valid, is an error.
	a2 := NewInt64([]int64{sMaxI64, 1}, nil)
	e, _ := NewBinary("+", ca, cz)
	if _, err := e.Eval(&Batch{N: 2, Cols: []arrow.Array{a2, NewInt64([]int64{1, 1}, nil)}}); err == nil {
		t.Fatal("want overflow")
	}
}

func TestScalarArithDouble(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "double + bigint", cols: []scalarCol{scol(tyDbl, 1.5, nil), scol(tyBig, 2, 2)},
			build: sbin("+"), want: srows("3.5|NULL"), typ: "DOUBLE"},
		{name: "double ops", cols: []scalarCol{scol(tyDbl, 7.5, 7.5, 7.5, -7.5), scol(tyDbl, 2.0, 2.0, 2.0, 2.0)},
			build: func(c []Expr) (Expr, error) {
				sum, _ := NewBinary("-", c[0], c[1])
				return NewBinary("*", sum, c[1])
			}, want: srows("11|11|11|-19")},
		{name: "double division", cols: []scalarCol{scol(tyDbl, 1.0, -3.0), scol(tyDbl, 4.0, 2.0)},
			build: sbin("/"), want: srows("0.25|-1.5")},
		{name: "double modulo", cols: []scalarCol{scol(tyDbl, 7.5, -7.5), scol(tyDbl, 2.0, 2.0)},
			build: sbin("%"), want: srows("1.5|-1.5")},
		{name: "double division by zero is an error", cols: []scalarCol{scol(tyDbl, 1.0), scol(tyDbl, 0.0)},
			build: sbin("/"), err: "division by zero"},
		{name: "double division by NULL zero", cols: []scalarCol{scol(tyDbl, 1.0), scol(tyDbl, nil)},
			build: sbin("/"), want: srows("NULL")},
		{name: "double constant layouts", cols: []scalarCol{scol(tyDbl, 2.0, nil, -4.0)},
			build: func(c []Expr) (Expr, error) {
				l, _ := NewBinary("-", slit(t, 1.0, tyDbl), c[0]) // 1 - a
				r, _ := NewBinary("/", c[0], slit(t, 4.0, tyDbl)) // a / 4
				m, _ := NewBinary("*", slit(t, 2.0, tyDbl), r)    // 2 * (a / 4)
				d, _ := NewBinary("/", slit(t, 8.0, tyDbl), c[0]) // 8 / a
				s, _ := NewBinary("+", l, m)
				return NewBinary("+", s, d)
			}, want: srows("4|NULL|1")},
		{name: "double constant / zero column", cols: []scalarCol{scol(tyDbl, 2.0, 0.0)},
			build: func(c []Expr) (Expr, error) { return NewBinary("/", slit(t, 1.0, tyDbl), c[0]) },
			err:   "division by zero"},
		{name: "int / double", cols: []scalarCol{scol(tyInt, 1), scol(tyDbl, 4.0)},
			build: sbin("/"), want: srows("0.25"), typ: "DOUBLE"},
	})
}

func TestScalarArithDecimal(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "+ keeps the larger scale", cols: []scalarCol{scol(sdec(5, 2), "1.25", nil, "-1.25"), scol(sdec(4, 1), "2.5", "1.0", "0.3")},
			build: sbin("+"), want: srows("3.75|NULL|-0.95"), typ: "DECIMAL(6,2)"},
		{name: "- rescales the left side", cols: []scalarCol{scol(sdec(4, 1), "2.5"), scol(sdec(5, 2), "1.25")},
			build: sbin("-"), want: srows("1.25"), typ: "DECIMAL(6,2)"},
		{name: "* adds scales", cols: []scalarCol{scol(sdec(5, 2), "1.25", "-0.01"), scol(sdec(4, 1), "2.5", "0.5")},
			build: sbin("*"), want: srows("3.125|-0.005"), typ: "DECIMAL(9,3)"},
		{name: "decimal * int", cols: []scalarCol{scol(sdec(5, 2), "1.25"), scol(tyInt, 3)},
			build: sbin("*"), want: srows("3.75"), typ: "DECIMAL(15,2)"},
		{name: "decimal + bigint", cols: []scalarCol{scol(sdec(5, 2), "1.25"), scol(tyBig, 1)},
			build: sbin("+"), want: srows("2.25"), typ: "DECIMAL(18,2)"},
		{name: "int + decimal constant", cols: []scalarCol{scol(tyInt, 1, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", c[0], slit(t, "0.5", sdec(2, 1))) },
			want:  srows("1.5|NULL"), typ: "DECIMAL(12,1)", text: "(a + 0.5)"},
		{name: "decimal / decimal is DOUBLE", cols: []scalarCol{scol(sdec(5, 2), "1.25"), scol(sdec(3, 1), "0.5")},
			build: sbin("/"), want: srows("2.5"), typ: "DOUBLE"},
		{name: "decimal / zero", cols: []scalarCol{scol(sdec(5, 2), "1.25"), scol(sdec(3, 1), "0.0")},
			build: sbin("/"), err: "division by zero"},
		{name: "decimal % decimal", cols: []scalarCol{scol(sdec(3, 1), "5.5", "-5.5"), scol(tyInt, 2, 2)},
			build: sbin("%"), want: srows("1.5|-1.5"), typ: "DECIMAL(11,1)"},
		{name: "decimal + double is DOUBLE", cols: []scalarCol{scol(sdec(3, 1), "0.5"), scol(tyDbl, 0.25)},
			build: sbin("+"), want: srows("0.75"), typ: "DOUBLE"},
		{name: "decimal overflow", cols: []scalarCol{scol(sdec(18, 0), "999999999999999999"), scol(tyInt, 1)},
			build: sbin("+"), err: "DECIMAL overflow"},
		{name: "decimal * overflow", cols: []scalarCol{scol(sdec(18, 2), "9999999999.99"), scol(sdec(18, 2), "9999999999.99")},
			build: sbin("*"), err: "DECIMAL overflow"},
		{name: "scale beyond 18", cols: []scalarCol{scol(sdec(18, 10), "1"), scol(sdec(18, 10), "1")},
			build: sbin("*"), err: "scale 20 exceeds 18"},
		{name: "decimal neg", cols: []scalarCol{scol(sdec(5, 2), "1.25", nil)},
			build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) }, want: srows("-1.25|NULL"), typ: "DECIMAL(5,2)", text: "(- a)"},
	})
}

func TestScalarArithTime(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "timestamp + interval", cols: []scalarCol{scol(tyTS, "1969-12-31 23:30:00", nil), scol(tyIv, "1 h", "1 h")},
			build: sbin("+"), want: srows("1970-01-01 00:30:00|NULL"), typ: "TIMESTAMP(3)"},
		{name: "interval + timestamp", cols: []scalarCol{scol(tyIv, "1 s"), scol(tyTS, "1969-12-31 23:59:59.5")},
			build: sbin("+"), want: srows("1970-01-01 00:00:00.500"), typ: "TIMESTAMP(3)"},
		{name: "timestamp - interval", cols: []scalarCol{scol(tyTS, "1970-01-01 00:00:00"), scol(tyIv, "5 s")},
			build: sbin("-"), want: srows("1969-12-31 23:59:55")},
		{name: "date + interval is TIMESTAMP", cols: []scalarCol{scol(tyDate, "1969-12-31"), scol(tyIv, "90 min")},
			build: sbin("+"), want: srows("1969-12-31 01:30:00"), typ: "TIMESTAMP(3)"},
		{name: "date - interval", cols: []scalarCol{scol(tyDate, "1970-01-01"), scol(tyIv, "1 ms")},
			build: sbin("-"), want: srows("1969-12-31 23:59:59.999")},
		{name: "date + int days", cols: []scalarCol{scol(tyDate, "1969-12-31", "2024-02-28"), scol(tyInt, 1, 1)},
			build: sbin("+"), want: srows("1970-01-01|2024-02-29"), typ: "DATE"},
		{name: "int + date", cols: []scalarCol{scol(tyBig, -1), scol(tyDate, "1970-01-01")},
			build: sbin("+"), want: srows("1969-12-31"), typ: "DATE"},
		{name: "date - int", cols: []scalarCol{scol(tyDate, "2024-03-01"), scol(tyInt, 1)},
			build: sbin("-"), want: srows("2024-02-29")},
		{name: "timestamp - timestamp is INTERVAL", cols: []scalarCol{scol(tyTS, "1970-01-01 00:30:00"), scol(tyTS, "1969-12-31 23:00:00")},
			build: sbin("-"), want: srows("INTERVAL '90' MINUTE"), typ: "INTERVAL"},
		{name: "timestamp - date", cols: []scalarCol{scol(tyTS, "1970-01-02 01:00:00"), scol(tyDate, "1970-01-01")},
			build: sbin("-"), want: srows("INTERVAL '25' HOUR"), typ: "INTERVAL"},
		{name: "date - date is days", cols: []scalarCol{scol(tyDate, "1970-01-01"), scol(tyDate, "1969-12-01")},
			build: sbin("-"), want: srows("31"), typ: "BIGINT"},
		{name: "interval arithmetic", cols: []scalarCol{scol(tyIv, "1 h"), scol(tyIv, "30 min")},
			build: func(c []Expr) (Expr, error) {
				s, _ := NewBinary("+", c[0], c[1])
				m, _ := NewBinary("*", s, slit(t, 2, tyBig))
				return NewBinary("/", m, slit(t, 3, tyInt))
			}, want: srows("INTERVAL '1' HOUR"), typ: "INTERVAL"},
		{name: "int * interval", cols: []scalarCol{scol(tyInt, 3), scol(tyIv, "2 s")},
			build: sbin("*"), want: srows("INTERVAL '6' SECOND")},
		{name: "neg interval", cols: []scalarCol{scol(tyIv, "2 s")},
			build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) }, want: srows("INTERVAL '-2' SECOND")},
		{name: "timestamp out of range", cols: []scalarCol{scol(tyTS, sMaxI64-1), scol(tyIv, "1 d")},
			build: sbin("+"), err: "timestamp out of range"},
		{name: "timestamp + timestamp", cols: []scalarCol{scol(tyTS, 1), scol(tyTS, 1)},
			build: sbin("+"), err: "cannot apply + to TIMESTAMP(3) and TIMESTAMP(3)"},
		{name: "date * int", cols: []scalarCol{scol(tyDate, 1), scol(tyInt, 1)},
			build: sbin("*"), err: "cannot apply * to DATE and INT"},
		{name: "interval + int", cols: []scalarCol{scol(tyIv, 1), scol(tyInt, 1)},
			build: sbin("+"), err: "cannot apply + to INTERVAL and INT"},
	})
}

func TestScalarNeg(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "bigint", cols: []scalarCol{scol(tyBig, 1, nil, -5)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			want: srows("-1|NULL|5"), typ: "BIGINT"},
		{name: "double", cols: []scalarCol{scol(tyDbl, 1.5, nil)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			want: srows("-1.5|NULL")},
		{name: "min bigint", cols: []scalarCol{scol(tyBig, sMinI64)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "integer overflow"},
		{name: "min int", cols: []scalarCol{scol(tyInt, -2147483648)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "integer overflow"},
		{name: "varchar", cols: []scalarCol{scol(tyStr, "x")}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "cannot apply unary - to VARCHAR"},
	})
}
