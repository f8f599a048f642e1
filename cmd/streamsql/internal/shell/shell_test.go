package shell

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chzyer/readline"
)

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		panic(err)
	}
	return t
}

// items is a small result used by several tests.
var items = fakeResult{
	cols:  []string{"id", "name", "price", "ts"},
	types: []string{"BIGINT", "VARCHAR", "DOUBLE", "TIMESTAMP(3)"},
	rows: [][]any{
		{int64(1), "apple", 1.5, ts("2024-01-01 00:00:01")},
		{int64(22), nil, nil, ts("2024-01-01 00:00:09.5")},
	},
}

// runShell runs Main with the fake driver, the given stdin (not a
// terminal) and args, and returns stdout, stderr and the exit status.
func runShell(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Driver: "shellfake", Version: "v0.0.0-test"})
	return out.String(), errb.String(), code
}

func TestBoxGolden(t *testing.T) {
	useFake(map[string]fakeResult{"SELECT * FROM items": items})
	out, errOut, code := runShell(t, "", "-c", "SELECT * FROM items;")
	want := `┌────────┬─────────┬────────┬─────────────────────────┐
│   id   │  name   │ price  │           ts            │
│ bigint │ varchar │ double │      timestamp(3)       │
├────────┼─────────┼────────┼─────────────────────────┤
│      1 │ apple   │    1.5 │ 2024-01-01 00:00:01     │
│     22 │ NULL    │   NULL │ 2024-01-01 00:00:09.500 │
└────────┴─────────┴────────┴─────────────────────────┘
2 rows
`
	if out != want || errOut != "" || code != 0 {
		t.Errorf("got (code %d, stderr %q):\n%s\nwant:\n%s", code, errOut, out, want)
	}
}

func TestBoxEmptyAndNoHeaders(t *testing.T) {
	useFake(map[string]fakeResult{
		"SELECT none": {cols: []string{"a"}, types: []string{"INT"}},
		"SELECT one":  {cols: []string{"a"}, rows: [][]any{{"x"}}},
	})
	out, _, _ := runShell(t, "", "-c", "SELECT none;\n.headers off\nSELECT one")
	want := "┌─────┐\n│  a  │\n│ int │\n└─────┘\n0 rows\n┌───┐\n│ x │\n└───┘\n1 row\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestModes(t *testing.T) {
	useFake(map[string]fakeResult{"SELECT * FROM items": items, "SELECT 0": {cols: []string{"a"}}})
	cases := map[string]string{
		"csv": "id,name,price,ts\n1,apple,1.5,2024-01-01 00:00:01\n22,,,2024-01-01 00:00:09.500\n",
		"json": `[{"id":1,"name":"apple","price":1.5,"ts":"2024-01-01 00:00:01"},
{"id":22,"name":null,"price":null,"ts":"2024-01-01 00:00:09.500"}]
`,
		"line": "   id = 1\n name = apple\nprice = 1.5\n   ts = 2024-01-01 00:00:01\n\n" +
			"   id = 22\n name = NULL\nprice = NULL\n   ts = 2024-01-01 00:00:09.500\n",
		"markdown": `| id  | name  | price | ts                      |
|----:|-------|------:|-------------------------|
|   1 | apple |   1.5 | 2024-01-01 00:00:01     |
|  22 | NULL  |  NULL | 2024-01-01 00:00:09.500 |
`,
		"table": `+----+-------+-------+-------------------------+
| id | name  | price |           ts            |
+----+-------+-------+-------------------------+
|  1 | apple |   1.5 | 2024-01-01 00:00:01     |
| 22 | NULL  |  NULL | 2024-01-01 00:00:09.500 |
+----+-------+-------+-------------------------+
`,
	}
	for mode, want := range cases {
		out, errOut, code := runShell(t, "", "-c", ".mode "+mode+"\nSELECT * FROM items")
		if out != want || errOut != "" || code != 0 {
			t.Errorf(".mode %s: got (code %d, stderr %q):\n%s\nwant:\n%s", mode, code, errOut, out, want)
		}
		if out2, _, _ := runShell(t, "", "-"+mode, "-c", "SELECT * FROM items"); out2 != want {
			t.Errorf("-%s flag: got\n%s", mode, out2)
		}
	}
	out, _, _ := runShell(t, "", "-csv", "-noheader", "-c", "SELECT * FROM items")
	if !strings.HasPrefix(out, "1,apple") {
		t.Errorf("csv without header: %q", out)
	}
	out, _, _ = runShell(t, "", "-json", "-c", "SELECT 0")
	if out != "[]\n" {
		t.Errorf("empty json: %q", out)
	}
}

