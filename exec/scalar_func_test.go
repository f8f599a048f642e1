package exec

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

func fn(name string) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewFunc(name, c) }
}

// fnLit calls name with the columns followed by literal arguments.
func fnLit(t *testing.T, name string, extra ...*Const) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) {
		args := append([]Expr{}, c...)
		for _, e := range extra {
			args = append(args, e)
		}
		return NewFunc(name, args)
	}
}

func TestScalarLike(t *testing.T) {
	for _, tt := range []struct {
		s, p string
		esc  rune
		want bool
	}{
		{"abc", "abc", '\\', true},
		{"abc", "ABC", '\\', false},
		{"abc", "a%", '\\', true},
		{"abc", "%c", '\\', true},
		{"abc", "%b%", '\\', true},
		{"abc", "%", '\\', true},
		{"", "%", '\\', true},
		{"", "_", '\\', false},
		{"abc", "a_c", '\\', true},
		{"abc", "a__", '\\', true},
		{"abc", "a_", '\\', false},
		{"abc", "_b_", '\\', true},
		{"aXbYc", "a%b%c", '\\', true},
		{"abcbc", "%bc", '\\', true},
		{"abab", "a%b%ab", '\\', true},
		{"aab", "a%b%ab", '\\', false},
		{"ababab", "a%b%ab", '\\', true},
		{"abc", "a%%c", '\\', true},
		{"ac", "a%_%c", '\\', false},
		{"abc", "a%_%c", '\\', true},
		{"é", "_", '\\', true},
		{"héllo", "h_llo", '\\', true},
		{"héllo", "%é%", '\\', true},
		{"a%b", `a\%b`, '\\', true},
		{"axb", `a\%b`, '\\', false},
		{"a_b", `a\_b`, '\\', true},
		{"axb", `a\_b`, '\\', false},
		{`a\b`, `a\\b`, '\\', true},
		{"a%b", "a!%b", '!', true},
		{"axb", "a!%b", '!', false},
		{`a\xb`, `a\%b`, 0, true}, // no escape: \ is literal and % a wildcard
		{"mississippi", "%iss%ppi", '\\', true},
		{"mississippi", "m%is_i%i", '\\', true},
		{"mississippi", "m%is_x%i", '\\', false},
	} {
		m, err := compileLike(tt.p, tt.esc)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.p, err)
		}
		if got := m.match(tt.s); got != tt.want {
			t.Errorf("%q LIKE %q (escape %q) = %v, want %v", tt.s, tt.p, tt.esc, got, tt.want)
		}
	}
	strs := col(tStr, "apple", "banana", nil, "a_b", "")
	runScalarCases(t, []scalarCase{
		{name: "LIKE constant", cols: []tc{strs}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], lit(t, "%an%", tStr), '\\', false) },
			want: rows("false|true|NULL|false|false"), text: "(a LIKE '%an%')"},
		{name: "NOT LIKE", cols: []tc{strs}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], lit(t, "a%", tStr), '\\', true) },
			want: rows("false|true|NULL|false|true"), text: "(a NOT LIKE 'a%')"},
		{name: "LIKE escape", cols: []tc{strs}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], lit(t, "a#_%", tStr), '#', false) },
			want: rows("false|false|NULL|true|false"), text: "(a LIKE 'a#_%' ESCAPE '#')"},
		{name: "LIKE column pattern", cols: []tc{strs, col(tStr, "_pple", "b%", "%", nil, "%")},
			build: func(c []Expr) (Expr, error) { return NewLike(c[0], c[1], '\\', false) },
			want:  rows("true|true|NULL|NULL|true")},
		{name: "LIKE NULL pattern", cols: []tc{strs}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], &Const{T: tNull}, '\\', false) },
			want: rows("NULL|NULL|NULL|NULL|NULL")},
		{name: "pattern ends with escape", cols: []tc{strs}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], lit(t, `ab\`, tStr), '\\', false) },
			err: "must not end with the escape character"},
		{name: "column pattern ends with escape", cols: []tc{col(tStr, "a"), col(tStr, `a\`)}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], c[1], '\\', false) },
			err: "must not end with the escape character"},
		{name: "LIKE on a number", cols: []tc{col(tBig, 1)}, build: func(c []Expr) (Expr, error) { return NewLike(c[0], lit(t, "1", tStr), '\\', false) },
			err: "LIKE expects VARCHAR, got BIGINT"},
	})
}

func TestScalarConcatOp(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "varchar || varchar", cols: []tc{col(tStr, "a", nil, "x"), col(tStr, "b", "c", nil)}, build: bin("||"),
			want: rows("ab|NULL|NULL"), typ: "VARCHAR", text: "(a || b)"},
		{name: "non-varchar operands as text", cols: []tc{col(tBig, 1), col(tDate, "2024-01-02")}, build: bin("||"),
			want: rows("12024-01-02")},
		{name: "constant", cols: []tc{col(tStr, "x", "y")}, build: func(c []Expr) (Expr, error) { return NewBinary("||", c[0], lit(t, "!", tStr)) },
			want: rows("x!|y!")},
	})
}

func TestScalarStringFuncs(t *testing.T) {
	big := func(v int) *Const { return lit(t, v, tBig) }
	str := func(v string) *Const { return lit(t, v, tStr) }
	s := col(tStr, "Hello", "héllo", nil, "")
	runScalarCases(t, []scalarCase{
		{name: "lower", cols: []tc{s}, build: fn("lower"), want: rows("hello|héllo|NULL|"), text: "lower(a)"},
		{name: "upper", cols: []tc{s}, build: fn("UPPER"), want: rows("HELLO|HÉLLO|NULL|"), text: "upper(a)"},
		{name: "length counts characters", cols: []tc{s}, build: fn("length"), want: rows("5|5|NULL|0"), typ: "BIGINT"},
		{name: "char_length", cols: []tc{s}, build: fn("char_length"), want: rows("5|5|NULL|0")},
		{name: "substring", cols: []tc{col(tStr, "hello", "héllo", nil)}, build: fnLit(t, "substring", big(2), big(3)), want: rows("ell|éll|NULL")},
		{name: "substring SQL positions", cols: []tc{col(tStr, "hello", "hello", "hello", "hello", "hello"), col(tBig, 0, -1, -5, 5, 9), col(tBig, 3, 2, 3, 10, 1)},
			build: fn("substring"), want: rows("he|||o|")},
		{name: "substr without length", cols: []tc{col(tStr, "hello", "hello", "hello"), col(tBig, 3, -2, 6)},
			build: fn("substr"), want: rows("llo|hello|")},
		{name: "substring NULL position", cols: []tc{col(tStr, "hello"), col(tBig, nil)}, build: fn("substring"), want: rows("NULL")},
		{name: "substring negative length", cols: []tc{col(tStr, "hello")}, build: fnLit(t, "substring", big(1), big(-1)), err: "negative substring length"},
		{name: "substring bad position", cols: []tc{col(tStr, "hello")}, build: fnLit(t, "substring", str("1")), err: "function substring expects an integer, got VARCHAR"},
		{name: "concat skips NULLs", cols: []tc{col(tStr, "a", nil), col(tBig, 1, nil)}, build: fnLit(t, "concat", str("-")),
			want: rows("a1-|-"), text: "concat(a, b, '-')"},
		{name: "concat_ws", cols: []tc{col(tStr, "a", nil, "a"), col(tStr, "b", "b", nil)}, build: func(c []Expr) (Expr, error) {
			return NewFunc("concat_ws", []Expr{str(","), c[0], c[1]})
		}, want: rows("a,b|b|a")},
		{name: "concat_ws NULL separator", cols: []tc{col(tStr, "a")}, build: func(c []Expr) (Expr, error) {
			return NewFunc("concat_ws", []Expr{&Const{T: tNull}, c[0]})
		}, want: rows("NULL")},
		{name: "trim", cols: []tc{col(tStr, "  x y  ", nil)}, build: fn("trim"), want: rows("x y|NULL")},
		{name: "ltrim", cols: []tc{col(tStr, "  x  ")}, build: fn("ltrim"), want: rows("x  ")},
		{name: "rtrim", cols: []tc{col(tStr, "  x  ")}, build: fn("rtrim"), want: rows("  x")},
		{name: "trim characters", cols: []tc{col(tStr, "xxaxyx")}, build: fnLit(t, "trim", str("xy")), want: rows("a")},
		{name: "replace", cols: []tc{col(tStr, "banana", "abc", nil)}, build: fnLit(t, "replace", str("an"), str("AN")), want: rows("bANANa|abc|NULL")},
		{name: "replace empty", cols: []tc{col(tStr, "abc")}, build: fnLit(t, "replace", str(""), str("X")), want: rows("abc")},
		{name: "position", cols: []tc{col(tStr, "l", "z", "", "l"), col(tStr, "héllo", "abc", "abc", nil)}, build: fn("position"), want: rows("3|0|1|NULL")},
		{name: "strpos", cols: []tc{col(tStr, "héllo")}, build: fnLit(t, "strpos", str("lo")), want: rows("4")},
		{name: "locate from", cols: []tc{col(tStr, "l", "l", "l"), col(tStr, "hello", "hello", "hello"), col(tBig, 4, 5, 9)}, build: fn("locate"), want: rows("4|0|0")},
		{name: "lower of a number", cols: []tc{col(tBig, 1)}, build: fn("lower"), err: "function lower expects VARCHAR, got BIGINT"},
		{name: "lower arity", cols: []tc{col(tStr, "a"), col(tStr, "b")}, build: fn("lower"), err: "function lower expects 1 argument, got 2"},
		{name: "replace arity", cols: []tc{col(tStr, "a")}, build: fn("replace"), err: "function replace expects 3 arguments, got 1"},
		{name: "unknown function", cols: []tc{col(tStr, "a")}, build: fn("foo"), err: "unknown function foo"},
	})
}

func TestScalarNullFuncs(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "coalesce", cols: []tc{col(tInt, 1, nil, nil), col(tBig, 10, 20, nil)}, build: fnLit(t, "coalesce", lit(t, 0, tInt)),
			want: rows("1|20|0"), typ: "BIGINT", text: "coalesce(a, b, 0)"},
		{name: "coalesce is lazy", cols: []tc{col(tBig, 1, nil), col(tBig, 0, 2)}, build: func(c []Expr) (Expr, error) {
			q, _ := NewBinary("/", lit(t, 10, tBig), c[1])
			return NewFunc("coalesce", []Expr{c[0], q})
		}, want: rows("1|5")},
		{name: "coalesce with a date literal", cols: []tc{col(tDate, nil, "2024-01-01")}, build: fnLit(t, "coalesce", lit(t, "1970-01-01", tStr)),
			want: rows("1970-01-01|2024-01-01"), typ: "DATE"},
		{name: "coalesce strings", cols: []tc{col(tStr, nil, "x", nil), col(tStr, "y", "z", nil)}, build: fn("coalesce"), want: rows("y|x|NULL")},
		{name: "coalesce incompatible", cols: []tc{col(tBig, 1), col(tBool, true)}, build: fn("coalesce"), err: "coalesce: incompatible types BIGINT and BOOLEAN"},
		{name: "nullif", cols: []tc{col(tBig, 1, 2, nil), col(tBig, 1, 3, 1)}, build: fn("nullif"), want: rows("NULL|2|NULL"), typ: "BIGINT"},
		{name: "nullif strings", cols: []tc{col(tStr, "", "a")}, build: fnLit(t, "nullif", lit(t, "", tStr)), want: rows("NULL|a")},
		{name: "if", cols: []tc{col(tBool, true, false, nil), col(tBig, 1, 2, 3)}, build: fnLit(t, "if", lit(t, -1, tBig)),
			want: rows("1|-1|-1"), text: "if(a, b, -1)"},
		{name: "if needs a boolean", cols: []tc{col(tBig, 1)}, build: fnLit(t, "if", lit(t, 1, tBig), lit(t, 2, tBig)), err: "function if expects a BOOLEAN condition"},
		{name: "greatest ignores NULLs", cols: []tc{col(tBig, 1, nil, nil, 5), col(tInt, 3, 2, nil, -1)}, build: fn("greatest"), want: rows("3|2|NULL|5")},
		{name: "least", cols: []tc{col(tDbl, 1.5, nil), col(tBig, 3, 2)}, build: fn("least"), want: rows("1.5|2"), typ: "DOUBLE"},
		{name: "greatest strings", cols: []tc{col(tStr, "a", nil), col(tStr, "b", "c")}, build: fn("greatest"), want: rows("b|c")},
		{name: "least dates", cols: []tc{col(tDate, "2024-01-01")}, build: fnLit(t, "least", lit(t, "2023-06-01", tStr)), want: rows("2023-06-01")},
	})
}

func TestScalarMathFuncs(t *testing.T) {
	big := func(v int) *Const { return lit(t, v, tBig) }
	runScalarCases(t, []scalarCase{
		{name: "abs", cols: []tc{col(tBig, -3, 4, nil)}, build: fn("abs"), want: rows("3|4|NULL"), typ: "BIGINT"},
		{name: "abs double", cols: []tc{col(tDbl, -1.5)}, build: fn("abs"), want: rows("1.5")},
		{name: "abs decimal", cols: []tc{col(dec(4, 2), "-1.25")}, build: fn("abs"), want: rows("1.25"), typ: "DECIMAL(4,2)"},
		{name: "abs overflow", cols: []tc{col(tBig, minI64)}, build: fn("abs"), err: "integer overflow"},
		{name: "abs of text", cols: []tc{col(tStr, "1")}, build: fn("abs"), err: "function abs expects a number, got VARCHAR"},
		{name: "round double half away from zero", cols: []tc{col(tDbl, 2.5, -2.5, 0.49, nil)}, build: fn("round"), want: rows("3|-3|0|NULL"), typ: "DOUBLE"},
		{name: "round double digits", cols: []tc{col(tDbl, 1234.5678, -1234.5678)}, build: fnLit(t, "round", big(2)), want: rows("1234.57|-1234.57")},
		{name: "round double negative digits", cols: []tc{col(tDbl, 1250.0)}, build: fnLit(t, "round", big(-2)), want: rows("1300")},
		{name: "round int", cols: []tc{col(tInt, 15, -15, 14)}, build: fnLit(t, "round", big(-1)), want: rows("20|-20|10"), typ: "INT"},
		{name: "round int no digits", cols: []tc{col(tInt, 15)}, build: fn("round"), want: rows("15"), typ: "INT"},
		{name: "round decimal keeps the scale", cols: []tc{col(dec(5, 3), "1.255", "-1.255", "99.995")}, build: fnLit(t, "round", big(2)),
			want: rows("1.260|-1.260|100.000"), typ: "DECIMAL(6,3)"},
		{name: "round decimal to integer", cols: []tc{col(dec(3, 1), "2.5", "-0.4")}, build: fn("round"), want: rows("3.0|0.0")},
		{name: "round int overflow", cols: []tc{col(tInt, 2147483647)}, build: fnLit(t, "round", big(-1)), err: "integer overflow"},
		{name: "floor/ceil double", cols: []tc{col(tDbl, -1.5, 1.5)}, build: fn("floor"), want: rows("-2|1"), typ: "DOUBLE"},
		{name: "ceil double", cols: []tc{col(tDbl, -1.5, 1.5)}, build: fn("ceil"), want: rows("-1|2")},
		{name: "floor decimal", cols: []tc{col(dec(4, 2), "-1.50", "1.99", nil)}, build: fn("floor"), want: rows("-2|1|NULL"), typ: "DECIMAL(4,0)"},
		{name: "ceiling decimal", cols: []tc{col(dec(4, 2), "-1.50", "1.01")}, build: fn("ceiling"), want: rows("-1|2"), typ: "DECIMAL(4,0)"},
		{name: "floor int", cols: []tc{col(tInt, 3)}, build: fn("floor"), want: rows("3"), typ: "INT", text: "floor(a)"},
		{name: "mod", cols: []tc{col(tBig, -7), col(tBig, 3)}, build: fn("mod"), want: rows("-1"), text: "mod(a, b)"},
		{name: "mod by zero", cols: []tc{col(tBig, 7), col(tBig, 0)}, build: fn("mod"), err: "division by zero"},
		{name: "power", cols: []tc{col(tBig, 2, -2, 4), col(tDbl, 10.0, 3.0, 0.5)}, build: fn("power"), want: rows("1024|-8|2"), typ: "DOUBLE"},
		{name: "pow zero negative", cols: []tc{col(tBig, 0), col(tBig, -1)}, build: fn("pow"), err: "zero raised to a negative power"},
		{name: "pow negative fraction", cols: []tc{col(tBig, -8), col(tDbl, 0.5)}, build: fn("pow"), err: "complex result"},
		{name: "sqrt", cols: []tc{col(tBig, 16, nil), col(tBig, 0, 0)}, build: fnLit(t, "sqrt"), err: "function sqrt expects 1 argument, got 2"},
		{name: "sqrt value", cols: []tc{col(dec(4, 2), "6.25", nil)}, build: fn("sqrt"), want: rows("2.5|NULL")},
		{name: "sqrt negative", cols: []tc{col(tDbl, -1.0)}, build: fn("sqrt"), err: "cannot take square root of a negative number"},
		{name: "ln", cols: []tc{col(tDbl, 1.0)}, build: fn("ln"), want: rows("0")},
		{name: "ln zero", cols: []tc{col(tDbl, 0.0)}, build: fn("ln"), err: "cannot take logarithm of zero"},
		{name: "ln negative", cols: []tc{col(tBig, -1)}, build: fn("ln"), err: "cannot take logarithm of a negative number"},
		{name: "ln NULL is NULL", cols: []tc{col(tDbl, nil)}, build: fn("ln"), want: rows("NULL")},
		{name: "exp", cols: []tc{col(tInt, 0)}, build: fn("exp"), want: rows("1")},
		{name: "sign", cols: []tc{col(tBig, -5, 0, 7, nil)}, build: fn("sign"), want: rows("-1|0|1|NULL"), typ: "INT"},
		{name: "sign double", cols: []tc{col(tDbl, -0.5)}, build: fn("sign"), want: rows("-1"), typ: "DOUBLE"},
	})
}

func TestScalarExtractAndTrunc(t *testing.T) {
	ts := col(tTS, "1969-12-31 23:59:59.999", "2024-02-29 13:45:30.250", "1900-03-01 00:00:00", nil)
	ex := func(unit string) func(c []Expr) (Expr, error) { return fn("extract_" + unit) }
	trunc := func(unit string) func(c []Expr) (Expr, error) {
		return func(c []Expr) (Expr, error) { return NewFunc("date_trunc", []Expr{lit(t, unit, tStr), c[0]}) }
	}
	runScalarCases(t, []scalarCase{
		{name: "year", cols: []tc{ts}, build: ex("year"), want: rows("1969|2024|1900|NULL"), typ: "BIGINT", text: "EXTRACT(YEAR FROM a)"},
		{name: "month", cols: []tc{ts}, build: ex("month"), want: rows("12|2|3|NULL")},
		{name: "day", cols: []tc{ts}, build: ex("day"), want: rows("31|29|1|NULL")},
		{name: "hour", cols: []tc{ts}, build: ex("hour"), want: rows("23|13|0|NULL")},
		{name: "minute", cols: []tc{ts}, build: ex("minute"), want: rows("59|45|0|NULL")},
		{name: "second", cols: []tc{ts}, build: ex("second"), want: rows("59|30|0|NULL")},
		{name: "millisecond", cols: []tc{ts}, build: ex("millisecond"), want: rows("59999|30250|0|NULL")},
		{name: "dow", cols: []tc{ts}, build: ex("dow"), want: rows("3|4|4|NULL")},
		{name: "doy", cols: []tc{ts}, build: ex("doy"), want: rows("365|60|60|NULL")},
		{name: "week", cols: []tc{ts}, build: ex("week"), want: rows("1|9|9|NULL")},
		{name: "quarter", cols: []tc{ts}, build: ex("quarter"), want: rows("4|1|1|NULL")},
		{name: "epoch", cols: []tc{ts}, build: ex("epoch"), want: rows("-1|1709214330|-2203891200|NULL")},
		{name: "extract from date", cols: []tc{col(tDate, "1969-12-31", nil)}, build: ex("day"), want: rows("31|NULL")},
		{name: "epoch of date", cols: []tc{col(tDate, "1969-12-31")}, build: ex("epoch"), want: rows("-86400")},
		{name: "extract hour of date", cols: []tc{col(tDate, "1969-12-31")}, build: ex("hour"), want: rows("0")},
		{name: "extract from text", cols: []tc{col(tStr, "x")}, build: ex("year"), err: "function extract_year expects DATE or TIMESTAMP, got VARCHAR"},
		{name: "unknown unit", cols: []tc{ts}, build: ex("fortnight"), err: "unknown function extract_fortnight"},
		{name: "trunc second", cols: []tc{ts}, build: trunc("second"),
			want: rows("1969-12-31 23:59:59|2024-02-29 13:45:30|1900-03-01 00:00:00|NULL"), typ: "TIMESTAMP(3)", text: "date_trunc('second', a)"},
		{name: "trunc minute", cols: []tc{ts}, build: trunc("minute"), want: rows("1969-12-31 23:59:00|2024-02-29 13:45:00|1900-03-01 00:00:00|NULL")},
		{name: "trunc hour", cols: []tc{ts}, build: trunc("HOUR"), want: rows("1969-12-31 23:00:00|2024-02-29 13:00:00|1900-03-01 00:00:00|NULL")},
		{name: "trunc day", cols: []tc{ts}, build: trunc("day"), want: rows("1969-12-31 00:00:00|2024-02-29 00:00:00|1900-03-01 00:00:00|NULL")},
		{name: "trunc week", cols: []tc{ts}, build: trunc("week"), want: rows("1969-12-29 00:00:00|2024-02-26 00:00:00|1900-02-26 00:00:00|NULL")},
		{name: "trunc month", cols: []tc{ts}, build: trunc("month"), want: rows("1969-12-01 00:00:00|2024-02-01 00:00:00|1900-03-01 00:00:00|NULL")},
		{name: "trunc quarter", cols: []tc{ts}, build: trunc("quarter"), want: rows("1969-10-01 00:00:00|2024-01-01 00:00:00|1900-01-01 00:00:00|NULL")},
		{name: "trunc year", cols: []tc{ts}, build: trunc("year"), want: rows("1969-01-01 00:00:00|2024-01-01 00:00:00|1900-01-01 00:00:00|NULL")},
		{name: "trunc date", cols: []tc{col(tDate, "1969-12-31")}, build: trunc("month"), want: rows("1969-12-01 00:00:00"), typ: "TIMESTAMP(3)"},
		{name: "trunc bad unit", cols: []tc{ts}, build: trunc("fortnight"), err: `unknown unit "fortnight"`},
		{name: "trunc unit not literal", cols: []tc{col(tStr, "day"), col(tTS, 0)}, build: fn("date_trunc"), err: "expects a literal unit"},
	})
}

// Calendar fields and truncation agree with the time package over random instants between
// the years 1600 and 2400.
func TestScalarCalendarMatchesTimePackage(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	const n = 2000
	lo := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	hi := time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = lo + rng.Int63n(hi-lo)
	}
	b := &Batch{N: n, Cols: []arrow.Array{NewInt64(vals, nil)}}
	x := &ColRef{Idx: 0, T: tTS, Name: "ts"}
	field := func(unit string) []int64 {
		e, err := NewFunc("extract_"+unit, []Expr{x})
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Eval(b)
		if err != nil {
			t.Fatal(err)
		}
		return Int64s(a)
	}
	trunc := func(unit string) []int64 {
		e, err := NewFunc("date_trunc", []Expr{&Const{V: unit, T: tStr}, x})
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Eval(b)
		if err != nil {
			t.Fatal(err)
		}
		return Int64s(a)
	}
	got := map[string][]int64{}
	for _, u := range []string{"year", "month", "day", "hour", "minute", "second", "dow", "doy", "week", "quarter", "epoch"} {
		got[u] = field(u)
	}
	tr := map[string][]int64{}
	for _, u := range []string{"week", "month", "quarter", "year"} {
		tr[u] = trunc(u)
	}
	for i, v := range vals {
		tm := time.UnixMilli(v).UTC()
		_, wk := tm.ISOWeek()
		want := map[string]int64{
			"year": int64(tm.Year()), "month": int64(tm.Month()), "day": int64(tm.Day()),
			"hour": int64(tm.Hour()), "minute": int64(tm.Minute()), "second": int64(tm.Second()),
			"dow": int64(tm.Weekday()), "doy": int64(tm.YearDay()), "week": int64(wk),
			"quarter": int64(tm.Month()-1)/3 + 1, "epoch": types.FloorDiv(v, 1000),
		}
		for u, w := range want {
			if got[u][i] != w {
				t.Fatalf("seed %d: extract_%s(%s) = %d, want %d", seed, u, types.FormatTimestamp(v), got[u][i], w)
			}
		}
		day := time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC)
		wantTr := map[string]time.Time{
			"week":    day.AddDate(0, 0, -((int(tm.Weekday()) + 6) % 7)),
			"month":   time.Date(tm.Year(), tm.Month(), 1, 0, 0, 0, 0, time.UTC),
			"quarter": time.Date(tm.Year(), (tm.Month()-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC),
			"year":    time.Date(tm.Year(), 1, 1, 0, 0, 0, 0, time.UTC),
		}
		for u, w := range wantTr {
			if tr[u][i] != w.UnixMilli() {
				t.Fatalf("seed %d: date_trunc(%s, %s) = %s, want %s", seed, u, types.FormatTimestamp(v),
					types.FormatTimestamp(tr[u][i]), w.Format("2006-01-02"))
			}
		}
	}
}

func TestScalarStringForms(t *testing.T) {
	x := &ColRef{Idx: 0, T: tBig, Name: "x"}
	name := &ColRef{Idx: 1, T: tStr, Name: "name"}
	mk := func(e Expr, err error) Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, tt := range []struct {
		e    Expr
		want string
	}{
		{mk(NewBinary("+", x, lit(t, 1, tBig))), "(x + 1)"},
		{mk(NewFunc("lower", []Expr{name})), "lower(name)"},
		{mk(NewCast(name, tBig, false)), "CAST(name AS BIGINT)"},
		{mk(NewCast(x, dec(10, 2), true)), "TRY_CAST(x AS DECIMAL(10,2))"},
		{mk(NewIn(x, []Expr{lit(t, 1, tBig), lit(t, 2, tBig)}, false)), "(x IN (1, 2))"},
		{mk(NewLike(name, lit(t, "a%", tStr), '\\', true)), "(name NOT LIKE 'a%')"},
		{mk(NewFunc("extract_hour", []Expr{&ColRef{Idx: 2, T: tTS, Name: "ts"}})), "EXTRACT(HOUR FROM ts)"},
		{mk(NewNeg(x)), "(- x)"},
		{mk(NewFunc("coalesce", []Expr{x, lit(t, 0, tInt)})), "coalesce(x, 0)"},
		{mk(NewBinary("||", name, x)), "(name || x)"},
		{mk(NewBinary("*", x, lit(t, 1.5, tDbl))), "(x * 1.5)"},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if !strings.Contains(mk(NewCase(x, []Expr{lit(t, 1, tBig)}, []Expr{name}, nil)).String(), "CASE x WHEN 1 THEN name END") {
		t.Error("simple CASE text")
	}
}
