package shell

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Env is everything the shell takes from its process, so that tests can
// run it with a fake driver and buffers.
type Env struct {
	Args           []string // without the program name
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Driver         string // database/sql driver name, "streamsql"
	Version        string

	StdinTTY, StdoutTTY, StderrTTY bool
	// Width returns the terminal width in columns, 0 when unknown or not a
	// terminal (no truncation). May be nil.
	Width func() int
	// Interrupts delivers SIGINT; each cancels the running statement. May
	// be nil.
	Interrupts <-chan os.Signal
	// HistoryFile is where interactive history is kept; "" keeps none.
	HistoryFile string
	// NewLineReader makes the interactive line editor; nil uses readline.
	NewLineReader func(s *Shell) (LineReader, error)
}

// Shell is one session: a database, display settings and the statement
// currently running.
type Shell struct {
	env         Env
	db          *sql.DB
	conn        *sql.Conn
	path        string
	mode        string
	headers     bool
	timer       bool
	out         io.Writer
	outFile     *os.File
	interactive bool
	failed      bool        // some statement or command failed
	readDepth   int         // .read files open
	stop        atomic.Bool // .quit, or an interrupt in a script
	// readStopped is an interrupt at the prompt while a .read file runs: the rest of the
	// file (and of the files reading it) is skipped, and the prompt comes back.
	readStopped bool

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running statement, nil when idle
	running bool

	tables      []string // for completion
	tablesStale bool

	// source names the script being read (-f FILE), and stmtPos is where the running
	// statement starts in it, so errors point into the user's text, not the statement's.
	source  string
	stmtPos position
}

// position is a 1-based line and column.
type position struct{ line, col int }

const usage = `Usage: streamsql [options] [PATH]
       streamsql test FILE.slt...

Opens the database at PATH (in memory when omitted) and reads SQL from the
terminal, from -c/-f, or from stdin when it is not a terminal.

Options:
  -c SQL        run SQL (statements and dot commands) and exit
  -f FILE       run the statements in FILE and exit
  -mode MODE    output mode: box, table, csv, json, line, markdown, live
  -box -table -csv -json -line -markdown    the same, shorter
  -header, -noheader                        show or hide column headers
  --version     print the version and exit
  --help        print this help and exit
`

// Main runs the shell with env and returns the process exit status: 0, 1
// when a statement failed in a script (or a test file failed), 2 for bad
// usage.
func Main(env Env) int {
	if env.Driver == "" {
		env.Driver = "streamsql"
	}
	if len(env.Args) > 0 && env.Args[0] == "test" {
		return runTests(env, env.Args[1:])
	}
	s := &Shell{env: env, mode: "box", headers: true, out: env.Stdout, tablesStale: true}
	var path string
	var havePath bool
	type action struct{ c, f string }
	var actions []action
	args := env.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		arg := func() (string, bool) {
			if i+1 >= len(args) {
				fmt.Fprintf(env.Stderr, "Error: %s needs an argument\n%s", a, usage)
				return "", false
			}
			i++
			return args[i], true
		}
		switch name := strings.TrimLeft(a, "-"); {
		case !strings.HasPrefix(a, "-"):
			if havePath {
				fmt.Fprintf(env.Stderr, "Error: more than one database path: %s and %s\n", path, a)
				return 2
			}
			path, havePath = a, true
		case name == "version" || name == "v":
			fmt.Fprintf(env.Stdout, "streamsql %s\n", env.Version)
			return 0
		case name == "help" || name == "h":
			io.WriteString(env.Stdout, usage)
			return 0
		case name == "c" || name == "f":
			v, ok := arg()
			if !ok {
				return 2
			}
			if name == "c" {
				actions = append(actions, action{c: v})
			} else {
				actions = append(actions, action{f: v})
			}
		case name == "mode":
			v, ok := arg()
			if !ok {
				return 2
			}
			if !s.setMode(v) {
				return 2
			}
		case name == "header" || name == "noheader":
			s.headers = name == "header"
		case validMode(name):
			s.mode = name
		default:
			fmt.Fprintf(env.Stderr, "Error: unknown option %s\n%s", a, usage)
			return 2
		}
	}
	if err := s.open(path); err != nil {
		fmt.Fprintf(env.Stderr, "Error: %v\n", err)
		return 1
	}
	defer s.close()
	if env.Interrupts != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			for {
				select {
				case <-env.Interrupts:
					s.Interrupt()
				case <-done:
					return
				}
			}
		}()
	}

	switch {
	case len(actions) > 0:
		for _, a := range actions {
			if s.stop.Load() {
				break
			}
			if a.f != "" {
				s.readFile(a.f)
			} else {
				s.runScript(strings.NewReader(a.c))
			}
		}
	case !env.StdinTTY:
		s.runScript(env.Stdin)
	default:
		s.interactive = true
		if err := s.runInteractive(); err != nil {
			fmt.Fprintf(env.Stderr, "Error: %v\n", err)
			return 1
		}
		return 0
	}
	if s.failed {
		return 1
	}
	return 0
}