func TestStatementAssembly(t *testing.T) {
	f := useFake(map[string]fakeResult{})
	script := "CREATE TABLE t (\n  a INT -- no ; here\n);\nINSERT INTO t VALUES (';'); INSERT INTO t VALUES (2);\n" +
		"-- a comment line\n\n/* block ; */ FLUSH;\n/*\n a comment over lines\n*/ SELECT 'C:\\';\nINSERT INTO t\nVALUES (3)"
	_, errOut, code := runShell(t, script)
	want := []string{
		"CREATE TABLE t (\n  a INT -- no ; here\n)",
		"INSERT INTO t VALUES (';')",
		"INSERT INTO t VALUES (2)",
		"/* block ; */ FLUSH",
		"/*\n a comment over lines\n*/ SELECT 'C:\\'",
		"INSERT INTO t\nVALUES (3)",
	}
	if got := f.log(); strings.Join(got, "|") != strings.Join(want, "|") || errOut != "" || code != 0 {
		t.Errorf("statements %q (stderr %q, code %d), want %q", got, errOut, code, want)
	}
}

func TestErrorsContinueAndExit1(t *testing.T) {
	f := useFake(map[string]fakeResult{
		"bad":        {err: errors.New(`unknown table "x" at line 1, column 15`)},
		"badq":       {err: errors.New("no such view")},
		"SELECT one": {cols: []string{"n"}, rows: [][]any{{int64(1)}}},
	})
	out, errOut, code := runShell(t, "", "-csv", "-c", "bad; SELECT 2 FROM badq; SELECT one")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if errOut != "Error: unknown table \"x\" at line 1, column 15\n" {
		t.Errorf("stderr %q", errOut)
	}
	if out != "n\n1\n" {
		t.Errorf("stdout %q: the script did not continue", out)
	}
	if got := strings.Join(f.log(), "|"); got != "bad|SELECT 2 FROM badq|SELECT one" {
		t.Errorf("ran %q", got)
	}
	_, errOut, code = runShell(t, "", "-c", ".nonsense")
	if code != 1 || !strings.HasPrefix(errOut, "Error: unknown command .nonsense") {
		t.Errorf("unknown dot command: %d %q", code, errOut)
	}
}

func TestDotCommands(t *testing.T) {
	dir := t.TempDir()
	outFile := filepath.Join(dir, "out.csv")
	readFile := filepath.Join(dir, "in.sql")
	if err := os.WriteFile(readFile, []byte("INSERT INTO t\nVALUES (1);\n.mode csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := useFake(map[string]fakeResult{
		"SHOW TABLES":         {cols: []string{"name"}, rows: [][]any{{"t"}, {"my table"}}},
		"DESCRIBE t":          {cols: []string{"column"}, rows: [][]any{{"a"}}},
		"DESCRIBE `my table`": {cols: []string{"column"}, rows: [][]any{{"b"}}},
		"SELECT one":          {cols: []string{"n"}, rows: [][]any{{int64(1)}}},
	})
	script := strings.Join([]string{
		".mode csv",
		".tables",
		".schema",
		".schema t",
		".views",
		".watermarks",
		".late",
		".late per10s",
		".headers off",
		".output '" + outFile + "'",
		"SELECT one;",
		".output",
		".read " + readFile,
		".open data/db",
		".timer on",
		"SELECT one;",
		".timer off",
		".mode",
		".quit",
		"SELECT one;",
	}, "\n")
	out, errOut, code := runShell(t, script)
	if errOut != "" || code != 0 {
		t.Fatalf("stderr %q code %d", errOut, code)
	}
	wantRan := []string{
		"SHOW TABLES", "SHOW TABLES", "DESCRIBE t", "DESCRIBE `my table`", "DESCRIBE t",
		"SHOW VIEWS", "SELECT * FROM system.watermarks", "SELECT * FROM system.late_rows",
		"SELECT COUNT(*) FROM system.views WHERE LOWER(name) = LOWER(?) [per10s]", // the view exists
		"SELECT * FROM system.late_rows WHERE LOWER(view_name) = LOWER(?) [per10s]",
		"SELECT one", "INSERT INTO t\nVALUES (1)", "SELECT one",
	}
	if got := f.log(); strings.Join(got, "|") != strings.Join(wantRan, "|") {
		t.Errorf("ran\n%q\nwant\n%q", got, wantRan)
	}
	if got := strings.Join(f.dsns, ","); got != ",data/db" {
		t.Errorf("opened %q", got)
	}
	re := regexp.MustCompile(`^name\nt\nmy table\nt\ncolumn\na\nmy table\ncolumn\nb\ncolumn\na\n1\nRun Time: \d+\.\d{3}s\ncurrent output mode: csv\n$`)
	if !re.MatchString(out) {
		t.Errorf("stdout:\n%s", out)
	}
	if data, err := os.ReadFile(outFile); err != nil || string(data) != "1\n" {
		t.Errorf(".output file holds %q (%v)", data, err)
	}

	out, _, _ = runShell(t, "", "-c", ".help")
	for _, cmd := range dotCommands {
		if !strings.Contains(out, cmd) {
			t.Errorf(".help does not mention %s", cmd)
		}
	}
	_, errOut, code = runShell(t, "", "-c", ".mode fancy\n.timer maybe\n.open unopenable")
	if code != 1 || strings.Count(errOut, "Error: ") != 3 {
		t.Errorf("bad dot command arguments: code %d stderr %q", code, errOut)
	}
}

