package exec

import (
	"testing"
)

func TestScalarJSONValue(t *testing.T) {
	str := func(v string) *Const { return slit(t, v, tyStr) }
	doc := `{"a": {"b": [1, "x", true, null, {"c": 2}], "s": "q\"uo\u00e9"}, "n": 1.50, "k y": -3e2, "d": 1, "d": 2}`
	docs := func(n int) scalarCol {
		vals := make([]any, n)
		for i := range vals {
			vals[i] = doc
		}
		return scol(tyStr, vals...)
	}
	paths := []any{"$.a.b[0]", "$.a.b[1]", "$.a.b[2]", "$.a.b[3]", "$.a.b[4].c", "$.a.s", "$.n", "$['k y']", `$["a"]["b"][1]`, "$.d",
		"$.a.b", "$.a", "$", "$.a.b[5]", "$.zz", "$.a.b.c", "$.n[0]", "$.a.b[4]['c']"}
	runScalarCases(t, []scalarCase{
		{name: "json_value paths", cols: []scalarCol{docs(len(paths)), scol(tyStr, paths...)}, build: sfn("json_value"),
			want: srows(`1|x|true|NULL|2|q"uoé|1.50|-3e2|x|2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|2`), typ: "VARCHAR", text: "json_value(a, b)"},
		{name: "json_value documents", cols: []scalarCol{scol(tyStr, `{"a": "v"}`, `{"a": "v"`, `{"a": "v"} x`, `[]`, `"a"`, ``, nil, `{"a": null}`)}, build: sfnLit(t, "json_value", str("$.a")),
			want: srows("v|NULL|NULL|NULL|NULL|NULL|NULL|NULL")},
		{name: "json_value of a scalar document", cols: []scalarCol{scol(tyStr, `"a"`, `12`, ` false `)}, build: sfnLit(t, "json_value", str("$")),
			want: srows("a|12|false")},
		{name: "json_extract_string", cols: []scalarCol{scol(tyStr, `{"a": [10, 20]}`)}, build: sfnLit(t, "json_extract_string", str("$.a[1]")),
			want: srows("20"), text: "json_extract_string(a, '$.a[1]')"},
		{name: "json_value NULL path", cols: []scalarCol{scol(tyStr, `{}`)}, build: func(c []Expr) (Expr, error) {
			return NewFunc("json_value", []Expr{c[0], &Const{T: tyNull}})
		}, want: srows("NULL")},
		{name: "json_value path modes and .[", cols: []scalarCol{docs(4), scol(tyStr, "lax $.a.b[1]", "STRICT  $.n", "strict $.zz", "$.['k y']")},
			build: sfn("json_value"), want: srows("x|1.50|NULL|-3e2")},
		{name: "json_value lax without a path", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("lax")),
			err: "invalid JSON path 'lax' at character 1: a path starts with $"},
		{name: "json_value path without $", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("a.b")),
			err: "function json_value: invalid JSON path 'a.b' at character 1: a path starts with $"},
		{name: "json_value unclosed bracket", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$.a[0")),
			err: "invalid JSON path '$.a[0' at character 6: expected ']'"},
		{name: "json_value unterminated name", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$['a]")),
			err: "at character 6: unterminated quoted member name"},
		{name: "json_value empty member", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$.a..b")),
			err: "at character 5: expected a member name after '.'"},
		{name: "json_value wildcard", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$.a[*]")),
			err: "at character 5: wildcards are not supported"},
		{name: "json_value negative index", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$[-1]")),
			err: "at character 3: expected an array index or a quoted member name after '['"},
		{name: "json_value trailing text", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfnLit(t, "json_value", str("$.a b")),
			err: "at character 4: unexpected ' '"},
		{name: "json_value per-row bad path is a data error", cols: []scalarCol{scol(tyStr, `{}`, `{}`), scol(tyStr, "$.a", "$.")}, build: sfn("json_value"),
			err: "invalid JSON path '$.' at character 3"},
		{name: "json_value of a number", cols: []scalarCol{scol(tyBig, 1)}, build: sfnLit(t, "json_value", str("$")),
			err: "function json_value expects VARCHAR, got BIGINT"},
		{name: "json_value arity", cols: []scalarCol{scol(tyStr, `{}`)}, build: sfn("json_value"), err: "function json_value expects 2 arguments, got 1"},
	})
}

// FuzzJSONValue: any path and document give a value, NULL or a path error, never a panic.
func FuzzJSONValue(f *testing.F) {
	f.Add(`{"a":{"b":[1,"x",true,null]}}`, `$.a.b[1]`)
	f.Add(`[{"k":"v"}]`, `$[0]['k']`)
	f.Add(`{"a":1.50}`, `$.a`)
	f.Fuzz(func(t *testing.T, doc, path string) {
		if steps, err := parseJSONPath("json_value", path); err == nil {
			jsonValue(doc, steps)
		}
	})
}
