package exec

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func scast(to types.T) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewCast(c[0], to, false) }
}

func stryCast(to types.T) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewCast(c[0], to, true) }
}

func TestScalarCast(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "varchar to bigint", cols: []scalarCol{scol(tyStr, "123", " -5 ", nil)}, build: scast(tyBig),
			want: srows("123|-5|NULL"), typ: "BIGINT", text: "CAST(a AS BIGINT)"},
		{name: "bad bigint text", cols: []scalarCol{scol(tyStr, "1", "abc")}, build: scast(tyBig), err: `invalid BIGINT value "abc"`},
		{name: "fraction is not a bigint", cols: []scalarCol{scol(tyStr, "1.5")}, build: scast(tyBig), err: `invalid BIGINT value "1.5"`},
		{name: "int text out of range", cols: []scalarCol{scol(tyStr, "3000000000")}, build: scast(tyInt), err: `value "3000000000" out of range for INT`},
		{name: "try_cast gives NULL", cols: []scalarCol{scol(tyStr, "1", "abc", nil, "3000000000")}, build: stryCast(tyInt),
			want: srows("1|NULL|NULL|NULL"), text: "TRY_CAST(a AS INT)"},
		{name: "varchar to double", cols: []scalarCol{scol(tyStr, "1.5", "-1e3", "nan?")}, build: stryCast(tyDbl), want: srows("1.5|-1000|NULL")},
		{name: "varchar to decimal is exact", cols: []scalarCol{scol(tyStr, "123456789012345.678", "-0.005", "1.", ".5")}, build: scast(sdec(18, 2)),
			want: srows("123456789012345.68|-0.01|1.00|0.50")},
		{name: "varchar to decimal out of range", cols: []scalarCol{scol(tyStr, "12345.6")}, build: scast(sdec(4, 1)), err: `value "12345.6" out of range for DECIMAL(4,1)`},
		{name: "varchar to decimal garbage", cols: []scalarCol{scol(tyStr, "1.2.3")}, build: scast(sdec(4, 1)), err: `invalid DECIMAL(4,1) value "1.2.3"`},
		{name: "varchar to boolean", cols: []scalarCol{scol(tyStr, "true", "FALSE", "t", "0", "yes")}, build: scast(tyBool), want: srows("true|false|true|false|true")},
		{name: "bad boolean", cols: []scalarCol{scol(tyStr, "maybe")}, build: scast(tyBool), err: `invalid BOOLEAN value "maybe"`},
		{name: "varchar to date", cols: []scalarCol{scol(tyStr, "1969-07-20", "2024-01-01 23:59:59")}, build: scast(tyDate), want: srows("1969-07-20|2024-01-01")},
		{name: "bad date", cols: []scalarCol{scol(tyStr, "2024-13-01")}, build: scast(tyDate), err: `invalid DATE value "2024-13-01"`},
		{name: "varchar to timestamp", cols: []scalarCol{scol(tyStr, "1969-12-31 23:59:59.123", "2024-01-01T10:00:00Z")}, build: scast(tyTS),
			want: srows("1969-12-31 23:59:59.123|2024-01-01 10:00:00")},
		{name: "varchar to interval", cols: []scalarCol{scol(tyStr, "1")}, build: scast(tyIv), err: "cannot cast VARCHAR to INTERVAL"},
		{name: "double to bigint truncates", cols: []scalarCol{scol(tyDbl, 2.7, -2.7, 0.5, nil)}, build: scast(tyBig), want: srows("2|-2|0|NULL")},
		{name: "double to int out of range", cols: []scalarCol{scol(tyDbl, 3e9)}, build: scast(tyInt), err: "value 3e+09 out of range for INT"},
		{name: "double NaN to bigint", cols: []scalarCol{scol(tyStr, "NaN")}, build: func(c []Expr) (Expr, error) {
			d, _ := NewCast(c[0], tyDbl, false)
			return NewCast(d, tyBig, false)
		}, err: "out of range for BIGINT"},
		{name: "try double to int", cols: []scalarCol{scol(tyDbl, 3e9, 1.0)}, build: stryCast(tyInt), want: srows("NULL|1")},
		{name: "double to decimal rounds", cols: []scalarCol{scol(tyDbl, 1.255, -1.235, 0.125)}, build: scast(sdec(5, 2)), want: srows("1.25|-1.24|0.13")},
		{name: "bigint to int", cols: []scalarCol{scol(tyBig, 5, 3000000000)}, build: scast(tyInt), err: "value 3000000000 out of range for INT"},
		{name: "bigint to double", cols: []scalarCol{scol(tyBig, 5, nil)}, build: scast(tyDbl), want: srows("5|NULL")},
		{name: "int to decimal", cols: []scalarCol{scol(tyInt, 5, -3)}, build: scast(sdec(4, 2)), want: srows("5.00|-3.00")},
		{name: "int to decimal overflow", cols: []scalarCol{scol(tyInt, 100)}, build: scast(sdec(4, 2)), err: "out of range for DECIMAL(4,2)"},
		{name: "decimal rescale down rounds", cols: []scalarCol{scol(sdec(5, 3), "1.255", "-1.255", "1.249")}, build: scast(sdec(4, 2)), want: srows("1.26|-1.26|1.25")},
		{name: "decimal rescale up", cols: []scalarCol{scol(sdec(3, 1), "1.5")}, build: scast(sdec(6, 3)), want: srows("1.500")},
		{name: "decimal to bigint truncates", cols: []scalarCol{scol(sdec(5, 2), "2.99", "-2.99")}, build: scast(tyBig), want: srows("2|-2")},
		{name: "decimal to double", cols: []scalarCol{scol(sdec(5, 2), "2.5")}, build: scast(tyDbl), want: srows("2.5")},
		{name: "to varchar", cols: []scalarCol{scol(tyDbl, 0.1, 1e21, nil)}, build: scast(tyStr), want: srows("0.1|1e+21|NULL")},
		{name: "decimal to varchar", cols: []scalarCol{scol(sdec(5, 2), "-0.05")}, build: scast(tyStr), want: srows("-0.05")},
		{name: "timestamp to varchar", cols: []scalarCol{scol(tyTS, "1969-12-31 23:59:59.5")}, build: scast(tyStr), want: srows("1969-12-31 23:59:59.500")},
		{name: "boolean to varchar", cols: []scalarCol{scol(tyBool, true, false)}, build: scast(tyStr), want: srows("true|false")},
		{name: "boolean to int", cols: []scalarCol{scol(tyBool, true, false, nil)}, build: scast(tyInt), want: srows("1|0|NULL")},
		{name: "int to boolean", cols: []scalarCol{scol(tyBig, 0, -2, nil)}, build: scast(tyBool), want: srows("false|true|NULL")},
		{name: "timestamp to date floors", cols: []scalarCol{scol(tyTS, "1969-12-31 23:00:00", "1970-01-01 00:00:00")}, build: scast(tyDate), want: srows("1969-12-31|1970-01-01")},
		{name: "date to timestamp", cols: []scalarCol{scol(tyDate, "1969-12-31")}, build: scast(tyTS), want: srows("1969-12-31 00:00:00")},
		{name: "NULL to date", cols: []scalarCol{scol(tyBig, 1)}, build: func(c []Expr) (Expr, error) { return NewCast(&Const{T: tyNull}, tyDate, false) },
			want: srows("NULL"), typ: "DATE"},
		{name: "same type is a no-op", cols: []scalarCol{scol(tyBig, 1)}, build: scast(tyBig), want: srows("1"), text: "a"},
		{name: "date to bigint", cols: []scalarCol{scol(tyDate, 1)}, build: scast(tyBig), err: "cannot cast DATE to BIGINT"},
		{name: "boolean to double", cols: []scalarCol{scol(tyBool, true)}, build: scast(tyDbl), err: "cannot cast BOOLEAN to DOUBLE"},
		{name: "interval to timestamp", cols: []scalarCol{scol(tyIv, 1)}, build: scast(tyTS), err: "cannot cast INTERVAL to TIMESTAMP(3)"},
	})
}