// Interrupt cancels the running statement. With none running, a script
// stops at the next statement; the interactive shell ignores it (the line
// editor handles Ctrl-C itself).
func (s *Shell) Interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		return
	}
	if !s.interactive {
		s.stop.Store(true)
	}
}

// open connects to the database at path ("" or ":memory:" is in memory)
// and makes it the current one, closing the previous.
func (s *Shell) open(path string) error {
	db, err := sql.Open(s.env.Driver, path)
	if err != nil {
		return err
	}
	// One connection for the session: statements share its state.
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		return err
	}
	s.close()
	s.db, s.conn, s.path, s.tablesStale = db, conn, path, true
	return nil
}

func (s *Shell) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	s.conn, s.db = nil, nil
	if s.outFile != nil {
		s.outFile.Close()
		s.outFile, s.out = nil, s.env.Stdout
	}
}

// errorf reports a failure on stderr as "Error: ..." and remembers it for
// the exit status.
func (s *Shell) errorf(format string, args ...any) {
	s.failed = true
	fmt.Fprintf(s.env.Stderr, "Error: "+format+"\n", args...)
}

// feeder assembles statements from lines: dot commands at the start of a
// statement, SQL up to each `;`. It counts lines so that each statement's position in
// the input is known.
type feeder struct {
	buf   string
	line  int // input line where buf starts
	col   int // runes before buf on that line (text of statements already run)
	lines int // lines fed so far
}

// feed takes one line, runs whatever it completes and returns the text that
// was run (for history), or "" if the line only extended the buffer.
func (s *Shell) feed(f *feeder, line string) string {
	f.lines++
	if f.buf == "" && strings.HasPrefix(strings.TrimSpace(line), ".") {
		s.dot(strings.TrimSpace(line))
		return strings.TrimSpace(line)
	}
	if f.buf == "" {
		// A script's positions count from its first line; at the prompt, from the
		// statement being typed.
		f.line, f.col = f.lines, 0
		if s.interactive {
			f.line = 1
		}
	}
	f.buf += line + "\n"
	stmts, rest := splitStatements(f.buf)
	ran := ""
	if len(stmts) > 0 {
		ran = strings.TrimSpace(f.buf[:len(f.buf)-len(rest)])
	}
	from := 0
	for _, st := range stmts {
		if s.stop.Load() || s.readStopped {
			break
		}
		off := from + strings.Index(f.buf[from:], st)
		from = off + len(st)
		s.stmtPos = f.positionOf(off)
		s.runStatement(st)
	}
	s.stmtPos = position{}
	if onlyComments(rest) {
		rest = ""
	} else if consumed := len(f.buf) - len(rest); consumed > 0 {
		p := f.positionOf(consumed)
		f.line, f.col = p.line, p.col-1
	}
	f.buf = rest
	return ran
}

// positionOf is the input position of byte off of the buffer.
func (f *feeder) positionOf(off int) position {
	before := f.buf[:off]
	nl := strings.LastIndexByte(before, '\n')
	col := utf8.RuneCountInString(before[nl+1:]) + 1
	if nl < 0 {
		col += f.col
	}
	return position{line: f.line + strings.Count(before, "\n"), col: col}
}

