package main

// Guard tests from a blind QA pass over the shell against SPEC §1 and the
// README's Shell section: dot commands in scripts, output modes, the
// statement splitter on stdin, exit codes, persistence of views and late
// rows, and SIGINT during a long query in a script.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// .read runs a file's statements in place, nests, reports a missing or
// failing file on stderr (the script goes on and exits 1), and refuses a
// file that reads itself instead of recursing without end.
func TestDotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inner := writeFile(t, dir, "inner.sql", "SELECT 10 AS r;\n")
	outer := writeFile(t, dir, "outer.sql", "SELECT 20 AS n;\n.read "+inner+"\nSELECT 21 AS m;\n")
	bad := writeFile(t, dir, "bad.sql", "SELECT 30 AS x;\nSELEC 31;\nSELECT 32 AS y;\n")
	self := filepath.Join(dir, "self.sql")
	writeFile(t, dir, "self.sql", ".read "+self+"\n")

	r := run(t, "", "-csv", "-noheader", "-c", ".read "+outer+"\nSELECT 'after' AS a;")
	if r.code != 0 || r.stderr != "" || r.stdout != "20\n10\n21\nafter\n" {
		t.Errorf("nested .read: got %v", r)
	}

	r = run(t, "", "-csv", "-noheader", "-c", ".read "+filepath.Join(dir, "missing.sql")+"\nSELECT 'after' AS a;")
	if r.code != 1 || r.stdout != "after\n" {
		t.Errorf(".read of a missing file: want exit 1 and the script going on, got %v", r)
	}
	matchLine(t, r.stderr, `^Error: .*missing\.sql`)

	r = run(t, "", "-csv", "-noheader", "-c", ".read "+bad+"\nSELECT 'after' AS a;")
	if r.code != 1 || r.stdout != "30\n32\nafter\n" {
		t.Errorf(".read of a failing file: want exit 1 and both files going on, got %v", r)
	}
	matchLine(t, r.stderr, `^Error: .*bad\.sql: .*line 2, column 1\b`)

	r = run(t, "", "-c", ".read "+self)
	if r.code != 1 {
		t.Errorf(".read of a file reading itself: exit %d, want 1\n%v", r.code, r)
	}
	matchLine(t, r.stderr, `^Error: .*nest`)

	r = run(t, "", "-c", ".read")
	if r.code != 1 || !strings.Contains(r.stderr, "usage: .read FILE") {
		t.Errorf(".read without a file: got %v", r)
	}
}

// The other dot commands in a script: good and bad arguments, unknown
// ones, a trailing `;`.
func TestDotCommandsScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	r := run(t, "", "-c", `CREATE TABLE t (a BIGINT);
.mode
.mode csv
.headers off
SELECT 1 AS a;
.headers on
.timer on
SELECT 2 AS b;
.timer off
SELECT 3 AS c;
.output `+out+`
SELECT 4 AS d;
.output
SELECT 5 AS e;
.mode csv;
.schema t;
.tables`)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no stderr, got %v", r)
	}
	want := "current output mode: box\n1\nb\n2\n"
	if !strings.HasPrefix(r.stdout, want) {
		t.Errorf("stdout does not start with %q:\n%s", want, r.stdout)
	}
	matchLine(t, r.stdout, `^Run Time: \d+\.\d{3}s$`)
	if n := strings.Count(r.stdout, "Run Time:"); n != 1 {
		t.Errorf(".timer off: %d Run Time lines, want 1:\n%s", n, r.stdout)
	}
	if strings.Contains(r.stdout, "d\n4") {
		t.Errorf(".output FILE: the result went to stdout:\n%s", r.stdout)
	}
	matchLine(t, r.stdout, `^e$`)
	matchLine(t, r.stdout, `^a,BIGINT,YES,,$`) // .schema t;
	if !strings.HasSuffix(r.stdout, "name\nt\n") {
		t.Errorf(".tables missing at the end:\n%s", r.stdout)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "d\n4\n" {
		t.Errorf(".output file holds %q (%v), want %q", b, err, "d\n4\n")
	}

	for _, c := range []struct{ cmd, re string }{
		{".mode bogus", `^Error: unknown mode "bogus"`},
		{".timer", `^Error: usage: \.timer on\|off$`},
		{".timer maybe", `^Error: usage: \.timer on\|off$`},
		{".headers maybe", `^Error: usage: \.headers on\|off$`},
		{".schema nosuch", `^Error: .*nosuch`},
		{".output " + filepath.Join(dir, "no", "such", "dir", "x.txt"), `^Error: .*x\.txt`},
		{".bogus", `^Error: unknown command \.bogus`},
	} {
		r := run(t, "", "-csv", "-noheader", "-c", c.cmd+"\nSELECT 'after' AS a;")
		if r.code != 1 || r.stdout != "after\n" {
			t.Errorf("%s: want exit 1 and the script going on, got %v", c.cmd, r)
		}
		matchLine(t, r.stderr, c.re)
	}

	// .quit ends a script at once, with the status it has so far.
	r = run(t, "SELECT 1 AS a;\n.quit\nSELECT 2 AS b;\n", "-csv")
	if r.code != 0 || r.stdout != "a\n1\n" {
		t.Errorf(".quit: got %v", r)
	}
	r = run(t, "SELEC 1;\n.exit\nSELECT 2 AS b;\n", "-csv")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("error then .exit: want exit 1 and nothing more run, got %v", r)
	}
}

