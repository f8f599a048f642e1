package exec

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

var (
	tInt   = types.TInt
	tBig   = types.TBigInt
	tDbl   = types.TDouble
	tStr   = types.TVarchar
	tBool  = types.TBool
	tDate  = types.TDate
	tTS    = types.TTimestamp
	tIv    = types.TInterval
	tNull  = types.TNull
	dec    = types.DecimalOf
	maxI64 = int64(math.MaxInt64)
	minI64 = int64(math.MinInt64)
)

func TestScalarArithInteger(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "int+int stays INT", cols: []tc{col(tInt, 1, nil, 2147483647, -5), col(tInt, 2, 3, 0, 5)},
			build: bin("+"), want: rows("3|NULL|2147483647|0"), typ: "INT", text: "(a + b)"},
		{name: "int+int overflows at int32", cols: []tc{col(tInt, 1, 2147483647), col(tInt, 1, 1)},
			build: bin("+"), err: "integer overflow"},
		{name: "int-int underflow", cols: []tc{col(tInt, -2147483648), col(tInt, 1)},
			build: bin("-"), err: "integer overflow"},
		{name: "int*int overflow", cols: []tc{col(tInt, 65536), col(tInt, 65536)},
			build: bin("*"), err: "integer overflow"},
		{name: "int/int MinInt32 / -1", cols: []tc{col(tInt, -2147483648), col(tInt, -1)},
			build: bin("/"), err: "integer overflow"},
		{name: "int+bigint is BIGINT", cols: []tc{col(tInt, 2147483647), col(tBig, 1)},
			build: bin("+"), want: rows("2147483648"), typ: "BIGINT"},
		{name: "bigint add overflow", cols: []tc{col(tBig, 1, maxI64), col(tBig, 1, 1)},
			build: bin("+"), err: "integer overflow"},
		{name: "bigint sub overflow", cols: []tc{col(tBig, minI64), col(tBig, 1)},
			build: bin("-"), err: "integer overflow"},
		{name: "bigint mul overflow", cols: []tc{col(tBig, int64(1)<<62), col(tBig, 2)},
			build: bin("*"), err: "integer overflow"},
		{name: "bigint mul to MinInt64 is fine", cols: []tc{col(tBig, -(int64(1) << 62), 3037000499), col(tBig, 2, 3037000499)},
			build: bin("*"), want: rows("-9223372036854775808|9223372030926249001")},
		{name: "bigint mul negative overflow", cols: []tc{col(tBig, -3037000500), col(tBig, 3037000500)},
			build: bin("*"), err: "integer overflow"},
		{name: "bigint div MinInt64 / -1", cols: []tc{col(tBig, minI64), col(tBig, -1)},
			build: bin("/"), err: "integer overflow"},
		{name: "division truncates toward zero", cols: []tc{col(tBig, 7, -7, 7, -7, nil), col(tBig, 2, 2, -2, -2, 2)},
			build: bin("/"), want: rows("3|-3|-3|3|NULL")},
		{name: "modulo takes the dividend's sign", cols: []tc{col(tBig, 7, -7, 7, -7, minI64), col(tBig, 2, 2, -2, -2, -1)},
			build: bin("%"), want: rows("1|-1|1|-1|0")},
		{name: "division by zero", cols: []tc{col(tBig, 1, 2), col(tBig, 1, 0)},
			build: bin("/"), err: "division by zero"},
		{name: "modulo by zero", cols: []tc{col(tInt, 1), col(tInt, 0)},
			build: bin("%"), err: "division by zero"},
		{name: "division by zero under NULL is NULL", cols: []tc{col(tBig, nil, 4), col(tBig, 0, 2)},
			build: bin("/"), want: rows("NULL|2")},
		{name: "division by NULL zero", cols: []tc{col(tBig, 1, 4), col(tBig, nil, 2)},
			build: bin("/"), want: rows("NULL|2")},
		{name: "column * constant", cols: []tc{col(tBig, 1, nil, -3)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", c[0], lit(t, 2, tBig)) },
			want:  rows("2|NULL|-6"), text: "(a * 2)"},
		{name: "constant - column", cols: []tc{col(tBig, 1, nil, -3)},
			build: func(c []Expr) (Expr, error) { return NewBinary("-", lit(t, 10, tBig), c[0]) },
			want:  rows("9|NULL|13")},
		{name: "constant + column", cols: []tc{col(tBig, 1, nil, maxI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", lit(t, -1, tBig), c[0]) },
			want:  rows("0|NULL|9223372036854775806")},
		{name: "constant * column overflow", cols: []tc{col(tBig, 1, maxI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", lit(t, 2, tBig), c[0]) },
			err:   "integer overflow"},
		{name: "constant - column overflow", cols: []tc{col(tBig, 1, minI64)},
			build: func(c []Expr) (Expr, error) { return NewBinary("-", lit(t, 0, tBig), c[0]) },
			err:   "integer overflow"},
		{name: "constant op constant", cols: []tc{col(tBig, 1, 2)},
			build: func(c []Expr) (Expr, error) { return NewBinary("*", lit(t, 3, tBig), lit(t, 4, tInt)) },
			want:  rows("12|12")},
		{name: "NULL constant operand", cols: []tc{col(tBig, 1, 2)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", c[0], &Const{T: tNull}) },
			want:  rows("NULL|NULL"), typ: "BIGINT"},
		{name: "constant / zero constant", cols: []tc{col(tBig, 1)},
			build: func(c []Expr) (Expr, error) { return NewBinary("/", lit(t, 1, tBig), lit(t, 0, tBig)) },
			err:   "division by zero"},
		{name: "VARCHAR + BIGINT", cols: []tc{col(tStr, "a"), col(tBig, 1)},
			build: bin("+"), err: "cannot apply + to VARCHAR and BIGINT"},
		{name: "BOOLEAN * INT", cols: []tc{col(tBool, true), col(tInt, 1)},
			build: bin("*"), err: "cannot apply * to BOOLEAN and INT"},
		{name: "unknown operator", cols: []tc{col(tBig, 1), col(tBig, 1)},
			build: bin("^"), err: "unknown operator ^"},
	})
}

// Overflow and division by zero under a null bit must not be reported: the value under a
// NULL is unspecified.
func TestScalarArithGarbageUnderNulls(t *testing.T) {
	a := NewInt64([]int64{maxI64, 1, minI64}, []bool{false, true, false})
	z := NewInt64([]int64{1, 1, 0}, nil)
	b := &Batch{N: 3, Cols: []arrow.Array{a, z}}
	ca := &ColRef{Idx: 0, T: tBig, Name: "a"}
	cz := &ColRef{Idx: 1, T: tBig, Name: "z"}
	for _, op := range []string{"+", "*", "/", "%", "-"} {
		e, err := NewBinary(op, ca, cz)
		if err != nil {
			t.Fatal(err)
		}
		got, err := evalDisplay(e, b)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if got[0] != "NULL" || got[2] != "NULL" {
			t.Fatalf("%s: %v", op, got)
		}
	}
	// The overflowing row itself, once valid, is an error.
	a2 := NewInt64([]int64{maxI64, 1}, nil)
	e, _ := NewBinary("+", ca, cz)
	if _, err := e.Eval(&Batch{N: 2, Cols: []arrow.Array{a2, NewInt64([]int64{1, 1}, nil)}}); err == nil {
		t.Fatal("want overflow")
	}
}

func TestScalarArithDouble(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "double + bigint", cols: []tc{col(tDbl, 1.5, nil), col(tBig, 2, 2)},
			build: bin("+"), want: rows("3.5|NULL"), typ: "DOUBLE"},
		{name: "double ops", cols: []tc{col(tDbl, 7.5, 7.5, 7.5, -7.5), col(tDbl, 2.0, 2.0, 2.0, 2.0)},
			build: func(c []Expr) (Expr, error) {
				sum, _ := NewBinary("-", c[0], c[1])
				return NewBinary("*", sum, c[1])
			}, want: rows("11|11|11|-19")},
		{name: "double division", cols: []tc{col(tDbl, 1.0, -3.0), col(tDbl, 4.0, 2.0)},
			build: bin("/"), want: rows("0.25|-1.5")},
		{name: "double modulo", cols: []tc{col(tDbl, 7.5, -7.5), col(tDbl, 2.0, 2.0)},
			build: bin("%"), want: rows("1.5|-1.5")},
		{name: "double division by zero is an error", cols: []tc{col(tDbl, 1.0), col(tDbl, 0.0)},
			build: bin("/"), err: "division by zero"},
		{name: "double division by NULL zero", cols: []tc{col(tDbl, 1.0), col(tDbl, nil)},
			build: bin("/"), want: rows("NULL")},
		{name: "double constant layouts", cols: []tc{col(tDbl, 2.0, nil, -4.0)},
			build: func(c []Expr) (Expr, error) {
				l, _ := NewBinary("-", lit(t, 1.0, tDbl), c[0]) // 1 - a
				r, _ := NewBinary("/", c[0], lit(t, 4.0, tDbl)) // a / 4
				m, _ := NewBinary("*", lit(t, 2.0, tDbl), r)    // 2 * (a / 4)
				d, _ := NewBinary("/", lit(t, 8.0, tDbl), c[0]) // 8 / a
				s, _ := NewBinary("+", l, m)
				return NewBinary("+", s, d)
			}, want: rows("4|NULL|1")},
		{name: "double constant / zero column", cols: []tc{col(tDbl, 2.0, 0.0)},
			build: func(c []Expr) (Expr, error) { return NewBinary("/", lit(t, 1.0, tDbl), c[0]) },
			err:   "division by zero"},
		{name: "int / double", cols: []tc{col(tInt, 1), col(tDbl, 4.0)},
			build: bin("/"), want: rows("0.25"), typ: "DOUBLE"},
	})
}

