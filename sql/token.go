package sql

import "strings"

// tokKind classifies a token.
type tokKind int

const (
	tkIdent  tokKind = iota // bare identifier or keyword: abc, SELECT, _utf8mb4
	tkQIdent                // backquoted identifier: `a b`
	tkString                // '...' or "..."
	tkNumber                // 12, 1.5, .5, 1e5, 0x1F, 0b101
	tkOp                    // operator or punctuation: ( ) , ; . <= <> || :: => ...
	tkParam                 // ?
)

var tokKindNames = [...]string{"ident", "qident", "string", "number", "op", "param"}

func (k tokKind) String() string { return tokKindNames[k] }

// token is one lexical token of the user's text. Comments and white space are
// not tokens. off and end are byte offsets in the whole text given to Parse.
type token struct {
	kind tokKind
	raw  string // the text as written
	val  string // identifiers: the name (backquotes removed); strings: the decoded value; else raw
	off  int
	end  int
}

// is reports whether t is the bare (unquoted) keyword kw, case-insensitively.
func (t token) is(kw string) bool {
	return t.kind == tkIdent && strings.EqualFold(t.raw, kw)
}

// op reports whether t is the operator o.
func (t token) op(o string) bool { return t.kind == tkOp && t.raw == o }

// isName reports whether t can be a name (a bare or backquoted identifier).
func (t token) isName() bool { return t.kind == tkIdent || t.kind == tkQIdent }

// multi-character operators, longest first.
var multiOps = []string{"<=>", "->>", "<=", ">=", "<>", "!=", "||", "&&", "::", "=>", ":=", "<<", ">>", "->"}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// tokenize splits text into tokens: -- (as in standard SQL, even before a digit), # and /* */
// comments; '...' strings with doubled quotes (a backslash is an ordinary
// character); `...` and "..." quoted identifiers; numbers; operators.
// Errors (unterminated string, identifier or comment) are located in text.
func tokenize(text string) ([]token, *Error) {
	toks := make([]token, 0, len(text)/5+1)
	i, n := 0, len(text)
	for i < n {
		c := text[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '#' || c == '-' && i+1 < n && text[i+1] == '-':
			for i < n && text[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return nil, errAtOff(text, i, "unterminated comment")
			}
			i += j + 4
			continue
		}
		start := i
		t := token{off: start}
		switch {
		case c == '\'':
			val, end, ok := scanQuoted(text, i, c)
			if !ok {
				return nil, errAtOff(text, start, "unterminated string literal")
			}
			t.kind, t.val, i = tkString, val, end
		case c == '`' || c == '"':
			val, end, ok := scanQuoted(text, i, c)
			if !ok {
				return nil, errAtOff(text, start, "unterminated quoted identifier")
			}
			t.kind, t.val, i = tkQIdent, val, end
		case isDigit(c) || c == '.' && i+1 < n && isDigit(text[i+1]):
			t.kind, i = tkNumber, scanNumber(text, i)
		case isIdentByte(c):
			for i < n && isIdentByte(text[i]) {
				i++
			}
			t.kind = tkIdent
		case c == '?':
			t.kind, i = tkParam, i+1
		default:
			t.kind = tkOp
			i++
			if !strings.ContainsRune("<>!|&:=-", rune(c)) {
				break
			}
			for _, o := range multiOps {
				if strings.HasPrefix(text[start:], o) {
					i = start + len(o)
					break
				}
			}
		}
		t.end = i
		t.raw = text[start:i]
		if t.kind != tkString && t.kind != tkQIdent {
			t.val = t.raw
		}
		toks = append(toks, t)
	}
	return toks, nil
}

// scanQuoted scans a quoted string or identifier starting at text[i] == q and
// returns its decoded value and the offset after the closing quote. A doubled
// quote stands for one; a backslash is an ordinary character (standard SQL, as in
// Flink, PostgreSQL and DuckDB).
func scanQuoted(text string, i int, q byte) (string, int, bool) {
	// Fast path: no doubled quote, so the value is a substring.
	for j := i + 1; j < len(text); j++ {
		if text[j] == q {
			if j+1 < len(text) && text[j+1] == q {
				break
			}
			return text[i+1 : j], j + 1, true
		}
	}
	var b strings.Builder
	for j := i + 1; j < len(text); j++ {
		c := text[j]
		if c == q {
			if j+1 < len(text) && text[j+1] == q {
				b.WriteByte(q)
				j++
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(c)
	}
	return "", len(text), false
}

// scanNumber scans a numeric literal starting at text[i] and returns its end.
func scanNumber(text string, i int) int {
	n := len(text)
	if text[i] == '0' && i+2 < n && (text[i+1] == 'x' || text[i+1] == 'X' || text[i+1] == 'b' || text[i+1] == 'B') && isIdentByte(text[i+2]) {
		j := i + 2
		for j < n && isIdentByte(text[j]) {
			j++
		}
		return j
	}
	for i < n && isDigit(text[i]) {
		i++
	}
	if i < n && text[i] == '.' {
		i++
		for i < n && isDigit(text[i]) {
			i++
		}
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		j := i + 1
		if j < n && (text[j] == '+' || text[j] == '-') {
			j++
		}
		if j < n && isDigit(text[j]) {
			for j < n && isDigit(text[j]) {
				j++
			}
			i = j
		}
	}
	return i
}
