package slt

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

type kind int

const (
	kindStatement kind = iota
	kindQuery
	kindHashThreshold
	kindHalt
)

type sortMode int

const (
	noSort sortMode = iota
	rowSort
	valueSort
)

// cond is one skipif/onlyif line in front of a record.
type cond struct {
	only   bool // onlyif, else skipif
	engine string
}

// record is one parsed sqllogictest record.
type record struct {
	kind kind
	line int    // line of the record's header (1-based)
	sql  string // statement or query text, lines joined by "\n"

	expectErr bool           // statement error / query error
	errRe     *regexp.Regexp // nil: any error
	errText   string         // expected error text after "----" (substring)

	types    string // query column type letters
	sort     sortMode
	label    string
	expected []string // expected values (or lines), after "----"

	threshold int // for kindHashThreshold
	conds     []cond
}

// parse reads all records of a file. It fails only on malformed headers.
func parse(name string, r io.Reader) ([]*record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("slt: reading %s: %w", name, err)
	}

	var recs []*record
	var conds []cond
	i := 0
	for i < len(lines) {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			i++
			continue
		}
		lineNo := i + 1
		fields := strings.Fields(stripComment(trimmed))
		errf := func(format string, args ...any) error {
			return fmt.Errorf("slt: %s:%d: %s", name, lineNo, fmt.Sprintf(format, args...))
		}
		switch fields[0] {
		case "skipif", "onlyif":
			if len(fields) < 2 {
				return nil, errf("%s needs an engine name", fields[0])
			}
			conds = append(conds, cond{only: fields[0] == "onlyif", engine: fields[1]})
			i++
			continue
		case "hash-threshold":
			if len(fields) != 2 {
				return nil, errf("hash-threshold needs one number")
			}
			n, err := strconv.Atoi(fields[1])
			if err != nil || n < 0 {
				return nil, errf("hash-threshold: bad number %q", fields[1])
			}
			recs = append(recs, &record{kind: kindHashThreshold, line: lineNo, threshold: n, conds: conds})
			conds = nil
			i++
			continue
		case "halt":
			recs = append(recs, &record{kind: kindHalt, line: lineNo, conds: conds})
			conds = nil
			i++
			continue
		}

		rec := &record{line: lineNo, conds: conds}
		conds = nil
		switch fields[0] {
		case "statement":
			rec.kind = kindStatement
			if len(fields) < 2 {
				return nil, errf("statement needs ok or error")
			}
			switch fields[1] {
			case "ok":
			case "error":
				rec.expectErr = true
				re, err := errRegexp(trimmed, "error")
				if err != nil {
					return nil, errf("%v", err)
				}
				rec.errRe = re
			default:
				return nil, errf("statement %s: want ok or error", fields[1])
			}
		case "query":
			rec.kind = kindQuery
			if len(fields) < 2 {
				return nil, errf("query needs column type letters")
			}
			if fields[1] == "error" {
				rec.expectErr = true
				re, err := errRegexp(trimmed, "error")
				if err != nil {
					return nil, errf("%v", err)
				}
				rec.errRe = re
				break
			}
			rec.types = fields[1]
			for _, f := range fields[2:] {
				switch f {
				case "nosort":
					rec.sort = noSort
				case "rowsort":
					rec.sort = rowSort
				case "valuesort":
					rec.sort = valueSort
				default:
					if rec.label != "" {
						return nil, errf("query: unexpected %q after label %q", f, rec.label)
					}
					rec.label = f
				}
			}
		default:
			return nil, errf("unknown record type %q", fields[0])
		}

		// SQL lines up to "----" or a blank line.
		i++
		var sqlLines []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----" {
			sqlLines = append(sqlLines, lines[i])
			i++
		}
		if len(sqlLines) == 0 {
			return nil, errf("%s without SQL", fields[0])
		}
		rec.sql = strings.Join(sqlLines, "\n")
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			i++
			var exp []string
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				exp = append(exp, lines[i])
				i++
			}
			if rec.expectErr {
				rec.errText = strings.TrimSpace(strings.Join(exp, "\n"))
			} else {
				rec.expected = exp
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// errRegexp compiles what follows the word "error" on a header line: the
// rest of the line, trimmed, is the regular expression (empty: any error).
func errRegexp(header, word string) (*regexp.Regexp, error) {
	idx := strings.Index(header, " "+word)
	rest := strings.TrimSpace(header[idx+len(word)+1:])
	if rest == "" {
		return nil, nil
	}
	re, err := regexp.Compile(rest)
	if err != nil {
		return nil, fmt.Errorf("bad error regex %q: %v", rest, err)
	}
	return re, nil
}

// stripComment drops a trailing "# ..." from a header line so that
// `query I rowsort # why` parses. Error regexes are taken from the raw line.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}
