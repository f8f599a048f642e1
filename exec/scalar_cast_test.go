package exec

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func cast(to types.T) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewCast(c[0], to, false) }
}

func tryCast(to types.T) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewCast(c[0], to, true) }
}

func TestScalarCast(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "varchar to bigint", cols: []tc{col(tStr, "123", " -5 ", nil)}, build: cast(tBig),
			want: rows("123|-5|NULL"), typ: "BIGINT", text: "CAST(a AS BIGINT)"},
		{name: "bad bigint text", cols: []tc{col(tStr, "1", "abc")}, build: cast(tBig), err: `invalid BIGINT value "abc"`},
		{name: "fraction is not a bigint", cols: []tc{col(tStr, "1.5")}, build: cast(tBig), err: `invalid BIGINT value "1.5"`},
		{name: "int text out of range", cols: []tc{col(tStr, "3000000000")}, build: cast(tInt), err: `value "3000000000" out of range for INT`},
		{name: "try_cast gives NULL", cols: []tc{col(tStr, "1", "abc", nil, "3000000000")}, build: tryCast(tInt),
			want: rows("1|NULL|NULL|NULL"), text: "TRY_CAST(a AS INT)"},
		{name: "varchar to double", cols: []tc{col(tStr, "1.5", "-1e3", "nan?")}, build: tryCast(tDbl), want: rows("1.5|-1000|NULL")},
		{name: "varchar to decimal is exact", cols: []tc{col(tStr, "123456789012345.678", "-0.005", "1.", ".5")}, build: cast(dec(18, 2)),
			want: rows("123456789012345.68|-0.01|1.00|0.50")},
		{name: "varchar to decimal out of range", cols: []tc{col(tStr, "12345.6")}, build: cast(dec(4, 1)), err: `value "12345.6" out of range for DECIMAL(4,1)`},
		{name: "varchar to decimal garbage", cols: []tc{col(tStr, "1.2.3")}, build: cast(dec(4, 1)), err: `invalid DECIMAL(4,1) value "1.2.3"`},
		{name: "varchar to boolean", cols: []tc{col(tStr, "true", "FALSE", "t", "0", "yes")}, build: cast(tBool), want: rows("true|false|true|false|true")},
		{name: "bad boolean", cols: []tc{col(tStr, "maybe")}, build: cast(tBool), err: `invalid BOOLEAN value "maybe"`},
		{name: "varchar to date", cols: []tc{col(tStr, "1969-07-20", "2024-01-01 23:59:59")}, build: cast(tDate), want: rows("1969-07-20|2024-01-01")},
		{name: "bad date", cols: []tc{col(tStr, "2024-13-01")}, build: cast(tDate), err: `invalid DATE value "2024-13-01"`},
		{name: "varchar to timestamp", cols: []tc{col(tStr, "1969-12-31 23:59:59.123", "2024-01-01T10:00:00Z")}, build: cast(tTS),
			want: rows("1969-12-31 23:59:59.123|2024-01-01 10:00:00")},
		{name: "varchar to interval", cols: []tc{col(tStr, "1")}, build: cast(tIv), err: "cannot cast VARCHAR to INTERVAL"},
		{name: "double to bigint truncates", cols: []tc{col(tDbl, 2.7, -2.7, 0.5, nil)}, build: cast(tBig), want: rows("2|-2|0|NULL")},
		{name: "double to int out of range", cols: []tc{col(tDbl, 3e9)}, build: cast(tInt), err: "value 3e+09 out of range for INT"},
		{name: "double NaN to bigint", cols: []tc{col(tStr, "NaN")}, build: func(c []Expr) (Expr, error) {
			d, _ := NewCast(c[0], tDbl, false)
			return NewCast(d, tBig, false)
		}, err: "out of range for BIGINT"},
		{name: "try double to int", cols: []tc{col(tDbl, 3e9, 1.0)}, build: tryCast(tInt), want: rows("NULL|1")},
		{name: "double to decimal rounds", cols: []tc{col(tDbl, 1.255, -1.235, 0.125)}, build: cast(dec(5, 2)), want: rows("1.25|-1.24|0.13")},
		{name: "bigint to int", cols: []tc{col(tBig, 5, 3000000000)}, build: cast(tInt), err: "value 3000000000 out of range for INT"},
		{name: "bigint to double", cols: []tc{col(tBig, 5, nil)}, build: cast(tDbl), want: rows("5|NULL")},
		{name: "int to decimal", cols: []tc{col(tInt, 5, -3)}, build: cast(dec(4, 2)), want: rows("5.00|-3.00")},
		{name: "int to decimal overflow", cols: []tc{col(tInt, 100)}, build: cast(dec(4, 2)), err: "out of range for DECIMAL(4,2)"},
		{name: "decimal rescale down rounds", cols: []tc{col(dec(5, 3), "1.255", "-1.255", "1.249")}, build: cast(dec(4, 2)), want: rows("1.26|-1.26|1.25")},
		{name: "decimal rescale up", cols: []tc{col(dec(3, 1), "1.5")}, build: cast(dec(6, 3)), want: rows("1.500")},
		{name: "decimal to bigint truncates", cols: []tc{col(dec(5, 2), "2.99", "-2.99")}, build: cast(tBig), want: rows("2|-2")},
		{name: "decimal to double", cols: []tc{col(dec(5, 2), "2.5")}, build: cast(tDbl), want: rows("2.5")},
		{name: "to varchar", cols: []tc{col(tDbl, 0.1, 1e21, nil)}, build: cast(tStr), want: rows("0.1|1e+21|NULL")},
		{name: "decimal to varchar", cols: []tc{col(dec(5, 2), "-0.05")}, build: cast(tStr), want: rows("-0.05")},
		{name: "timestamp to varchar", cols: []tc{col(tTS, "1969-12-31 23:59:59.5")}, build: cast(tStr), want: rows("1969-12-31 23:59:59.500")},
		{name: "boolean to varchar", cols: []tc{col(tBool, true, false)}, build: cast(tStr), want: rows("true|false")},
		{name: "boolean to int", cols: []tc{col(tBool, true, false, nil)}, build: cast(tInt), want: rows("1|0|NULL")},
		{name: "int to boolean", cols: []tc{col(tBig, 0, -2, nil)}, build: cast(tBool), want: rows("false|true|NULL")},
		{name: "timestamp to date floors", cols: []tc{col(tTS, "1969-12-31 23:00:00", "1970-01-01 00:00:00")}, build: cast(tDate), want: rows("1969-12-31|1970-01-01")},
		{name: "date to timestamp", cols: []tc{col(tDate, "1969-12-31")}, build: cast(tTS), want: rows("1969-12-31 00:00:00")},
		{name: "NULL to date", cols: []tc{col(tBig, 1)}, build: func(c []Expr) (Expr, error) { return NewCast(&Const{T: tNull}, tDate, false) },
			want: rows("NULL"), typ: "DATE"},
		{name: "same type is a no-op", cols: []tc{col(tBig, 1)}, build: cast(tBig), want: rows("1"), text: "a"},
		{name: "date to bigint", cols: []tc{col(tDate, 1)}, build: cast(tBig), err: "cannot cast DATE to BIGINT"},
		{name: "boolean to double", cols: []tc{col(tBool, true)}, build: cast(tDbl), err: "cannot cast BOOLEAN to DOUBLE"},
		{name: "interval to timestamp", cols: []tc{col(tIv, 1)}, build: cast(tTS), err: "cannot cast INTERVAL to TIMESTAMP(3)"},
	})
}