func TestArgs(t *testing.T) {
	useFake(nil)
	if out, _, code := runShell(t, "", "--version"); out != "streamsql v0.0.0-test\n" || code != 0 {
		t.Errorf("--version: %q %d", out, code)
	}
	if out, _, code := runShell(t, "", "--help"); !strings.Contains(out, "streamsql test FILE.slt") || code != 0 {
		t.Errorf("--help: %q %d", out, code)
	}
	if _, errOut, code := runShell(t, "", "--bogus"); code != 2 || !strings.Contains(errOut, "unknown option --bogus") {
		t.Errorf("--bogus: %q %d", errOut, code)
	}
	if _, _, code := runShell(t, "", "-c"); code != 2 {
		t.Errorf("-c without SQL: %d", code)
	}
	if _, _, code := runShell(t, "", "a", "b"); code != 2 {
		t.Errorf("two paths: %d", code)
	}
	f := useFake(nil)
	dir := t.TempDir()
	sqlFile := filepath.Join(dir, "x.sql")
	os.WriteFile(sqlFile, []byte("FLUSH;"), 0o644)
	if _, _, code := runShell(t, "", "mydb", "-f", sqlFile); code != 0 || f.dsns[0] != "mydb" || f.log()[0] != "FLUSH" {
		t.Errorf("-f: code %d dsns %q ran %q", code, f.dsns, f.log())
	}
	if _, errOut, code := runShell(t, "", "-f", filepath.Join(dir, "missing.sql")); code != 1 || !strings.HasPrefix(errOut, "Error: ") {
		t.Errorf("-f missing: %d %q", code, errOut)
	}
}

// fakeReader is a scripted LineReader: each entry is a line, or an error.
type fakeReader struct {
	inputs  []any
	prompts []string
	history []string
}

func (r *fakeReader) Readline() (string, error) {
	if len(r.inputs) == 0 {
		return "", io.EOF
	}
	in := r.inputs[0]
	r.inputs = r.inputs[1:]
	if err, ok := in.(error); ok {
		return "", err
	}
	return in.(string), nil
}
func (r *fakeReader) SetPrompt(p string)         { r.prompts = append(r.prompts, p) }
func (r *fakeReader) SaveHistory(s string) error { r.history = append(r.history, s); return nil }
func (r *fakeReader) Close() error               { return nil }

