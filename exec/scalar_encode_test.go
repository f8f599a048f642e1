package exec

import (
	"testing"
)

func TestScalarEncodeFuncs(t *testing.T) {
	runScalarCases(t, []scalarCase{
		{name: "to_base64", cols: []scalarCol{scol(tyStr, "hello world", "", "é", nil)}, build: sfn("to_base64"),
			want: srows("aGVsbG8gd29ybGQ=||w6k=|NULL"), typ: "VARCHAR", text: "to_base64(a)"},
		{name: "from_base64", cols: []scalarCol{scol(tyStr, "aGVsbG8gd29ybGQ=", "", "w6k=", "aGk", nil)}, build: sfn("from_base64"),
			want: srows("hello world||é|hi|NULL")},
		{name: "from_base64 not base64", cols: []scalarCol{scol(tyStr, "aGk=", "a!b=")}, build: sfn("from_base64"),
			err: "function from_base64: 'a!b=' is not valid base64"},
		{name: "from_base64 wrong padding", cols: []scalarCol{scol(tyStr, "aGk")}, build: func(c []Expr) (Expr, error) {
			return NewFunc("from_base64", []Expr{slit(t, "aG=", tyStr)})
		}, err: "is not valid base64"},
		{name: "from_base64 line break", cols: []scalarCol{scol(tyStr, "aGVs\nbG8=")}, build: sfn("from_base64"), err: "is not valid base64"},
		{name: "from_base64 not UTF-8", cols: []scalarCol{scol(tyStr, "/w==")}, build: sfn("from_base64"), err: "does not decode to UTF-8 text"},
		{name: "to_base64 of a number", cols: []scalarCol{scol(tyBig, 1)}, build: sfn("to_base64"), err: "function to_base64 expects VARCHAR, got BIGINT"},
		{name: "hex of integers", cols: []scalarCol{scol(tyBig, 255, 0, -1, sMinI64, nil)}, build: sfn("hex"),
			want: srows("FF|0|FFFFFFFFFFFFFFFF|8000000000000000|NULL"), typ: "VARCHAR"},
		{name: "hex of INT widens to 64 bits", cols: []scalarCol{scol(tyInt, -2, 100)}, build: sfn("hex"), want: srows("FFFFFFFFFFFFFFFE|64")},
		{name: "hex of text", cols: []scalarCol{scol(tyStr, "abc", "é", "", nil)}, build: sfn("hex"), want: srows("616263|C3A9||NULL")},
		{name: "hex of NULL", build: func([]Expr) (Expr, error) { return NewFunc("hex", []Expr{&Const{T: tyNull}}) }, want: srows("NULL")},
		{name: "hex of a double", cols: []scalarCol{scol(tyDbl, 1.5)}, build: sfn("hex"), err: "function hex expects an integer or VARCHAR, got DOUBLE"},
		{name: "bin", cols: []scalarCol{scol(tyBig, 5, 0, 12, -1, nil)}, build: sfn("bin"),
			want: srows("101|0|1100|1111111111111111111111111111111111111111111111111111111111111111|NULL"), text: "bin(a)"},
		{name: "bin of text", cols: []scalarCol{scol(tyStr, "5")}, build: sfn("bin"), err: "function bin expects an integer, got VARCHAR"},
		{name: "bin arity", cols: []scalarCol{scol(tyBig, 5), scol(tyBig, 5)}, build: sfn("bin"), err: "function bin expects 1 argument, got 2"},
	})
}
