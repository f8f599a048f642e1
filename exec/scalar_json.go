package exec

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/streamsql/streamsql/types"
)

// JSON_VALUE(json, path) is Flink's with its defaults, NULL ON EMPTY and NULL ON ERROR:
// the scalar at path as VARCHAR — a JSON string unquoted, a number or boolean as its JSON
// text (1.50 stays 1.50) — and NULL when the text is not JSON, the path leads nowhere, or
// it leads to an object, an array or a JSON null. DuckDB's json_extract_string is the same
// function here. Of duplicate keys in an object, the last counts.
//
// Paths are the subset of SQL/JSON paths (and JSONPath) every one of those engines reads:
// an optional mode (lax or strict, alike here), $ for the whole document, then any of .name,
// ['name'] (or "name", also written .['name'] as in Flink's documentation) and [n], a 0-based
// array index. A constant path is parsed when the call is built, so a malformed one is an
// error of the statement; a path computed per row is parsed as it changes, and a malformed
// one is a data error.

// jsonStep is one step of a path: a member name, or an array index when isIndex.
type jsonStep struct {
	name    string
	index   int
	isIndex bool
}

// parseJSONPath parses path for function fn.
func parseJSONPath(fn, path string) ([]jsonStep, error) {
	rs := []rune(path)
	i := 0
	fail := func(format string, a ...any) ([]jsonStep, error) {
		return nil, fmt.Errorf("function %s: invalid JSON path '%s' at character %d: %s", fn, path, i+1, fmt.Sprintf(format, a...))
	}
	// A mode, lax or strict (any case), may come first, as in Flink's own examples
	// ('lax $.b', 'strict $.b'). With NULL ON EMPTY and NULL ON ERROR both read alike.
	for _, mode := range []string{"lax", "strict"} {
		n := len(mode)
		if len(rs) > n && strings.EqualFold(string(rs[:n]), mode) && unicode.IsSpace(rs[n]) {
			for i = n; i < len(rs) && unicode.IsSpace(rs[i]); i++ {
			}
			break
		}
	}
	if i == len(rs) || rs[i] != '$' {
		return fail("a path starts with $")
	}
	i++
	var steps []jsonStep
	for i < len(rs) {
		switch rs[i] {
		case '.':
			i++
			if i < len(rs) && rs[i] == '[' { // $.['name'] (Flink's examples): the bracket step
				continue
			}
			start := i
			for i < len(rs) && isJSONNameRune(rs[i]) {
				i++
			}
			if i == start {
				if i < len(rs) && rs[i] == '*' {
					return fail("wildcards are not supported")
				}
				return fail("expected a member name after '.'")
			}
			steps = append(steps, jsonStep{name: string(rs[start:i])})
		case '[':
			i++
			switch {
			case i < len(rs) && (rs[i] == '\'' || rs[i] == '"'):
				q := rs[i]
				i++
				start := i
				for i < len(rs) && rs[i] != q {
					i++
				}
				if i == len(rs) {
					return fail("unterminated quoted member name")
				}
				steps = append(steps, jsonStep{name: string(rs[start:i])})
				i++
			case i < len(rs) && rs[i] >= '0' && rs[i] <= '9':
				start := i
				for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
					i++
				}
				digits := string(rs[start:i])
				n, err := strconv.Atoi(digits)
				if err != nil {
					i = start
					return fail("array index %s is too large", digits)
				}
				steps = append(steps, jsonStep{index: n, isIndex: true})
			case i < len(rs) && rs[i] == '*':
				return fail("wildcards are not supported")
			default:
				return fail("expected an array index or a quoted member name after '['")
			}
			if i == len(rs) || rs[i] != ']' {
				return fail("expected ']'")
			}
			i++
		default:
			return fail("unexpected '%c'", rs[i])
		}
	}
	return steps, nil
}

// isJSONNameRune reports whether r may appear in a member name written after a dot.
func isJSONNameRune(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// jsonValue is JSON_VALUE on one document: the text of the scalar at path, ok false for NULL.
func jsonValue(doc string, path []jsonStep) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber() // numbers keep their text
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF { // trailing text: not one JSON document
		return "", false
	}
	for _, s := range path {
		switch x := v.(type) {
		case map[string]any:
			if s.isIndex {
				return "", false
			}
			var ok bool
			if v, ok = x[s.name]; !ok {
				return "", false
			}
		case []any:
			if !s.isIndex || s.index >= len(x) {
				return "", false
			}
			v = x[s.index]
		default:
			return "", false
		}
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false // null, an object or an array
}

// newJSONValue builds json_value(json, path) and json_extract_string(json, path).
func newJSONValue(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	conv := make([]Expr, 2)
	for i, a := range args {
		x, err := textArg("function "+name, a)
		if err != nil {
			return nil, err
		}
		conv[i] = x
	}
	path, err := newCompiledArg(conv[1], func(p string) ([]jsonStep, error) { return parseJSONPath(name, p) })
	if err != nil {
		return nil, err
	}
	return &kernelExpr{t: types.TVarchar, args: conv, text: callText(name, args), k: rowKernel(types.TVarchar, true, func(v []any) (any, error) {
		p, err := path.get(v[1].(string))
		if err != nil {
			return nil, err
		}
		if s, ok := jsonValue(v[0].(string), p); ok {
			return s, nil
		}
		return nil, nil
	})}, nil
}
