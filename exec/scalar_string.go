package exec

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// textArg checks that argument i of fn is VARCHAR (an untyped NULL becomes a VARCHAR NULL).
func textArg(fn string, e Expr) (Expr, error) {
	switch e.Type().Kind {
	case types.Varchar:
		return e, nil
	case types.Null:
		return newCast(e, types.TVarchar, false, true), nil
	}
	return nil, fmt.Errorf("%s expects VARCHAR, got %s", fn, e.Type())
}

// intArg checks that an argument of fn is INT or BIGINT (an untyped NULL becomes BIGINT).
func intArg(fn string, e Expr) (Expr, error) {
	switch e.Type().Kind {
	case types.Int, types.BigInt:
		return e, nil
	case types.Null:
		return newCast(e, types.TBigInt, false, true), nil
	}
	return nil, fmt.Errorf("%s expects an integer, got %s", fn, e.Type())
}

// asText converts any expression to VARCHAR as CAST would, without showing the cast.
func asText(e Expr) Expr {
	if e.Type().Kind == types.Varchar {
		return e
	}
	return newCast(e, types.TVarchar, false, true)
}

// rowKernel evaluates f row by row: the shape of string functions, where per-row work
// dominates the boxing of arguments. A strict kernel is NULL where any argument is NULL and
// never calls f there; a non-strict one passes nils to f.
func rowKernel(t types.T, strict bool, f func(vals []any) (any, error)) func(as []arrow.Array, n int) (arrow.Array, error) {
	return func(as []arrow.Array, n int) (arrow.Array, error) {
		bl := NewBuilder(t, n)
		vals := make([]any, len(as))
		size := 0 // of the strings built
		for i := 0; i < n; i++ {
			null := false
			for j, a := range as {
				vals[j] = Value(a, i)
				null = null || vals[j] == nil
			}
			if null && strict {
				bl.Append(nil)
				continue
			}
			v, err := f(vals)
			if err != nil {
				return nil, err
			}
			if s, ok := v.(string); ok {
				if size += len(s); size > maxColumnBytes {
					return nil, fmt.Errorf("the results of %d rows would be longer than %d bytes, the most a text column holds", i+1, maxColumnBytes)
				}
			}
			bl.Append(v)
		}
		return bl.Finish(), nil
	}
}

// compiledArg is a pattern argument (a regular expression, a time format) compiled once
// when it is a constant, so that a bad one is an error when the call is built, else when
// it changes from row to row.
type compiledArg[T any] struct {
	compile func(string) (T, error)
	last    string
	ok      bool // v is last compiled
	v       T
}