func TestInteractive(t *testing.T) {
	f := useFake(map[string]fakeResult{"SELECT 1": {cols: []string{"x"}, rows: [][]any{{int64(1)}}}})
	fr := &fakeReader{inputs: []any{
		"SELECT",
		"1;",
		"CREATE TABLE t (", // abandoned with Ctrl-C
		readline.ErrInterrupt,
		readline.ErrInterrupt, // on an empty line: nothing happens
		".mode csv",
		"FLUSH; SELECT",
		"1;",
	}}
	var out, errb bytes.Buffer
	code := Main(Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StdinTTY: true,
		Driver: "shellfake", Version: "v1",
		NewLineReader: func(*Shell) (LineReader, error) { return fr, nil }})
	if code != 0 || errb.String() != "" {
		t.Errorf("code %d stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), "in-memory") || !strings.Contains(out.String(), ".open PATH") {
		t.Errorf("banner does not explain the in-memory database:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "x\n1\n") {
		t.Errorf("output:\n%s", out.String())
	}
	wantPrompts := []string{prompt, continuePrompt, prompt, continuePrompt, prompt, prompt, prompt, continuePrompt, prompt}
	if strings.Join(fr.prompts, "|") != strings.Join(wantPrompts, "|") {
		t.Errorf("prompts %q, want %q", fr.prompts, wantPrompts)
	}
	if got := strings.Join(f.log(), "|"); got != "SELECT\n1|FLUSH|SELECT\n1" {
		t.Errorf("ran %q", got)
	}
	wantHist := []string{"SELECT 1;", ".mode csv", "FLUSH;", "SELECT 1;"}
	if strings.Join(fr.history, "|") != strings.Join(wantHist, "|") {
		t.Errorf("history %q, want %q", fr.history, wantHist)
	}
}

func TestCompletion(t *testing.T) {
	useFake(map[string]fakeResult{"SHOW TABLES": {cols: []string{"name"}, rows: [][]any{{"bids"}, {"bidders"}}}})
	s := &Shell{env: Env{Driver: "shellfake"}, tablesStale: true}
	if err := s.open(""); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	c := completer{s}
	cases := []struct {
		line string
		want string
	}{
		{"SEL", "ECT "},
		{"sel", "ect "},
		{"SELECT * FROM bi", "dders ,ds ,gint "},
		{".ta", "bles "},
		{".mode ma", "rkdown "},
		{".schema b", "idders ,ids "},
		{"SELECT zzz", ""},
	}
	for _, cs := range cases {
		got, n := c.Do([]rune(cs.line), len([]rune(cs.line)))
		var parts []string
		for _, g := range got {
			parts = append(parts, string(g))
		}
		if strings.Join(parts, ",") != cs.want {
			t.Errorf("complete %q = %q (len %d), want %q", cs.line, parts, n, cs.want)
		}
	}
}

// Errors are placed in the input as given: a statement that starts mid-line (after another
// on the same line, with or without its closing `;`) keeps its column.
func TestErrorPositionsInInput(t *testing.T) {
	for _, c := range []struct{ stdin, c, want string }{
		{c: "SELECT one; bad", want: "line 1, column 13"},
		{c: "SELECT one; bad;", want: "line 1, column 13"},
		{c: "SELECT one;   bad", want: "line 1, column 15"},
		{c: "SELECT one; SELECT one;\n  bad", want: "line 2, column 3"},
		{stdin: "SELECT one; SELECT one;\nSELECT one;  bad", want: "line 2, column 14"},
	} {
		useFake(map[string]fakeResult{
			"bad":        {err: errors.New("unknown table x at line 1, column 1")},
			"SELECT one": {cols: []string{"n"}, rows: [][]any{{int64(1)}}},
		})
		args := []string{"-csv"}
		if c.c != "" {
			args = append(args, "-c", c.c)
		}
		_, errOut, _ := runShell(t, c.stdin, args...)
		if want := "Error: unknown table x at " + c.want + "\n"; errOut != want {
			t.Errorf("%q%q: stderr %q, want %q", c.c, c.stdin, errOut, want)
		}
	}
}

// TestDotCommandErrorHasNoPosition: an error of a statement a dot command made (.schema
// NAME runs DESCRIBE NAME) carries no position, which would be in no text the user wrote.
func TestDotCommandErrorHasNoPosition(t *testing.T) {
	useFake(map[string]fakeResult{"DESCRIBE nosuch": {err: errors.New("table nosuch does not exist at line 1, column 10")}})
	if _, errOut, _ := runShell(t, "", "-c", ".schema nosuch"); errOut != "Error: table nosuch does not exist\n" {
		t.Errorf("stderr %q", errOut)
	}
}

// TestScreenWidthFallback: with no terminal size (here stdout is no terminal) the line
// editor gets a width, not 0, with which it spins on the first cursor move.
func TestScreenWidthFallback(t *testing.T) {
	if w := screenWidth(); w <= 0 {
		t.Fatalf("screenWidth() = %d", w)
	}
}

// TestScriptFileCorners: a byte order mark before a script's first statement is not part of
// it, a file that reads itself stops with an error after maxReadDepth levels instead of
// running out of files, and a dot command typed with a ';' ignores it.
func TestScriptFileCorners(t *testing.T) {
	useFake(map[string]fakeResult{
		"SELECT one":    {cols: []string{"n"}, rows: [][]any{{int64(1)}}},
		"DESCRIBE t":    {cols: []string{"column_name"}, rows: [][]any{{"a"}}},
		"DESCRIBE `t;`": {err: errors.New("table t; does not exist")},
	})
	self := filepath.Join(t.TempDir(), "self.sql")
	if err := os.WriteFile(self, []byte("\ufeffSELECT one;\n.read "+self+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runShell(t, "", "-csv", "-f", self, "-c", ".schema t;")
	if n := strings.Count(out, "n\n1\n"); n != maxReadDepth || code != 1 || !strings.Contains(errOut, "nest more than") || !strings.Contains(out, "column_name\na\n") {
		t.Errorf("%d runs of the file (want %d), exit %d, stdout %q, stderr %q", n, maxReadDepth, code, out, errOut)
	}
}