func TestScalarArithDecimal(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "+ keeps the larger scale", cols: []tc{col(dec(5, 2), "1.25", nil, "-1.25"), col(dec(4, 1), "2.5", "1.0", "0.3")},
			build: bin("+"), want: rows("3.75|NULL|-0.95"), typ: "DECIMAL(6,2)"},
		{name: "- rescales the left side", cols: []tc{col(dec(4, 1), "2.5"), col(dec(5, 2), "1.25")},
			build: bin("-"), want: rows("1.25"), typ: "DECIMAL(6,2)"},
		{name: "* adds scales", cols: []tc{col(dec(5, 2), "1.25", "-0.01"), col(dec(4, 1), "2.5", "0.5")},
			build: bin("*"), want: rows("3.125|-0.005"), typ: "DECIMAL(9,3)"},
		{name: "decimal * int", cols: []tc{col(dec(5, 2), "1.25"), col(tInt, 3)},
			build: bin("*"), want: rows("3.75"), typ: "DECIMAL(15,2)"},
		{name: "decimal + bigint", cols: []tc{col(dec(5, 2), "1.25"), col(tBig, 1)},
			build: bin("+"), want: rows("2.25"), typ: "DECIMAL(18,2)"},
		{name: "int + decimal constant", cols: []tc{col(tInt, 1, nil)},
			build: func(c []Expr) (Expr, error) { return NewBinary("+", c[0], lit(t, "0.5", dec(2, 1))) },
			want:  rows("1.5|NULL"), typ: "DECIMAL(12,1)", text: "(a + 0.5)"},
		{name: "decimal / decimal is DOUBLE", cols: []tc{col(dec(5, 2), "1.25"), col(dec(3, 1), "0.5")},
			build: bin("/"), want: rows("2.5"), typ: "DOUBLE"},
		{name: "decimal / zero", cols: []tc{col(dec(5, 2), "1.25"), col(dec(3, 1), "0.0")},
			build: bin("/"), err: "division by zero"},
		{name: "decimal % decimal", cols: []tc{col(dec(3, 1), "5.5", "-5.5"), col(tInt, 2, 2)},
			build: bin("%"), want: rows("1.5|-1.5"), typ: "DECIMAL(11,1)"},
		{name: "decimal + double is DOUBLE", cols: []tc{col(dec(3, 1), "0.5"), col(tDbl, 0.25)},
			build: bin("+"), want: rows("0.75"), typ: "DOUBLE"},
		{name: "decimal overflow", cols: []tc{col(dec(18, 0), "999999999999999999"), col(tInt, 1)},
			build: bin("+"), err: "DECIMAL overflow"},
		{name: "decimal * overflow", cols: []tc{col(dec(18, 2), "9999999999.99"), col(dec(18, 2), "9999999999.99")},
			build: bin("*"), err: "DECIMAL overflow"},
		{name: "scale beyond 18", cols: []tc{col(dec(18, 10), "1"), col(dec(18, 10), "1")},
			build: bin("*"), err: "scale 20 exceeds 18"},
		{name: "decimal neg", cols: []tc{col(dec(5, 2), "1.25", nil)},
			build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) }, want: rows("-1.25|NULL"), typ: "DECIMAL(5,2)", text: "(- a)"},
	})
}

