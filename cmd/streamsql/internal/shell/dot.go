package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

const helpText = `.help                 show this help
.tables               list tables (SHOW TABLES)
.views                list views (SHOW VIEWS)
.schema [NAME]        describe a table or view, or all of them
.watermarks           current watermarks (system.watermarks)
.late [VIEW]          late rows kept, optionally for one view (system.late_rows)
.mode [MODE]          output mode: box, table, csv, json, line, markdown, live
.headers on|off       show or hide column headers
.timer on|off         print the run time of each statement
.output [FILE]        send results to FILE, or back to stdout
.read FILE            run the statements in FILE
.open [PATH]          open the database at PATH (in memory when omitted)
.quit, .exit          leave the shell

Statements end with ";" and may span lines. Ctrl-C cancels the running
statement (SUBSCRIBE included) or clears the input; Ctrl-D quits.
SUBSCRIBE v; streams changes to view v until Ctrl-C; in .mode live the
view's current contents are redrawn in place.
`

// dot runs one dot command line.
func (s *Shell) dot(line string) {
	args := splitArgs(strings.TrimSuffix(strings.TrimSpace(line), ";")) // ".schema t;" as typed out of habit
	cmd, args := args[0], args[1:]
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch cmd {
	case ".help":
		io.WriteString(s.out, helpText)
	case ".quit", ".exit", ".q":
		s.stop.Store(true)
	case ".tables":
		s.runStatement("SHOW TABLES")
	case ".views":
		s.runStatement("SHOW VIEWS")
	case ".watermarks":
		s.runStatement("SELECT * FROM system.watermarks")
	case ".late":
		if v := arg(0); v != "" {
			var n int64
			if s.conn != nil && s.conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM system.views WHERE LOWER(name) = LOWER(?)", v).Scan(&n) == nil && n == 0 {
				s.errorf("materialized view %s does not exist (late rows are kept per materialized view)", v)
				return
			}
			s.runQuery("SELECT * FROM system.late_rows WHERE LOWER(view_name) = LOWER(?)", v)
		} else {
			s.runStatement("SELECT * FROM system.late_rows")
		}
	case ".schema":
		s.schema(arg(0))
	case ".mode":
		if len(args) == 0 {
			fmt.Fprintf(s.out, "current output mode: %s\n", s.mode)
			return
		}
		s.setMode(args[0])
	case ".headers", ".header", ".timer":
		on, ok := onOff(arg(0))
		if !ok {
			s.errorf("usage: %s on|off", cmd)
			return
		}
		if cmd == ".timer" {
			s.timer = on
		} else {
			s.headers = on
		}
	case ".output", ".once":
		s.setOutput(arg(0))
	case ".read":
		if len(args) != 1 {
			s.errorf("usage: .read FILE")
			return
		}
		s.readFile(args[0])
	case ".open":
		if err := s.open(arg(0)); err != nil {
			s.errorf("cannot open %q: %v", arg(0), err)
		}
	default:
		s.errorf("unknown command %s; enter .help for a list", cmd)
	}
}

// schema describes one table or view, or every table SHOW TABLES lists.
func (s *Shell) schema(name string) {
	if name != "" {
		s.runStatement("DESCRIBE " + quoteIdent(name))
		return
	}
	names, err := s.tableNames()
	if err != nil {
		s.errorf("%v", err)
		return
	}
	for _, n := range names {
		fmt.Fprintf(s.out, "%s\n", n)
		s.runStatement("DESCRIBE " + quoteIdent(n))
	}
}

// quoteIdent quotes a name with backticks (MySQL dialect) unless it is a
// plain identifier, possibly qualified.
func quoteIdent(name string) string {
	for _, r := range name {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "`" + strings.ReplaceAll(name, "`", "``") + "`"
		}
	}
	return name
}

func (s *Shell) setOutput(name string) {
	if s.outFile != nil {
		s.outFile.Close()
		s.outFile = nil
	}
	s.out = s.env.Stdout
	if name == "" || name == "stdout" {
		return
	}
	f, err := os.Create(name)
	if err != nil {
		s.errorf("%v", err)
		return
	}
	s.outFile, s.out = f, f
}

func onOff(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "on", "1", "yes", "true":
		return true, true
	case "off", "0", "no", "false":
		return false, true
	}
	return false, false
}

// splitArgs splits a dot command line into words; single or double quotes
// group words with spaces.
func splitArgs(line string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