// newCompiledArg compiles the pattern argument p if it is a constant.
func newCompiledArg[T any](p Expr, compile func(string) (T, error)) (*compiledArg[T], error) {
	c := &compiledArg[T]{compile: compile}
	if k, ok := p.(*Const); ok && k.V != nil {
		if _, err := c.get(k.V.(string)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// get returns pattern p compiled.
func (c *compiledArg[T]) get(p string) (T, error) {
	if c.ok && p == c.last {
		return c.v, nil
	}
	v, err := c.compile(p)
	if err != nil {
		return v, err
	}
	c.v, c.last, c.ok = v, p, true
	return v, nil
}

// newConcatOp is l || r: NULL if either side is NULL; non-VARCHAR operands are rendered as
// text first (PostgreSQL's anynonarray || text).
func newConcatOp(l, r Expr) (Expr, error) {
	l, r = asText(l), asText(r)
	return &binaryExpr{op: "||", l: l, r: r, t: types.TVarchar, k: func(l, r operand, n int) (arrow.Array, error) {
		valid, _ := andValidity(n, l.a, r.a)
		b := array.NewStringBuilder(Mem)
		defer b.Release()
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if !isValidAt(valid, i) {
				b.AppendNull()
				continue
			}
			b.Append(l.str(i) + r.str(i))
		}
		return b.NewArray(), nil
	}}, nil
}

// likeMatcher is a compiled LIKE pattern. Patterns without _ are matched by segments
// between %s with strings.HasPrefix/Index/HasSuffix (greedy leftmost placement of the middle
// segments is optimal); patterns with _ use a backtracking matcher over runes.
type likeMatcher struct {
	segs  []string // literal runs between %; len 1 means no %
	toks  []likeTok
	under bool // pattern contains _
}

type likeTok struct {
	kind byte // 'l' literal rune, '_' one character, '%' any run
	r    rune
}

// compileLike parses pattern with the given escape character (0: none). Matching is
// case-sensitive and by character, not byte.
func compileLike(pattern string, escape rune) (*likeMatcher, error) {
	m := &likeMatcher{}
	var cur strings.Builder
	esc := false
	for _, c := range pattern {
		switch {
		case esc:
			m.toks = append(m.toks, likeTok{kind: 'l', r: c})
			cur.WriteRune(c)
			esc = false
		case escape != 0 && c == escape:
			esc = true
		case c == '%':
			if n := len(m.toks); n == 0 || m.toks[n-1].kind != '%' {
				m.toks = append(m.toks, likeTok{kind: '%'})
			}
			m.segs = append(m.segs, cur.String())
			cur.Reset()
		case c == '_':
			m.toks = append(m.toks, likeTok{kind: '_'})
			m.under = true
		default:
			m.toks = append(m.toks, likeTok{kind: 'l', r: c})
			cur.WriteRune(c)
		}
	}
	if esc {
		return nil, fmt.Errorf("LIKE pattern %q must not end with the escape character", pattern)
	}
	m.segs = append(m.segs, cur.String())
	return m, nil
}

func (m *likeMatcher) match(s string) bool {
	if !m.under {
		segs := m.segs
		if len(segs) == 1 {
			return s == segs[0]
		}
		first, last := segs[0], segs[len(segs)-1]
		if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
			return false
		}
		mid := s[len(first) : len(s)-len(last)]
		for _, seg := range segs[1 : len(segs)-1] {
			i := strings.Index(mid, seg)
			if i < 0 {
				return false
			}
			mid = mid[i+len(seg):]
		}
		return true
	}
	// Backtracking over the last %: linear in practice, O(len(s)*len(pattern)) at worst.
	toks := m.toks
	si, ti := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				_, w := utf8.DecodeRuneInString(s[si:])
				si += w
				ti++
				continue
			default:
				r, w := utf8.DecodeRuneInString(s[si:])
				if r == t.r {
					si += w
					ti++
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		si, ti = starS, starT+1
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}

// NewLike returns e [NOT] LIKE pattern [ESCAPE escape]: case-sensitive, % matches any run of
// characters and _ exactly one; escape (0 for none; the binder passes '\' by default, as
// MySQL and PostgreSQL do) makes the next character literal. A literal pattern is compiled
// once here, so a bad one is a construction error.
func NewLike(e, pattern Expr, escape rune, not bool) (Expr, error) {
	e, err := textArg("LIKE", e)
	if err != nil {
		return nil, err
	}
	if pattern, err = textArg("LIKE", pattern); err != nil {
		return nil, err
	}
	kw := "LIKE"
	if not {
		kw = "NOT LIKE"
	}
	text := fmt.Sprintf("(%s %s %s)", e, kw, pattern)
	if escape != 0 && escape != '\\' {
		text = fmt.Sprintf("(%s %s %s ESCAPE '%c')", e, kw, pattern, escape)
	}
	if c, ok := pattern.(*Const); ok && c.V != nil {
		m, err := compileLike(c.V.(string), escape)
		if err != nil {
			return nil, err
		}
		return &kernelExpr{t: types.TBool, args: []Expr{e}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
			sa := as[0].(*array.String)
			out := make([]byte, (n+7)/8)
			for i := 0; i < n; i++ {
				if sa.IsValid(i) {
					out[i>>3] |= b2u(m.match(sa.Value(i)) != not) << (i & 7)
				}
			}
			valid, nulls := andValidity(n, as[0])
			return makeBool(out, n, valid, nulls), nil
		}}, nil
	}
	// A per-row pattern: compile it when it changes.
	var last string
	var lm *likeMatcher
	return &kernelExpr{t: types.TBool, args: []Expr{e, pattern}, text: text, k: rowKernel(types.TBool, true, func(v []any) (any, error) {
		p := v[1].(string)
		if lm == nil || p != last {
			m, err := compileLike(p, escape)
			if err != nil {
				return nil, err
			}
			lm, last = m, p
		}
		return lm.match(v[0].(string)) != not, nil
	})}, nil
}

// substring implements SQL's SUBSTRING(s FROM pos [FOR n]) on characters: positions are
// 1-based and the window [pos, pos+n) is clipped to the string, so pos <= 0 eats into n
// (substring('hello', 0, 3) = 'he'), as PostgreSQL and the standard say. A negative length
// is an error.
func substring(s string, pos int64, n int64, hasLen bool) (string, error) {
	if hasLen && n < 0 {
		return "", fmt.Errorf("negative substring length not allowed")
	}
	start := max(pos, 1)
	var end int64                     // exclusive, in characters, when bounded
	bounded := hasLen && pos+n >= pos // pos+n overflowing means unbounded
	if bounded {
		end = pos + n
		if end <= start {
			return "", nil
		}
	}
	// Walk characters to byte offsets.
	ci := int64(1)
	bs, be := len(s), len(s)
	for bi := range s {
		if ci == start {
			bs = bi
		}
		if bounded && ci == end {
			be = bi
			break
		}
		ci++
	}
	if bs > be {
		return "", nil
	}
	return s[bs:be], nil
}

// runeIndex returns the 1-based character position of sub in s at or after character from
// (1-based), or 0.
func runeIndex(s, sub string, from int64) int64 {
	if from < 1 {
		return 0
	}
	off := 0
	for c := int64(1); c < from; c++ {
		if off >= len(s) {
			return 0
		}
		_, w := utf8.DecodeRuneInString(s[off:])
		off += w
	}
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return 0
	}
	return int64(utf8.RuneCountInString(s[:off+i])) + 1
}

