package exec

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/streamsql/streamsql/types"
)

// Regular expressions are Go's (RE2 syntax): Java's and PCRE's constructs without
// backreferences or lookaround; flags go inline, (?i) for case-insensitive matching.

// compileRegexp compiles pattern for function fn, with an error naming what is wrong.
func compileRegexp(fn, pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("function %s: invalid regular expression '%s': %s", fn, pattern, se.Code)
		}
		return nil, fmt.Errorf("function %s: invalid regular expression '%s': %v", fn, pattern, err)
	}
	return re, nil
}

// newRegexpFunc builds the regular-expression functions of NewFunc; ok is false for other
// names:
//   - regexp(s, re), regexp_matches and regexp_like: whether re matches anywhere in s (Flink's
//     REGEXP, DuckDB's regexp_matches);
//   - regexp_replace(s, re, r): s with every match of re replaced by r taken literally (Flink);
//   - regexp_extract(s, re[, g]): group g (0, the default: the whole match) of the first match
//     of re in s, NULL without a match or when the group takes no part in it (Flink).
func newRegexpFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	var lo, hi int
	var t types.T
	switch name {
	case "regexp", "regexp_matches", "regexp_like":
		lo, hi, t = 2, 2, types.TBool
	case "regexp_replace":
		lo, hi, t = 3, 3, types.TVarchar
	case "regexp_extract":
		lo, hi, t = 2, 3, types.TVarchar
	default:
		return nil, false, nil
	}
	if err := argCount(name, args, lo, hi); err != nil {
		return nil, true, err
	}
	args = append([]Expr(nil), args...)
	for i := range args {
		if i == 2 && name == "regexp_extract" {
			args[i], err = intArg("function "+name, args[i])
		} else {
			args[i], err = textArg("function "+name, args[i])
		}
		if err != nil {
			return nil, true, err
		}
	}
	pat, err := newCompiledArg(args[1], func(p string) (*regexp.Regexp, error) { return compileRegexp(name, p) })
	if err != nil {
		return nil, true, err
	}
	var f func(re *regexp.Regexp, v []any) (any, error)
	switch name {
	case "regexp_replace":
		f = func(re *regexp.Regexp, v []any) (any, error) {
			return re.ReplaceAllLiteralString(v[0].(string), v[2].(string)), nil
		}
	case "regexp_extract":
		if len(args) == 3 {
			if c, ok := args[2].(*Const); ok && c.V != nil && pat.ok {
				if err := checkGroup(pat.v, c.V.(int64)); err != nil {
					return nil, true, err
				}
			}
		}
		f = extractGroup
	default:
		f = func(re *regexp.Regexp, v []any) (any, error) { return re.MatchString(v[0].(string)), nil }
	}
	return &kernelExpr{t: t, args: args, text: callText(name, args), k: rowKernel(t, true, func(v []any) (any, error) {
		re, err := pat.get(v[1].(string))
		if err != nil {
			return nil, err
		}
		return f(re, v)
	})}, true, nil
}

// checkGroup checks that re has a group g.
func checkGroup(re *regexp.Regexp, g int64) error {
	if g < 0 || g > int64(re.NumSubexp()) {
		return fmt.Errorf("function regexp_extract: group %d does not exist in '%s', which has %d", g, re, re.NumSubexp())
	}
	return nil
}

// extractGroup is regexp_extract on one row: v holds s, the pattern and the group, if given.
func extractGroup(re *regexp.Regexp, v []any) (any, error) {
	g := int64(0)
	if len(v) == 3 {
		g = v[2].(int64)
	}
	if err := checkGroup(re, g); err != nil {
		return nil, err
	}
	s := v[0].(string)
	m := re.FindStringSubmatchIndex(s)
	if m == nil || m[2*g] < 0 {
		return nil, nil
	}
	return s[m[2*g]:m[2*g+1]], nil
}