func TestScalarCoerce(t *testing.T) {
	ref := func(ty types.T) Expr { return &ColRef{Idx: 0, T: ty, Name: "x"} }
	for _, tt := range []struct {
		e    Expr
		to   types.T
		want string // String() of the result, or "error: ..." substring
	}{
		{ref(tInt), tBig, "x"},
		{ref(tInt), tDbl, "x"},
		{ref(tBig), dec(18, 2), "x"},
		{ref(dec(5, 2)), tDbl, "x"},
		{ref(dec(5, 2)), dec(4, 1), "x"},
		{ref(tDate), tTS, "x"},
		{ref(tBig), tInt, "error: cannot convert BIGINT to INT implicitly"},
		{ref(tDbl), tBig, "error: cannot convert DOUBLE to BIGINT implicitly"},
		{ref(tStr), tDate, "error: cannot convert VARCHAR to DATE implicitly"},
		{ref(tBig), tStr, "error: cannot convert BIGINT to VARCHAR implicitly"},
		{ref(tTS), tDate, "error: cannot convert TIMESTAMP(3) to DATE implicitly"},
		{lit(t, "2024-02-29", tStr), tDate, "2024-02-29"},
		{lit(t, "2024-02-29 10:00", tStr), tTS, "2024-02-29 10:00:00"},
		{lit(t, "1.5", tStr), dec(3, 2), "1.50"},
		{lit(t, "42", tStr), tInt, "42"},
		{lit(t, "true", tStr), tBool, "true"},
		{lit(t, "x", tStr), tBig, `error: invalid BIGINT value "x"`},
		{lit(t, 7, tBig), tInt, "7"},
		{lit(t, 3000000000, tBig), tInt, "error: out of range for INT"},
		{lit(t, 1.5, tDbl), dec(4, 2), "1.50"},
		{&Const{T: tNull}, tDate, "NULL"},
		{ref(tNull), tStr, "x"},
	} {
		got, err := Coerce(tt.e, tt.to)
		if strings.HasPrefix(tt.want, "error: ") {
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
				t.Errorf("Coerce(%s, %s) = %v, %v; want %s", tt.e, tt.to, got, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("Coerce(%s, %s): %v", tt.e, tt.to, err)
			continue
		}
		if got.Type() != tt.to || got.String() != tt.want {
			t.Errorf("Coerce(%s, %s) = %s of %s, want %s", tt.e, tt.to, got, got.Type(), tt.want)
		}
		if _, isConst := tt.e.(*Const); isConst {
			if _, ok := got.(*Const); !ok {
				t.Errorf("Coerce(%s, %s) did not fold to a Const", tt.e, tt.to)
			}
		}
	}
}

func TestScalarCommonType(t *testing.T) {
	for _, tt := range []struct {
		a, b types.T
		want string
	}{
		{tInt, tInt, "INT"},
		{tInt, tBig, "BIGINT"},
		{tBig, tDbl, "DOUBLE"},
		{dec(5, 2), tDbl, "DOUBLE"},
		{dec(5, 2), dec(6, 1), "DECIMAL(7,2)"},
		{dec(5, 2), tInt, "DECIMAL(12,2)"},
		{dec(5, 2), tBig, "DECIMAL(18,2)"},
		{tNull, tStr, "VARCHAR"},
		{tDate, tNull, "DATE"},
		{tDate, tTS, "TIMESTAMP(3)"},
		{tBool, tBool, "BOOLEAN"},
		{tIv, tIv, "INTERVAL"},
		{tStr, tBig, "error"},
		{tBool, tInt, "error"},
		{tDate, tIv, "error"},
	} {
		got, err := CommonType(tt.a, tt.b)
		s := got.String()
		if err != nil {
			s = "error"
		}
		if s != tt.want {
			t.Errorf("CommonType(%s, %s) = %s (%v), want %s", tt.a, tt.b, s, err, tt.want)
		}
	}
}

func TestScalarEvalConst(t *testing.T) {
	one := lit(t, 1, tBig)
	sum, _ := NewBinary("+", one, lit(t, 2, tBig))
	if v, err := EvalConst(sum); err != nil || v != int64(3) {
		t.Fatalf("EvalConst(1 + 2) = %v, %v", v, err)
	}
	up, _ := NewFunc("upper", []Expr{lit(t, "abc", tStr)})
	if v, err := EvalConst(up); err != nil || v != "ABC" {
		t.Fatalf("EvalConst(upper('abc')) = %v, %v", v, err)
	}
	null, _ := NewBinary("+", one, &Const{T: tNull})
	if v, err := EvalConst(null); err != nil || v != nil {
		t.Fatalf("EvalConst(1 + NULL) = %v, %v", v, err)
	}
	div, _ := NewBinary("/", one, lit(t, 0, tBig))
	if _, err := EvalConst(div); err == nil || err.Error() != "division by zero" {
		t.Fatalf("EvalConst(1 / 0) error = %v", err)
	}
	ref, _ := NewBinary("+", &ColRef{Idx: 0, T: tBig, Name: "x"}, one)
	if _, err := EvalConst(ref); err == nil || !strings.Contains(err.Error(), "not constant") {
		t.Fatalf("EvalConst(x + 1) error = %v", err)
	}
}