// newStringFunc builds the string functions of NewFunc; ok is false for other names.
func newStringFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	args = append([]Expr(nil), args...) // converted in place below; the caller's slice is kept
	nargs := func(lo, hi int) error { return argCount(name, args, lo, hi) }
	texts := func(idx ...int) error {
		for _, i := range idx {
			if i < len(args) {
				if args[i], err = textArg("function "+name, args[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// sig checks the number of arguments and their kinds: kinds[i] is 't' for VARCHAR, 'i'
	// for an integer.
	sig := func(lo, hi int, kinds string) error {
		if err := nargs(lo, hi); err != nil {
			return err
		}
		for i := range args {
			switch kinds[i] {
			case 't':
				args[i], err = textArg("function "+name, args[i])
			case 'i':
				args[i], err = intArg("function "+name, args[i])
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	mk := func(t types.T, strict bool, f func(v []any) (any, error)) (Expr, bool, error) {
		return &kernelExpr{t: t, args: args, text: callText(name, args), k: rowKernel(t, strict, f)}, true, nil
	}
	switch name {
	case "lower", "upper":
		if err := nargs(1, 1); err != nil {
			return nil, true, err
		}
		if err := texts(0); err != nil {
			return nil, true, err
		}
		f := strings.ToLower
		if name == "upper" {
			f = strings.ToUpper
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) { return f(v[0].(string)), nil })
	case "length", "char_length", "character_length":
		if err := nargs(1, 1); err != nil {
			return nil, true, err
		}
		if err := texts(0); err != nil {
			return nil, true, err
		}
		return mk(types.TBigInt, true, func(v []any) (any, error) { return int64(utf8.RuneCountInString(v[0].(string))), nil })
	case "octet_length", "bit_length":
		// The length of s's UTF-8 encoding in bytes, or in bits (PostgreSQL, MySQL).
		if err := sig(1, 1, "t"); err != nil {
			return nil, true, err
		}
		return &kernelExpr{t: types.TBigInt, args: args, text: callText(name, args), k: byteLength(map[string]int64{"octet_length": 1, "bit_length": 8}[name])}, true, nil
	case "substring", "substr":
		if err := nargs(2, 3); err != nil {
			return nil, true, err
		}
		if err := texts(0); err != nil {
			return nil, true, err
		}
		for i := 1; i < len(args); i++ {
			if args[i], err = intArg("function "+name, args[i]); err != nil {
				return nil, true, err
			}
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			if len(v) == 3 {
				return substring(v[0].(string), v[1].(int64), v[2].(int64), true)
			}
			return substring(v[0].(string), v[1].(int64), 0, false)
		})
	case "left", "right":
		// PostgreSQL: the first (last) n characters; a negative n drops the last (first) |n|.
		if err := nargs(2, 2); err != nil {
			return nil, true, err
		}
		if err := texts(0); err != nil {
			return nil, true, err
		}
		if args[1], err = intArg("function "+name, args[1]); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			r := []rune(v[0].(string))
			n, l := v[1].(int64), int64(len(r))
			k := min(n, l)
			if n < 0 {
				k = max(l+n, 0)
			}
			if name == "left" {
				return string(r[:k]), nil
			}
			return string(r[l-k:]), nil
		})
	case "concat":
		// PostgreSQL: NULL arguments are skipped, so the result is never NULL.
		if err := nargs(1, -1); err != nil {
			return nil, true, err
		}
		for i := range args {
			args[i] = asText(args[i])
		}
		return mk(types.TVarchar, false, func(v []any) (any, error) {
			var sb strings.Builder
			for _, x := range v {
				if x != nil {
					sb.WriteString(x.(string))
				}
			}
			return sb.String(), nil
		})
	case "concat_ws":
		// NULL separator: NULL; NULL arguments are skipped (PostgreSQL, MySQL).
		if err := nargs(2, -1); err != nil {
			return nil, true, err
		}
		if err := texts(0); err != nil {
			return nil, true, err
		}
		for i := 1; i < len(args); i++ {
			args[i] = asText(args[i])
		}
		return mk(types.TVarchar, false, func(v []any) (any, error) {
			if v[0] == nil {
				return nil, nil
			}
			var parts []string
			for _, x := range v[1:] {
				if x != nil {
					parts = append(parts, x.(string))
				}
			}
			return strings.Join(parts, v[0].(string)), nil
		})
	case "trim", "btrim", "ltrim", "rtrim":
		// trim(s) removes spaces; trim(s, chars) removes any of chars (PostgreSQL btrim).
		if err := nargs(1, 2); err != nil {
			return nil, true, err
		}
		if err := texts(0, 1); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			cut := " "
			if len(v) == 2 {
				cut = v[1].(string)
			}
			s := v[0].(string)
			switch name {
			case "ltrim":
				return strings.TrimLeft(s, cut), nil
			case "rtrim":
				return strings.TrimRight(s, cut), nil
			}
			return strings.Trim(s, cut), nil
		})
	case "replace":
		if err := nargs(3, 3); err != nil {
			return nil, true, err
		}
		if err := texts(0, 1, 2); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			if v[1].(string) == "" { // PostgreSQL: nothing to replace
				return v[0], nil
			}
			return strings.ReplaceAll(v[0].(string), v[1].(string), v[2].(string)), nil
		})
	case "lpad", "rpad":
		// Flink, PostgreSQL: padded with pad (a space by default) or cut to n characters.
		if err := sig(2, 3, "tit"); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			fill := " "
			if len(v) == 3 {
				fill = v[2].(string)
			}
			return pad(name, v[0].(string), v[1].(int64), fill)
		})
	case "repeat":
		if err := sig(2, 2, "ti"); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) { return repeat(v[0].(string), v[1].(int64)) })
	case "reverse", "initcap", "md5":
		if err := sig(1, 1, "t"); err != nil {
			return nil, true, err
		}
		f := map[string]func(string) string{"reverse": reverse, "initcap": initcap, "md5": md5Hex}[name]
		return mk(types.TVarchar, true, func(v []any) (any, error) { return f(v[0].(string)), nil })
	case "ascii":
		// The code point of the first character, 0 for the empty string (Flink, PostgreSQL).
		if err := sig(1, 1, "t"); err != nil {
			return nil, true, err
		}
		return mk(types.TInt, true, func(v []any) (any, error) {
			r, _ := utf8.DecodeRuneInString(v[0].(string))
			if r == utf8.RuneError {
				r = 0
			}
			return int64(r), nil
		})
	case "chr":
		// Flink: the character of code n modulo 256 (Latin-1), the empty string for n < 0.
		if err := sig(1, 1, "i"); err != nil {
			return nil, true, err
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) {
			if n := v[0].(int64); n >= 0 {
				return string(rune(n & 0xFF)), nil
			}
			return "", nil
		})
	case "split_part", "split_index":
		if err := sig(3, 3, "tti"); err != nil {
			return nil, true, err
		}
		f := splitPart
		if name == "split_index" {
			f = splitIndex
		}
		return mk(types.TVarchar, true, func(v []any) (any, error) { return f(v[0].(string), v[1].(string), v[2].(int64)) })
	case "starts_with", "startswith", "ends_with", "endswith":
		if err := sig(2, 2, "tt"); err != nil {
			return nil, true, err
		}
		f := strings.HasPrefix
		if strings.HasPrefix(name, "ends") {
			f = strings.HasSuffix
		}
		return mk(types.TBool, true, func(v []any) (any, error) { return f(v[0].(string), v[1].(string)), nil })
	case "position", "strpos", "instr", "locate":
		// position(sub, s) and locate(sub, s[, from]) (MySQL) take the needle first;
		// strpos(s, sub) (PostgreSQL) and instr(s, sub) (MySQL, Flink, DuckDB) the haystack.
		// All return a 1-based character index, 0 when absent.
		lo, hi := 2, 2
		if name == "locate" {
			hi = 3
		}
		if err := nargs(lo, hi); err != nil {
			return nil, true, err
		}
		if err := texts(0, 1); err != nil {
			return nil, true, err
		}
		if len(args) == 3 {
			if args[2], err = intArg("function "+name, args[2]); err != nil {
				return nil, true, err
			}
		}
		return mk(types.TBigInt, true, func(v []any) (any, error) {
			sub, s := v[0].(string), v[1].(string)
			if name == "strpos" || name == "instr" {
				sub, s = s, sub
			}
			from := int64(1)
			if len(v) == 3 {
				from = v[2].(int64)
			}
			return runeIndex(s, sub, from), nil
		})
	}
	return nil, false, nil
}