// Every output mode the README names, on NULL, an empty string, a
// separator inside a value and a timestamp with milliseconds.
func TestOutputModes(t *testing.T) {
	t.Parallel()
	setup := `CREATE TABLE t (a BIGINT, s VARCHAR, ts TIMESTAMP(3));
INSERT INTO t VALUES (1, 'x;y', TIMESTAMP '2024-01-01 00:00:01'), (2, NULL, TIMESTAMP '2024-01-01 00:00:02.250'),
  (3, '', TIMESTAMP '2024-01-01 00:00:03'), (4, 'q"u,o|te', TIMESTAMP '2024-01-01 00:00:04');
`
	query := "SELECT * FROM t ORDER BY a;"
	cases := map[string]string{
		"csv": "a,s,ts\n1,x;y,2024-01-01 00:00:01\n2,,2024-01-01 00:00:02.250\n3,,2024-01-01 00:00:03\n" +
			"4,\"q\"\"u,o|te\",2024-01-01 00:00:04\n",
		"json": `[{"a":1,"s":"x;y","ts":"2024-01-01 00:00:01"},
{"a":2,"s":null,"ts":"2024-01-01 00:00:02.250"},
{"a":3,"s":"","ts":"2024-01-01 00:00:03"},
{"a":4,"s":"q\"u,o|te","ts":"2024-01-01 00:00:04"}]
`,
		"table": `+---+----------+-------------------------+
| a |    s     |           ts            |
+---+----------+-------------------------+
| 1 | x;y      | 2024-01-01 00:00:01     |
| 2 | NULL     | 2024-01-01 00:00:02.250 |
| 3 |          | 2024-01-01 00:00:03     |
| 4 | q"u,o|te | 2024-01-01 00:00:04     |
+---+----------+-------------------------+
`,
		"markdown": `| a   | s         | ts                      |
|----:|-----------|-------------------------|
|   1 | x;y       | 2024-01-01 00:00:01     |
|   2 | NULL      | 2024-01-01 00:00:02.250 |
|   3 |           | 2024-01-01 00:00:03     |
|   4 | q"u,o\|te | 2024-01-01 00:00:04     |
`,
	}
	for mode, want := range cases {
		r := run(t, "", "-c", setup+".mode "+mode+"\n"+query)
		if r.code != 0 || r.stdout != want {
			t.Errorf(".mode %s: want stdout\n%s\ngot %v", mode, want, r)
		}
	}

	r := run(t, "", "-c", setup+".mode line\n"+query)
	if r.code != 0 {
		t.Fatalf(".mode line: %v", r)
	}
	for _, re := range []string{`^ a = 1$`, `^ s = x;y$`, `^ts = 2024-01-01 00:00:02\.250$`, `^ s = NULL$`, `^ s = $`} {
		matchLine(t, r.stdout, re)
	}

	// box, and live (box outside SUBSCRIBE).
	for _, mode := range []string{"box", "live"} {
		r := run(t, "", "-c", setup+".mode "+mode+"\n"+query)
		if r.code != 0 {
			t.Fatalf(".mode %s: %v", mode, r)
		}
		matchLine(t, r.stdout, `^│ +a +│ +s +│ +ts +│$`)
		matchLine(t, r.stdout, `^│ +2 │ NULL +│ 2024-01-01 00:00:02\.250 │$`)
		matchLine(t, r.stdout, `^│ +3 │ +│ 2024-01-01 00:00:03 +│$`)
		matchLine(t, r.stdout, `^4 rows$`)
	}
}