func TestScalarArithTime(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "timestamp + interval", cols: []tc{col(tTS, "1969-12-31 23:30:00", nil), col(tIv, "1 h", "1 h")},
			build: bin("+"), want: rows("1970-01-01 00:30:00|NULL"), typ: "TIMESTAMP(3)"},
		{name: "interval + timestamp", cols: []tc{col(tIv, "1 s"), col(tTS, "1969-12-31 23:59:59.5")},
			build: bin("+"), want: rows("1970-01-01 00:00:00.500"), typ: "TIMESTAMP(3)"},
		{name: "timestamp - interval", cols: []tc{col(tTS, "1970-01-01 00:00:00"), col(tIv, "5 s")},
			build: bin("-"), want: rows("1969-12-31 23:59:55")},
		{name: "date + interval is TIMESTAMP", cols: []tc{col(tDate, "1969-12-31"), col(tIv, "90 min")},
			build: bin("+"), want: rows("1969-12-31 01:30:00"), typ: "TIMESTAMP(3)"},
		{name: "date - interval", cols: []tc{col(tDate, "1970-01-01"), col(tIv, "1 ms")},
			build: bin("-"), want: rows("1969-12-31 23:59:59.999")},
		{name: "date + int days", cols: []tc{col(tDate, "1969-12-31", "2024-02-28"), col(tInt, 1, 1)},
			build: bin("+"), want: rows("1970-01-01|2024-02-29"), typ: "DATE"},
		{name: "int + date", cols: []tc{col(tBig, -1), col(tDate, "1970-01-01")},
			build: bin("+"), want: rows("1969-12-31"), typ: "DATE"},
		{name: "date - int", cols: []tc{col(tDate, "2024-03-01"), col(tInt, 1)},
			build: bin("-"), want: rows("2024-02-29")},
		{name: "timestamp - timestamp is INTERVAL", cols: []tc{col(tTS, "1970-01-01 00:30:00"), col(tTS, "1969-12-31 23:00:00")},
			build: bin("-"), want: rows("INTERVAL '90' MINUTE"), typ: "INTERVAL"},
		{name: "timestamp - date", cols: []tc{col(tTS, "1970-01-02 01:00:00"), col(tDate, "1970-01-01")},
			build: bin("-"), want: rows("INTERVAL '25' HOUR"), typ: "INTERVAL"},
		{name: "date - date is days", cols: []tc{col(tDate, "1970-01-01"), col(tDate, "1969-12-01")},
			build: bin("-"), want: rows("31"), typ: "BIGINT"},
		{name: "interval arithmetic", cols: []tc{col(tIv, "1 h"), col(tIv, "30 min")},
			build: func(c []Expr) (Expr, error) {
				s, _ := NewBinary("+", c[0], c[1])
				m, _ := NewBinary("*", s, lit(t, 2, tBig))
				return NewBinary("/", m, lit(t, 3, tInt))
			}, want: rows("INTERVAL '1' HOUR"), typ: "INTERVAL"},
		{name: "int * interval", cols: []tc{col(tInt, 3), col(tIv, "2 s")},
			build: bin("*"), want: rows("INTERVAL '6' SECOND")},
		{name: "neg interval", cols: []tc{col(tIv, "2 s")},
			build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) }, want: rows("INTERVAL '-2' SECOND")},
		{name: "timestamp out of range", cols: []tc{col(tTS, maxI64-1), col(tIv, "1 d")},
			build: bin("+"), err: "timestamp out of range"},
		{name: "timestamp + timestamp", cols: []tc{col(tTS, 1), col(tTS, 1)},
			build: bin("+"), err: "cannot apply + to TIMESTAMP(3) and TIMESTAMP(3)"},
		{name: "date * int", cols: []tc{col(tDate, 1), col(tInt, 1)},
			build: bin("*"), err: "cannot apply * to DATE and INT"},
		{name: "interval + int", cols: []tc{col(tIv, 1), col(tInt, 1)},
			build: bin("+"), err: "cannot apply + to INTERVAL and INT"},
	})
}

func TestScalarNeg(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "bigint", cols: []tc{col(tBig, 1, nil, -5)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			want: rows("-1|NULL|5"), typ: "BIGINT"},
		{name: "double", cols: []tc{col(tDbl, 1.5, nil)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			want: rows("-1.5|NULL")},
		{name: "min bigint", cols: []tc{col(tBig, minI64)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "integer overflow"},
		{name: "min int", cols: []tc{col(tInt, -2147483648)}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "integer overflow"},
		{name: "varchar", cols: []tc{col(tStr, "x")}, build: func(c []Expr) (Expr, error) { return NewNeg(c[0]) },
			err: "cannot apply unary - to VARCHAR"},
	})
}