// byteLength is the kernel of octet_length (unit 1) and bit_length (unit 8): the bytes of
// each string times unit, read from the offsets without touching the text.
func byteLength(unit int64) func(as []arrow.Array, n int) (arrow.Array, error) {
	return func(as []arrow.Array, n int) (arrow.Array, error) {
		sa := as[0].(*array.String)
		dst := make([]int64, n)
		for i := range dst {
			dst[i] = int64(sa.ValueLen(i)) * unit
		}
		valid, nulls := andValidity(n, as[0])
		return makeInt64(dst, valid, nulls), nil
	}
}

// maxTextBytes bounds the strings REPEAT and LPAD/RPAD build, well inside the 2 GiB an
// Arrow string column holds.
const maxTextBytes = 1 << 30

// maxColumnBytes bounds the strings of a column a string function builds: an Arrow text
// column's offsets are int32. (A variable only so that a test need not build 2 GiB.)
var maxColumnBytes = math.MaxInt32

// errTextTooLong is the error of a function whose result would pass maxTextBytes.
func errTextTooLong(fn string) error {
	return fmt.Errorf("function %s: the result would be longer than %d bytes", fn, maxTextBytes)
}

// pad is lpad/rpad(s, n, fill) (fn names which): s cut or padded with repeats of fill to n
// characters; NULL when n is negative or fill is empty, as in Flink.
func pad(fn, s string, n int64, fill string) (any, error) {
	if n < 0 || fill == "" {
		return nil, nil
	}
	if n > maxTextBytes/utf8.UTFMax {
		return nil, errTextTooLong(fn)
	}
	r := []rune(s)
	if int64(len(r)) >= n {
		return string(r[:n]), nil
	}
	f := []rune(fill)
	out := make([]rune, 0, n)
	need := int(n) - len(r)
	if fn == "rpad" {
		out = append(out, r...)
	}
	for i := 0; i < need; i++ {
		out = append(out, f[i%len(f)])
	}
	if fn == "lpad" {
		out = append(out, r...)
	}
	return string(out), nil
}

