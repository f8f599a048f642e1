package sql

import (
	"fmt"
	"slices"
	"strings"
)

// Grouping sets: GROUP BY GROUPING SETS (...), ROLLUP (...) and CUBE (...), rewritten for
// TiDB's grammar (see doc.go).

// groupEnd is the end of the GROUP BY list starting at i: the first token, at its depth, that
// ends it (HAVING, WINDOW, ORDER, LIMIT, a set operation, EMIT, a closing parenthesis) or j.
func (r *rewriter) groupEnd(i, j int) int {
	depth := 0
	for k := i; k < j; k++ {
		t := r.toks[k]
		switch {
		case t.op("("):
			depth++
		case t.op(")"):
			if depth == 0 {
				return k
			}
			depth--
		case depth == 0 && (t.op(";") || t.is("HAVING") || t.is("WINDOW") || t.is("ORDER") || t.is("LIMIT") ||
			t.is("UNION") || t.is("EXCEPT") || t.is("INTERSECT") || t.is("EMIT")):
			return k
		}
	}
	return j
}

// groupingSets returns the first GROUPING SETS, ROLLUP or CUBE item of the GROUP BY list at
// i, or -1.
func (r *rewriter) groupingSets(i, j int) int {
	e := r.groupEnd(i, j)
	depth := 0
	for k := i; k < e; k++ {
		t := r.toks[k]
		switch {
		case t.op("("):
			depth++
		case t.op(")"):
			depth--
		case depth == 0 && (k == i || r.toks[k-1].op(",")) &&
			(t.is("GROUPING") && r.at(k+1).is("SETS") || (t.is("ROLLUP") || t.is("CUBE")) && r.at(k+1).op("(")):
			return k
		}
	}
	return -1
}

// splitCommas splits tokens [i, e) at their commas of depth 0 into ranges.
func (r *rewriter) splitCommas(i, e int) [][2]int {
	var out [][2]int
	depth, start := 0, i
	for k := i; k < e; k++ {
		switch t := r.toks[k]; {
		case t.op("("):
			depth++
		case t.op(")"):
			depth--
		case t.op(",") && depth == 0:
			out = append(out, [2]int{start, k})
			start = k + 1
		}
	}
	return append(out, [2]int{start, e})
}

// maxGroupingSets bounds the grouping sets of one GROUP BY (CUBE of n columns makes 2^n).
const maxGroupingSets = 4096

// rewriteGroupingSets emits the GROUP BY clause at k (GROUP), whose items include GROUPING
// SETS (...), ROLLUP (...) or CUBE (...), as GROUP BY e1, e2, ..., then the carrier
// `__sx_grouping_sets`('[[0,1],[0],[]]'): every distinct grouping expression once, in the
// order they first appear, and the grouping sets as lists of their indexes (see doc.go). It
// returns the index after the clause.
func (r *rewriter) rewriteGroupingSets(k, j int) (int, *Error) {
	e := r.groupEnd(k+2, j)
	var keys [][2]int // the distinct expressions' token ranges
	keyOf := map[string]int{}
	key := func(rg [2]int) (int, *Error) {
		if rg[0] >= rg[1] {
			return 0, r.errAt(rg[0], "expected an expression in GROUP BY")
		}
		var sb strings.Builder
		for _, t := range r.toks[rg[0]:rg[1]] {
			if t.kind == tkString {
				sb.WriteString(t.raw)
			} else {
				sb.WriteString(strings.ToLower(t.raw))
			}
			sb.WriteByte(' ')
		}
		text := sb.String()
		if x, ok := keyOf[text]; ok {
			return x, nil
		}
		keyOf[text] = len(keys)
		keys = append(keys, rg)
		return len(keys) - 1, nil
	}
	// list reads a parenthesized list of expressions at p (its "(" token) as keys.
	list := func(p int) ([]int, *Error) {
		m := r.matchParen(p)
		if m < 0 || m > e {
			return nil, r.errAt(p, "missing )")
		}
		if m == p+1 {
			return nil, nil // ()
		}
		var out []int
		for _, rg := range r.splitCommas(p+1, m) {
			x, err := key(rg)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	sets := [][]int{{}}
	for _, it := range r.splitCommas(k+2, e) {
		var item [][]int // the sets this item contributes
		first := r.at(it[0])
		switch {
		case first.is("GROUPING") && r.at(it[0]+1).is("SETS"):
			p := it[0] + 2
			if !r.at(p).op("(") || r.matchParen(p) != it[1]-1 {
				return 0, r.errAt(p, "expected GROUPING SETS ((a, b), (a), ())")
			}
			for _, rg := range r.splitCommas(p+1, it[1]-1) {
				if t := r.at(rg[0]); t.is("ROLLUP") || t.is("CUBE") || t.is("GROUPING") {
					return 0, r.errAt(rg[0], "%s inside GROUPING SETS is not supported", strings.ToUpper(t.raw))
				}
				if r.at(rg[0]).op("(") && r.matchParen(rg[0]) == rg[1]-1 {
					set, err := list(rg[0])
					if err != nil {
						return 0, err
					}
					item = append(item, set)
					continue
				}
				x, err := key(rg)
				if err != nil {
					return 0, err
				}
				item = append(item, []int{x})
			}
		case (first.is("ROLLUP") || first.is("CUBE")) && r.at(it[0]+1).op("("):
			if r.matchParen(it[0]+1) != it[1]-1 {
				return 0, r.errAt(it[0], "expected %s(a, b, ...)", strings.ToUpper(first.raw))
			}
			xs, err := list(it[0] + 1)
			if err != nil {
				return 0, err
			}
			if first.is("ROLLUP") {
				for n := len(xs); n >= 0; n-- {
					item = append(item, xs[:n])
				}
			} else {
				if len(xs) > 12 {
					return 0, r.errAt(it[0], "CUBE of more than 12 expressions is not supported")
				}
				for m := (1 << len(xs)) - 1; m >= 0; m-- {
					var set []int
					for b, x := range xs {
						if m&(1<<b) != 0 {
							set = append(set, x)
						}
					}
					item = append(item, set)
				}
			}
		default:
			x, err := key(it)
			if err != nil {
				return 0, err
			}
			item = [][]int{{x}}
		}
		var next [][]int
		for _, s := range sets {
			for _, t := range item {
				next = append(next, append(slices.Clone(s), t...))
			}
		}
		if len(next) > maxGroupingSets {
			return 0, r.errAt(it[0], "more than %d grouping sets", maxGroupingSets)
		}
		sets = next
	}
	r.syn("GROUP BY", r.toks[k].off)
	for i, rg := range keys {
		if i > 0 {
			r.syn(",", r.toks[rg[0]].off)
		}
		if err := r.rewriteRange(rg[0], rg[1]); err != nil {
			return 0, err
		}
	}
	var spec strings.Builder
	spec.WriteByte('[')
	for i, s := range sets {
		if i > 0 {
			spec.WriteByte(',')
		}
		slices.Sort(s)
		s = slices.Compact(s)
		spec.WriteString(strings.ReplaceAll(fmt.Sprint(s), " ", ","))
	}
	spec.WriteByte(']')
	sep := ","
	if len(keys) == 0 {
		sep = ""
	}
	r.syn(sep+" `__sx_grouping_sets`('"+spec.String()+"')", r.toks[k].off)
	return e, nil
}