// The statement splitter on stdin: `;` inside strings and comments does not
// end a statement, statements span lines, CRLF and a BOM are accepted, and
// empty input is no error.
func TestStdinSplitting(t *testing.T) {
	t.Parallel()
	r := run(t, "-- a comment; with a semicolon\nSELECT\n  1 AS a, -- trailing; comment\n  'x;y' AS b, /* block ; */ 'it''s;' AS c\n;\n", "-csv")
	if r.code != 0 || r.stdout != "a,b,c\n1,x;y,it's;\n" {
		t.Errorf("semicolons in strings and comments: got %v", r)
	}
	r = run(t, "\xef\xbb\xbfSELECT 1 AS a;\r\nSELECT\r\n 2 AS b;\r\n.mode csv\r\nSELECT 3 AS c;\r\n", "-csv")
	if r.code != 0 || r.stdout != "a\n1\nb\n2\nc\n3\n" {
		t.Errorf("BOM and CRLF: got %v", r)
	}
	for _, in := range []string{"", "  \n-- only a comment\n/* and another */\n", ";\n;;\n"} {
		r = run(t, in, "-csv")
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("stdin %q: want exit 0 and no output, got %v", in, r)
		}
	}
	r = run(t, "SELECT 'abc;\n", "-csv")
	if r.code != 1 {
		t.Errorf("unterminated string: exit %d, want 1", r.code)
	}
	matchLine(t, r.stderr, `^Error: unterminated string literal at line 1, column 8$`)
	r = run(t, "SELECT 1 AS a; /* abc\n", "-csv")
	if r.code != 1 || r.stdout != "a\n1\n" {
		t.Errorf("unterminated comment: got %v", r)
	}
	matchLine(t, r.stderr, `^Error: unterminated comment at line 1, column 16$`)
	// -c wins over stdin: stdin is not read.
	r = run(t, "SELECT 9 AS nine;\n", "-csv", "-c", "SELECT 8 AS eight;")
	if r.code != 0 || r.stdout != "eight\n8\n" {
		t.Errorf("-c with stdin: got %v", r)
	}
}