// repeat is s repeated n times (empty for n <= 0).
func repeat(s string, n int64) (any, error) {
	if n <= 0 || s == "" {
		return "", nil
	}
	if n > maxTextBytes/int64(len(s)) {
		return nil, errTextTooLong("repeat")
	}
	return strings.Repeat(s, int(n)), nil
}

// reverse reverses s by characters.
func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// initcap upper-cases the first letter of each word and lower-cases the rest, a word being
// a run of letters and digits (Flink, PostgreSQL).
func initcap(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	inWord := false
	for _, c := range s {
		if inWord {
			sb.WriteRune(unicode.ToLower(c))
		} else {
			sb.WriteRune(unicode.ToUpper(c))
		}
		inWord = unicode.IsLetter(c) || unicode.IsDigit(c)
	}
	return sb.String()
}

// md5Hex is the MD5 digest of s's UTF-8 bytes in lower-case hex.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// splitPart is PostgreSQL's split_part: field n (1-based; negative counts from the end) of s
// split on delim, empty when there is no such field. An empty delimiter does not split.
func splitPart(s, delim string, n int64) (any, error) {
	if n == 0 {
		return nil, fmt.Errorf("function split_part: field position must not be zero")
	}
	fields := []string{s}
	if delim != "" {
		fields = strings.Split(s, delim)
	}
	if n < 0 {
		n += int64(len(fields)) + 1
	}
	if n < 1 || n > int64(len(fields)) {
		return "", nil
	}
	return fields[n-1], nil
}

// splitIndex is Flink's SPLIT_INDEX: field i (0-based) of s split on delim, NULL when there
// is no such field (an empty s has none). An empty delimiter does not split.
func splitIndex(s, delim string, i int64) (any, error) {
	if i < 0 || s == "" {
		return nil, nil
	}
	fields := []string{s}
	if delim != "" {
		fields = strings.Split(s, delim)
	}
	if i >= int64(len(fields)) {
		return nil, nil
	}
	return fields[i], nil
}

// argCount checks that fn got between lo and hi arguments (hi < 0: no upper bound).
func argCount(fn string, args []Expr, lo, hi int) error {
	n := len(args)
	if n >= lo && (hi < 0 || n <= hi) {
		return nil
	}
	switch {
	case lo == hi:
		return fmt.Errorf("function %s expects %d argument%s, got %d", fn, lo, plural(lo), n)
	case hi < 0:
		return fmt.Errorf("function %s expects at least %d argument%s, got %d", fn, lo, plural(lo), n)
	}
	return fmt.Errorf("function %s expects %d to %d arguments, got %d", fn, lo, hi, n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
