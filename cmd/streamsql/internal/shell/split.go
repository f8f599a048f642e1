package shell

import (
	"strings"
	"unicode"
)

// splitStatements cuts text at each `;` that is outside quotes ('..', "..",
// `..`; a backslash is an ordinary character, as the engine reads strings) and
// comments (-- or # to end of line, /* ... */), as the engine's tokenizer finds them. It returns the complete
// statements, trimmed and without their `;`, dropping those that hold only
// whitespace and comments, and the unfinished text after the last `;`.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(text, i)
			continue
		case c == '#' || c == '-' && strings.HasPrefix(text[i:], "--"):
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(text)
			}
			continue
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(text)
			}
			continue
		case c == ';':
			if s := strings.TrimSpace(text[start:i]); !onlyComments(s) {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
		i++
	}
	return stmts, text[start:]
}

// skipQuoted returns the index just past the quoted string starting at i,
// or len(text) if it is not closed. A doubled quote stays inside.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// onlyComments reports whether text holds nothing but whitespace and
// comments.
func onlyComments(text string) bool {
	return stripComments(text) == ""
}

// stripComments removes leading whitespace and comments and returns the
// rest of text.
func stripComments(text string) string {
	for {
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
		switch {
		case strings.HasPrefix(text, "--") || strings.HasPrefix(text, "#"):
			j := strings.IndexByte(text, '\n')
			if j < 0 {
				return ""
			}
			text = text[j+1:]
		case strings.HasPrefix(text, "/*"):
			j := strings.Index(text, "*/")
			if j < 0 {
				return text // an unclosed comment: the statement goes on
			}
			text = text[j+2:]
		default:
			return text
		}
	}
}

// firstKeyword returns the statement's first word in upper case, skipping
// comments; a leading `(` yields "(".
func firstKeyword(stmt string) string {
	s := stripComments(stmt)
	if strings.HasPrefix(s, "(") {
		return "("
	}
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '_' })
	if end < 0 {
		end = len(s)
	}
	return strings.ToUpper(s[:end])
}

// returnsRows reports whether a statement is run with Query (and its rows
// printed) rather than Exec.
func returnsRows(stmt string) bool {
	switch firstKeyword(stmt) {
	case "SELECT", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "SUBSCRIBE", "WITH", "VALUES", "TABLE", "(":
		return true
	}
	return false
}