// inUserText moves an error's "at line L, column C" (counted in the statement) to the
// statement's place in the input, and names the script it came from.
func (s *Shell) inUserText(msg string) string {
	if m := posPattern.FindStringSubmatchIndex(msg); m != nil && s.stmtPos.line == 0 {
		// A statement a dot command made (.schema NAME): the position is in no text the
		// user wrote.
		msg = strings.TrimRight(msg[:m[0]], " ") + msg[m[1]:]
	} else if m != nil {
		line, _ := strconv.Atoi(msg[m[2]:m[3]])
		col, _ := strconv.Atoi(msg[m[4]:m[5]])
		if line == 1 {
			col += s.stmtPos.col - 1
		}
		line += s.stmtPos.line - 1
		msg = fmt.Sprintf("%sat line %d, column %d%s", msg[:m[0]], line, col, msg[m[1]:])
	}
	if s.source != "" {
		msg = s.source + ": " + msg
	}
	return msg
}

var posPattern = regexp.MustCompile(`at line (\d+), column (\d+)`)

// finish runs a last statement left without its `;` at the end of input.
func (s *Shell) finish(f *feeder) {
	if st := strings.TrimSpace(f.buf); st != "" && !s.stop.Load() && !s.readStopped {
		s.stmtPos = f.positionOf(strings.Index(f.buf, st))
		s.runStatement(st)
		s.stmtPos = position{}
	}
	f.buf = ""
}

// runScript runs every statement and dot command read from r.
func (s *Shell) runScript(r io.Reader) {
	br := bufio.NewReader(r)
	f := &feeder{}
	for first := true; !s.stop.Load() && !s.readStopped; first = false {
		line, err := br.ReadString('\n')
		if first {
			line = strings.TrimPrefix(line, "\ufeff") // a byte order mark some editors write
		}
		if line != "" || err == nil {
			s.feed(f, strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.errorf("%v", err)
			}
			break
		}
	}
	s.finish(f)
}

// maxReadDepth bounds .read files reading others (a file that reads itself).
const maxReadDepth = 16

func (s *Shell) readFile(name string) {
	if s.readDepth >= maxReadDepth {
		s.errorf(".read %s: files nest more than %d deep (does a file read itself?)", name, maxReadDepth)
		return
	}
	s.readDepth++
	defer func() {
		if s.readDepth--; s.readDepth == 0 {
			s.readStopped = false
		}
	}()
	fh, err := os.Open(name)
	if err != nil {
		s.errorf("%v", err)
		return
	}
	defer fh.Close()
	prev := s.source
	s.source = name
	s.runScript(fh)
	s.source = prev
}

func validMode(m string) bool {
	for _, x := range modes {
		if m == x {
			return true
		}
	}
	return false
}

func (s *Shell) setMode(m string) bool {
	if !validMode(m) {
		s.errorf("unknown mode %q; use one of %s", m, strings.Join(modes, ", "))
		return false
	}
	s.mode = m
	return true
}

// renderOpts are the settings for the current output: terminal features
// only when it is the terminal.
func (s *Shell) renderOpts() renderOpts {
	o := renderOpts{mode: s.mode, headers: s.headers}
	if s.outFile == nil {
		o.tty = s.env.StdoutTTY
		if s.env.Width != nil {
			o.width = s.env.Width()
		}
	}
	return o
}

func (s *Shell) banner() {
	w := s.env.Stdout
	fmt.Fprintf(w, "streamsql %s\n", s.env.Version)
	if s.path == "" || s.path == ":memory:" {
		fmt.Fprintln(w, "Connected to a transient in-memory database.")
		fmt.Fprintln(w, `Use ".open PATH" or start with "streamsql mydb" to keep your data.`)
	} else {
		fmt.Fprintf(w, "Connected to %s.\n", s.path)
	}
	fmt.Fprintln(w, `Enter ".help" for usage hints; end statements with ";".`)
}