func TestScalarCoerce(t *testing.T) {
	ref := func(ty types.T) Expr { return &ColRef{Idx: 0, T: ty, Name: "x"} }
	for _, tt := range []struct {
		e    Expr
		to   types.T
		want string // String() of the result, or "error: ..." substring
	}{
		{ref(tyInt), tyBig, "x"},
		{ref(tyInt), tyDbl, "x"},
		{ref(tyBig), sdec(18, 2), "x"},
		{ref(sdec(5, 2)), tyDbl, "x"},
		{ref(sdec(5, 2)), sdec(4, 1), "x"},
		{ref(tyDate), tyTS, "x"},
		{ref(tyBig), tyInt, "error: cannot convert BIGINT to INT implicitly"},
		{ref(tyDbl), tyBig, "error: cannot convert DOUBLE to BIGINT implicitly"},
		{ref(tyStr), tyDate, "error: cannot convert VARCHAR to DATE implicitly"},
		{ref(tyBig), tyStr, "error: cannot convert BIGINT to VARCHAR implicitly"},
		{ref(tyTS), tyDate, "error: cannot convert TIMESTAMP(3) to DATE implicitly"},
		{slit(t, "2024-02-29", tyStr), tyDate, "2024-02-29"},
		{slit(t, "2024-02-29 10:00", tyStr), tyTS, "2024-02-29 10:00:00"},
		{slit(t, "1.5", tyStr), sdec(3, 2), "1.50"},
		{slit(t, "42", tyStr), tyInt, "42"},
		{slit(t, "true", tyStr), tyBool, "true"},
		{slit(t, "x", tyStr), tyBig, `error: invalid BIGINT value "x"`},
		{slit(t, 7, tyBig), tyInt, "7"},
		{slit(t, 3000000000, tyBig), tyInt, "error: out of range for INT"},
		{slit(t, 1.5, tyDbl), sdec(4, 2), "1.50"},
		{&Const{T: tyNull}, tyDate, "NULL"},
		{ref(tyNull), tyStr, "x"},
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
		{tyInt, tyInt, "INT"},
		{tyInt, tyBig, "BIGINT"},
		{tyBig, tyDbl, "DOUBLE"},
		{sdec(5, 2), tyDbl, "DOUBLE"},
		{sdec(5, 2), sdec(6, 1), "DECIMAL(7,2)"},
		{sdec(5, 2), tyInt, "DECIMAL(12,2)"},
		{sdec(5, 2), tyBig, "DECIMAL(18,2)"},
		{tyNull, tyStr, "VARCHAR"},
		{tyDate, tyNull, "DATE"},
		{tyDate, tyTS, "TIMESTAMP(3)"},
		{tyBool, tyBool, "BOOLEAN"},
		{tyIv, tyIv, "INTERVAL"},
		{tyStr, tyBig, "error"},
		{tyBool, tyInt, "error"},
		{tyDate, tyIv, "error"},
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
	one := slit(t, 1, tyBig)
	sum, _ := NewBinary("+", one, slit(t, 2, tyBig))
	if v, err := EvalConst(sum); err != nil || v != int64(3) {
		t.Fatalf("EvalConst(1 + 2) = %v, %v", v, err)
	}
	up, _ := NewFunc("upper", []Expr{slit(t, "abc", tyStr)})
	if v, err := EvalConst(up); err != nil || v != "ABC" {
		t.Fatalf("EvalConst(upper('abc')) = %v, %v", v, err)
	}
	null, _ := NewBinary("+", one, &Const{T: tyNull})
	if v, err := EvalConst(null); err != nil || v != nil {
		t.Fatalf("EvalConst(1 + NULL) = %v, %v", v, err)
	}
	div, _ := NewBinary("/", one, slit(t, 0, tyBig))
	if _, err := EvalConst(div); err == nil || err.Error() != "division by zero" {
		t.Fatalf("EvalConst(1 / 0) error = %v", err)
	}
	ref, _ := NewBinary("+", &ColRef{Idx: 0, T: tyBig, Name: "x"}, one)
	if _, err := EvalConst(ref); err == nil || !strings.Contains(err.Error(), "not constant") {
		t.Fatalf("EvalConst(x + 1) error = %v", err)
	}
}