// Bad usage exits 2; an unusable database path or `streamsql test` on a
// missing file exits 1.
func TestUsageAndOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, "", filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if r.code != 2 || !strings.Contains(r.stderr, "more than one database path") {
		t.Errorf("two paths: want exit 2, got %v", r)
	}
	r = run(t, "", "-mode", "nope", "-c", "SELECT 1;")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown mode "nope"`) {
		t.Errorf("-mode nope: want exit 2, got %v", r)
	}
	file := writeFile(t, dir, "afile", "not a database\n")
	r = run(t, "", file, "-c", "SELECT 1;")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "Error: ") {
		t.Errorf("a file as the database path: want exit 1, got %v", r)
	}
	r = run(t, "", "test", filepath.Join(dir, "nope.slt"))
	if r.code != 1 || !strings.HasSuffix(r.stdout, "\n0 passed, 1 failed\n") {
		t.Errorf("test on a missing file: want exit 1, got %v", r)
	}
	matchLine(t, r.stdout, `^FAIL .*nope\.slt: .*no such file`)
	r = run(t, "", "test", writeFile(t, dir, "g.slt", "this is not slt\n"))
	if r.code != 1 {
		t.Errorf("test on a malformed file: exit %d, want 1", r.code)
	}
	matchLine(t, r.stdout, `g\.slt:1: unknown record type`)
}

// A database reopened across runs keeps tables, both kinds of view, the
// views' state and the late rows.
func TestPersistenceViewsLateRows(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	r := run(t, "", db, "-c", `CREATE TABLE b (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
CREATE MATERIALIZED VIEW w AS SELECT window_start, k, COUNT(*) AS n
  FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k;
CREATE VIEW pv AS SELECT k FROM b;
INSERT INTO b VALUES (1, TIMESTAMP '2024-01-01 00:00:01'), (1, TIMESTAMP '2024-01-01 00:00:30');
INSERT INTO b VALUES (1, TIMESTAMP '2024-01-01 00:00:02');`)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("first run: %v", r)
	}
	r = run(t, "", db, "-csv", "-noheader", "-c", `.views
SELECT * FROM w ORDER BY window_start;
SELECT COUNT(*) FROM pv;
.late w`)
	want := "pv\nw\n2024-01-01 00:00:00,1,1\n2024-01-01 00:00:30,1,1\n3\n" +
		`w,b,2024-01-01 00:00:02,2024-01-01 00:00:30,"{""k"":1,""ts"":""2024-01-01 00:00:02""}"` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("second run: want\n%s\ngot %v", want, r)
	}
	r = run(t, "", db, "-c", "INSERT INTO b VALUES (2, TIMESTAMP '2024-01-01 00:00:41');")
	if r.code != 0 {
		t.Fatalf("third run: %v", r)
	}
	r = run(t, "", db, "-csv", "-noheader", "-c", "SELECT * FROM w ORDER BY window_start;")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "2024-01-01 00:00:40,2,1\n") {
		t.Errorf("fourth run: the view did not go on from its kept state: %v", r)
	}
}

// SIGINT during a long query in a script (-c, and -f through .read) cancels
// it: exit 1, "interrupted" on stderr, and the rest of the script skipped.
func TestScriptInterruptQuery(t *testing.T) {
	t.Parallel()
	var vals []string
	for i := 0; i < 300; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	long := "CREATE TABLE m (a BIGINT);\nINSERT INTO m VALUES " + strings.Join(vals, ",") +
		";\nSELECT COUNT(*) FROM m a, m b, m c, m d;\nSELECT 'rest' AS r;\n"
	dir := t.TempDir()
	f := writeFile(t, dir, "long.sql", long)
	for name, args := range map[string][]string{
		"-c":    {"-c", long},
		"-f":    {"-f", f},
		".read": {"-c", ".read " + f + "\nSELECT 'outer' AS o;"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			cmd.Dir = t.TempDir()
			cmd.Env = childEnv(t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Fatalf("finished (%v) before SIGINT: the query is not long enough\n%s%s", err, stdout.String(), stderr.String())
			case <-time.After(1500 * time.Millisecond):
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(waitLong):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running %v after SIGINT", waitLong)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			matchLine(t, stderr.String(), `^Error: .*interrupted$`)
			if out := stdout.String(); strings.Contains(out, "rest") || strings.Contains(out, "outer") {
				t.Errorf("the script went on after SIGINT:\n%s", out)
			}
		})
	}
}

// History is loaded again by the next session (Up recalls the last
// statement), and Ctrl-C at an empty prompt keeps the shell.
func TestInteractiveHistoryRecall(t *testing.T) {
	home := t.TempDir()
	tm := startShell(t, home)
	tm.expect(prompt, waitLong)
	tm.line("SELECT 41 AS recalled;", prompt)
	tm.send("\x03") // at an empty prompt: the shell goes on
	tm.expect(prompt, waitLong)
	out := tm.line("SELECT 6 AS six;", prompt)
	matchLine(t, out, `^│ +6 │$`)
	tm.send("\x04")
	if code := tm.wait(waitLong); code != 0 {
		t.Fatalf("exit status after Ctrl-D = %d, want 0", code)
	}

	tm = startShell(t, home)
	tm.expect(prompt, waitLong)
	tm.send("\x1b[A\x1b[A") // Up twice: the statement before the last
	tm.expect("SELECT 41 AS recalled;", waitLong)
	tm.send("\r")
	row := regexp.MustCompile(`(?m)^│ +41 │$`)
	tm.waitFor("the recalled statement's result", waitLong, row.MatchString)
	tm.expect("1 row", waitLong)
	tm.expect(prompt, waitLong)
	tm.send(".quit\r")
	if code := tm.wait(waitLong); code != 0 {
		t.Errorf("exit status after .quit = %d, want 0", code)
	}
}
