package shell

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/chzyer/readline"
)

const (
	prompt         = "streamsql> "
	continuePrompt = "   ...> "
)

// LineReader is the interactive line editor: Readline returns io.EOF on
// Ctrl-D and readline.ErrInterrupt on Ctrl-C.
type LineReader interface {
	Readline() (string, error)
	SetPrompt(string)
	SaveHistory(string) error
	Close() error
}

// newReadline makes the readline editor with history and completion.
func newReadline(s *Shell) (LineReader, error) {
	return readline.NewEx(&readline.Config{
		Prompt:                 prompt,
		HistoryFile:            s.env.HistoryFile,
		DisableAutoSaveHistory: true,
		AutoComplete:           completer{s},
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
		HistorySearchFold:      true,
		FuncGetWidth:           screenWidth,
	})
}

// defaultWidth is the line width assumed when the terminal reports none.
const defaultWidth = 80

// screenWidth is the terminal's width, or defaultWidth when it reports none: serial and VM
// consoles, and a pty whose size was never set, report 0 columns, with which the line
// editor spins on the first cursor move.
func screenWidth() int {
	if w := readline.GetScreenWidth(); w > 0 {
		return w
	}
	return defaultWidth
}

// runInteractive reads statements from the terminal until Ctrl-D or .quit.
// Ctrl-C while typing clears the statement being entered.
func (s *Shell) runInteractive() error {
	mk := s.env.NewLineReader
	if mk == nil {
		mk = newReadline
	}
	lr, err := mk(s)
	if err != nil {
		return err
	}
	defer lr.Close()
	s.banner()
	f := &feeder{}
	for !s.stop.Load() {
		if f.buf == "" {
			lr.SetPrompt(prompt)
		} else {
			lr.SetPrompt(continuePrompt)
		}
		line, err := lr.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			f.buf = ""
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if ran := s.feed(f, line); ran != "" {
			lr.SaveHistory(strings.Join(strings.Fields(ran), " "))
		}
	}
	return nil
}

var keywords = strings.Fields(`SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET AS AND OR NOT NULL IS
IN BETWEEN LIKE CASE WHEN THEN ELSE END DISTINCT JOIN LEFT RIGHT INNER OUTER FULL ON USING UNION
ALL INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE MATERIALIZED VIEW SINK DROP IF EXISTS
SHOW TABLES VIEWS DESCRIBE EXPLAIN SUBSCRIBE FLUSH WITH WATERMARK FOR INTERVAL SECOND SECONDS
MINUTE MINUTES HOUR HOURS DAY DAYS MILLISECOND MILLISECONDS TUMBLE HOP SESSION CUMULATE
DESCRIPTOR PARTITION EMIT WINDOW CLOSE PRIMARY KEY ENFORCED SYSTEM_TIME OF TIMESTAMP DATE
BOOLEAN INT INTEGER BIGINT DOUBLE DECIMAL VARCHAR STRING COUNT SUM MIN MAX AVG CAST TRUE FALSE
BACKUP TO ASC DESC window_start window_end window_time`)

var dotCommands = strings.Fields(`.help .tables .views .schema .watermarks .late .mode .headers
.timer .output .read .open .quit .exit`)

// completer completes dot commands, SQL keywords and table names.
type completer struct{ s *Shell }

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && (unicode.IsLetter(line[start-1]) || unicode.IsDigit(line[start-1]) ||
		line[start-1] == '_' || line[start-1] == '.') {
		start--
	}
	word := string(line[start:pos])
	var cands []string
	before := strings.TrimSpace(string(line[:start]))
	switch {
	case before == "" && strings.HasPrefix(word, "."):
		cands = dotCommands
	case strings.HasPrefix(before, ".") && !strings.Contains(before, " "):
		switch before {
		case ".mode":
			cands = modes
		case ".headers", ".timer":
			cands = []string{"on", "off"}
		case ".schema", ".late":
			cands, _ = c.s.tableNames()
		}
	default:
		lower := word != strings.ToUpper(word)
		for _, k := range keywords {
			if lower {
				k = strings.ToLower(k)
			}
			cands = append(cands, k)
		}
		names, _ := c.s.tableNames()
		cands = append(cands, names...)
	}
	return completions(word, cands), len([]rune(word))
}

// completions returns the rest of each candidate that starts with word
// (case-insensitively), followed by a space.
func completions(word string, cands []string) [][]rune {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		if len(c) >= len(word) && strings.EqualFold(c[:len(word)], word) && !seen[c] {
			seen[c] = true
			out = append(out, c[len(word):]+" ")
		}
	}
	sort.Strings(out)
	rs := make([][]rune, len(out))
	for i, o := range out {
		rs[i] = []rune(o)
	}
	return rs
}

// tableNames lists the tables SHOW TABLES returns (first column), cached
// until a statement may have changed them.
func (s *Shell) tableNames() ([]string, error) {
	if !s.tablesStale || s.conn == nil {
		return s.tables, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := s.query(ctx, "SHOW TABLES", nil)
	if err != nil {
		return nil, err
	}
	s.tables = s.tables[:0]
	for _, r := range res.rows {
		if len(r) > 0 && r[0] != nil {
			s.tables = append(s.tables, cellText(r[0], ""))
		}
	}
	s.tablesStale = false
	return s.tables, nil
}
