package main

// End-to-end tests of the streamsql binary: built once in TestMain, then
// driven through a pseudo-terminal (the interactive shell) and through
// -c, -f, stdin and `streamsql test`.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// bin is the streamsql binary built by TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "streamsql-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "streamsql")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building streamsql: %v\n", err)
		return 1
	}
	return m.Run()
}

// childEnv is the environment the binary runs with: a private HOME (the
// shell keeps its history there) and a known terminal type.
func childEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "TERM=xterm")
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the binary with args and stdin (not a terminal) and returns
// what it printed and its exit status.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = childEnv(t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("streamsql %q timed out\nstdout:\n%s\nstderr:\n%s", args, res.stdout, res.stderr)
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("streamsql %q: %v", args, err)
	}
	return res
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// matchLine fails unless some line of out matches the regular expression.
func matchLine(t *testing.T, out, re string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)` + re).MatchString(out) {
		t.Errorf("no line matches %q in:\n%s", re, out)
	}
}

// ---------------------------------------------------------------------
// Interactive shell on a pseudo-terminal.

const (
	prompt     = "streamsql> "
	contPrompt = "   ...> "
	waitLong   = 10 * time.Second
)

// startShell starts the shell on a 100x40 terminal with args.
func startShell(t *testing.T, home string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = childEnv(home)
	return startTerm(t, cmd, 100, 40)
}

// line types one line and waits for the given prompt after it, returning
// the output in between (the echoed line included).
func (tm *term) line(text, next string) string {
	tm.t.Helper()
	tm.send(text + "\r")
	// Skip the echo of the line itself, so that a prompt-like text in it
	// does not count.
	tm.expect(text, waitLong)
	return tm.expect(next, waitLong)
}

func TestInteractive(t *testing.T) {
	home := t.TempDir()
	tm := startShell(t, home)

	banner := tm.expect(prompt, waitLong)
	for _, want := range []string{
		"streamsql ",
		"Connected to a transient in-memory database.",
		`Use ".open PATH" or start with "streamsql mydb" to keep your data.`,
		`Enter ".help" for usage hints`,
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}

	// A statement over several lines: continuation prompts until the `;`.
	tm.line("CREATE TABLE t (", contPrompt)
	tm.line("  id BIGINT, name VARCHAR,", contPrompt)
	if out := tm.line("  score DOUBLE);", prompt); strings.Contains(out, "Error") {
		t.Errorf("CREATE TABLE failed:\n%s", out)
	}
	if out := tm.line("INSERT INTO t VALUES (1, 'ann', 2.5), (42, NULL, NULL);", prompt); strings.Contains(out, "Error") {
		t.Errorf("INSERT failed:\n%s", out)
	}

	t.Run("box", func(t *testing.T) {
		out := tm.line("SELECT id, name, score FROM t ORDER BY id;", prompt)
		matchLine(t, out, `^┌─+┬─+┬─+┐$`)
		matchLine(t, out, `^│ +id +│ +name +│ +score +│$`)
		matchLine(t, out, `^│ +bigint +│ +varchar +│ +double +│$`)
		// Numbers right-aligned (padding before them), text left-aligned,
		// NULL spelt out.
		matchLine(t, out, `^│ +1 │ ann +│ +2\.5 │$`)
		matchLine(t, out, `^│ +42 │ NULL +│ +NULL │$`)
		matchLine(t, out, `^└─+┴─+┴─+┘$`)
		matchLine(t, out, `^2 rows$`)
	})

	t.Run("errors", func(t *testing.T) {
		out := tm.line("SELECT * FROM nosuch;", prompt)
		matchLine(t, out, `^Error: .*nosuch.* line 1, column 15`)
		out = tm.line("SELEC 1;", prompt)
		matchLine(t, out, `^Error: .*line 1, column 1\b`)
		// Over two lines: the position is in the statement as typed.
		tm.line("SELECT *", contPrompt)
		out = tm.line("  FROM nosuch;", prompt)
		matchLine(t, out, `^Error: .*nosuch.* line 2, column 8\b`)
		// The shell goes on.
		out = tm.line("SELECT 7 AS seven;", prompt)
		matchLine(t, out, `^│ +seven +│$`)
		matchLine(t, out, `^│ +7 │$`)
	})

	t.Run("dot commands", func(t *testing.T) {
		out := tm.line(".tables", prompt)
		matchLine(t, out, `^│ t +│$`)
		matchLine(t, out, `^1 row$`)

		out = tm.line(".schema t", prompt)
		matchLine(t, out, `^│ id +│ BIGINT +│`)
		matchLine(t, out, `^│ name +│ VARCHAR +│`)
		matchLine(t, out, `^│ score +│ DOUBLE +│`)

		out = tm.line(".help", prompt)
		if !strings.Contains(out, ".schema [NAME]") {
			t.Errorf(".help lacks .schema:\n%s", out)
		}

		out = tm.line(".nosuch", prompt)
		matchLine(t, out, `^Error: unknown command \.nosuch`)

		tm.line(".mode csv", prompt)
		out = tm.line("SELECT id, name, score FROM t ORDER BY id;", prompt)
		if want := "id,name,score\n1,ann,2.5\n42,,\n"; !strings.Contains(out, want) {
			t.Errorf("csv output: want %q in:\n%s", want, out)
		}
		if strings.Contains(out, "│") {
			t.Errorf("csv mode drew a box:\n%s", out)
		}
		tm.line(".mode box", prompt)

		tm.line(".timer on", prompt)
		out = tm.line("SELECT 1 AS one;", prompt)
		matchLine(t, out, `^Run Time: \d+\.\d{3}s$`)
		tm.line(".timer off", prompt)

		dir := t.TempDir()
		outFile := filepath.Join(dir, "out.txt")
		tm.line(".output "+outFile, prompt)
		out = tm.line("SELECT 2 AS two;", prompt)
		tm.line(".output", prompt)
		if strings.Contains(out, "two") {
			t.Errorf(".output: result went to the terminal:\n%s", out)
		}
		if b, err := os.ReadFile(outFile); err != nil || !strings.Contains(string(b), "two") || strings.Contains(string(b), "\x1b") {
			t.Errorf(".output file: %q, %v; want the result without escapes", b, err)
		}

		script := writeFile(t, dir, "in.sql", "INSERT INTO t VALUES (3, 'cy', 0.5);\nSELECT COUNT(*) AS rows_now FROM t;\n")
		out = tm.line(".read "+script, prompt)
		matchLine(t, out, `^│ +3 │$`)
	})

	t.Run("wide values fit the terminal", func(t *testing.T) {
		// 160 characters, typed over short lines so that the editor does
		// not wrap them.
		chunk := "'" + strings.Repeat("w", 40) + "'"
		tm.line("SELECT CONCAT("+chunk+",", contPrompt)
		tm.line(chunk+", "+chunk+",", contPrompt)
		out := tm.line(chunk+") AS wide, 12345 AS num;", prompt)
		box := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "│") || strings.HasPrefix(l, "┌") {
				box++
				if w := utf8.RuneCountInString(l); w > 100 {
					t.Errorf("line of %d columns on a 100-column terminal: %q", w, l)
				}
			}
		}
		if box == 0 {
			t.Fatalf("no table drawn:\n%s", out)
		}
		matchLine(t, out, `^│ w+… │ +12345 │$`)
		matchLine(t, out, `wide values shortened`)
	})

	t.Run("Ctrl-C clears input", func(t *testing.T) {
		tm.line("SELECT 'never run',", contPrompt)
		tm.send("\x03")
		tm.expect(prompt, waitLong)
		out := tm.line("SELECT 5 AS five;", prompt)
		if strings.Contains(out, "never run") || strings.Contains(out, "Error") {
			t.Errorf("the cleared statement ran:\n%s", out)
		}
		matchLine(t, out, `^│ +5 │$`)
	})

	t.Run("SUBSCRIBE and Ctrl-C", func(t *testing.T) {
		tm.line("CREATE TABLE g (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)", contPrompt)
		if out := tm.line("WITH (connector = 'datagen', 'rows.per.second' = '50', 'fields.k.kind' = 'sequence');", prompt); strings.Contains(out, "Error") {
			t.Fatalf("CREATE TABLE g failed:\n%s", out)
		}
		if out := tm.line("CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM g;", prompt); strings.Contains(out, "Error") {
			t.Fatalf("CREATE MATERIALIZED VIEW failed:\n%s", out)
		}
		tm.send("SUBSCRIBE v;\r")
		tm.expect("SUBSCRIBE v;", waitLong)
		tm.expect("op │ n", waitLong)

		// Changes keep arriving: the count in the +U lines grows.
		plusU := regexp.MustCompile(`(?m)^\+U │ (\d+)$`)
		maxN := func(out string) int {
			m := -1
			for _, sm := range plusU.FindAllStringSubmatch(out, -1) {
				n, _ := strconv.Atoi(sm[1])
				m = max(m, n)
			}
			return m
		}
		out := tm.waitFor("+U lines", waitLong, func(out string) bool { return maxN(out) >= 3 })
		first := maxN(out)
		out = tm.waitFor("more +U lines", waitLong, func(out string) bool { return maxN(out) >= first+10 })
		if !strings.Contains(out, "-U │ ") {
			t.Errorf("no -U lines among the changes:\n%s", out)
		}
		if strings.Contains(out, prompt) {
			t.Errorf("prompt shown while SUBSCRIBE runs:\n%s", out)
		}

		// Ctrl-C ends the SUBSCRIBE, not the shell.
		tm.send("\x03")
		tm.expect(prompt, waitLong)
		out = tm.line("SELECT 1;", prompt)
		matchLine(t, out, `^│ +1 │$`)
		matchLine(t, out, `^1 row$`)
		if strings.Contains(out, "Error") {
			t.Errorf("error after the interrupted SUBSCRIBE:\n%s", out)
		}
	})

	t.Run("Ctrl-C ends an idle SUBSCRIBE", func(t *testing.T) {
		tm.line("CREATE TABLE s (a BIGINT);", prompt)
		tm.line("CREATE MATERIALIZED VIEW sv AS SELECT COUNT(*) AS n FROM s;", prompt)
		tm.send("SUBSCRIBE sv;\r")
		tm.expect("SUBSCRIBE sv;", waitLong)
		tm.expect("+I │ 0\n", waitLong) // the snapshot; then nothing changes
		sent := time.Now()
		tm.send("\x03")
		tm.expect(prompt, waitLong)
		if d := time.Since(sent); d > 2*time.Second {
			t.Errorf("Ctrl-C took %v to end SUBSCRIBE", d)
		}
		out := tm.line("SELECT COUNT(*) AS c FROM s;", prompt)
		matchLine(t, out, `^│ +0 │$`)
	})

	t.Run("SUBSCRIBE in .mode live", func(t *testing.T) {
		tm.line(".mode live", prompt)
		tm.send("SUBSCRIBE v;\r")
		tm.expect("SUBSCRIBE v;", waitLong)
		// The view is redrawn in place: one box whose count grows.
		cell := regexp.MustCompile(`(?m)^│ +(\d+) │$`)
		count := func(out string) int {
			if m := cell.FindStringSubmatch(out); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
			return -1
		}
		out := tm.waitFor("a live box", waitLong, func(out string) bool { return count(out) >= 0 })
		first := count(out)
		out = tm.waitFor("the live count to grow", waitLong, func(out string) bool { return count(out) >= first+5 })
		if n := strings.Count(out, "live: "); n != 1 {
			t.Errorf("live view drawn %d times, want once (redrawn in place):\n%s", n, out)
		}
		if n := strings.Count(out, "┌"); n != 1 {
			t.Errorf("%d boxes on screen, want 1:\n%s", n, out)
		}
		matchLine(t, out, `^live: \d+ changes · Ctrl-C stops$`)
		matchLine(t, out, `^│ +n +│$`)
		if strings.Contains(out, "│ op") || strings.Contains(out, "-U") {
			t.Errorf("live view shows the change column:\n%s", out)
		}
		tm.send("\x03")
		tm.expect(prompt, waitLong)
		tm.line(".mode box", prompt)
		out = tm.line("SELECT 2 AS two;", prompt)
		matchLine(t, out, `^│ +2 │$`)
	})

	// Ctrl-D on an empty line leaves with status 0.
	tm.send("\x04")
	if code := tm.wait(waitLong); code != 0 {
		t.Errorf("exit status after Ctrl-D = %d, want 0", code)
	}

	// History: one entry per statement, a multi-line one on one line.
	hist, err := os.ReadFile(filepath.Join(home, ".streamsql_history"))
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	for _, want := range []string{
		"CREATE TABLE t ( id BIGINT, name VARCHAR, score DOUBLE);",
		"SELECT id, name, score FROM t ORDER BY id;",
		".mode csv",
		"SUBSCRIBE v;",
	} {
		if !strings.Contains(string(hist), want+"\n") {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}

// A shell on a database directory names it in the banner; .quit leaves.
func TestInteractivePath(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	tm := startShell(t, t.TempDir(), db)
	banner := tm.expect(prompt, waitLong)
	if want := "Connected to " + db + "."; !strings.Contains(banner, want) {
		t.Errorf("banner lacks %q:\n%s", want, banner)
	}
	if strings.Contains(banner, "in-memory") {
		t.Errorf("banner of a database on disk says in-memory:\n%s", banner)
	}
	tm.send(".quit\r")
	if code := tm.wait(waitLong); code != 0 {
		t.Errorf("exit status after .quit = %d, want 0", code)
	}
}

// Ctrl-C cancels a long-running query, not the shell.
func TestInteractiveCancelQuery(t *testing.T) {
	tm := startShell(t, t.TempDir())
	tm.expect(prompt, waitLong)
	for _, l := range []string{
		"CREATE TABLE t (k BIGINT);",
		"INSERT INTO t VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10);",
		"INSERT INTO t SELECT a.k * 10 + b.k FROM t a, t b;",
		"INSERT INTO t SELECT a.k * 1000 + b.k FROM t a, t b;",
	} {
		if out := tm.line(l, prompt); strings.Contains(out, "Error") {
			t.Fatalf("%s failed:\n%s", l, out)
		}
	}
	// 12210 rows: the self-join counts about 150 million pairs.
	tm.send("SELECT COUNT(*) FROM t a, t b;\r")
	tm.expect("FROM t a, t b;", waitLong)
	tm.expect("(Ctrl-C cancels)", 5*time.Second) // the progress line
	tm.toLineStart()                             // it is redrawn in place
	sent := time.Now()
	tm.send("\x03")
	out := tm.waitFor("the query to be cancelled", 3*time.Second, func(out string) bool {
		return strings.Contains(out, prompt)
	})
	t.Logf("prompt back %v after Ctrl-C", time.Since(sent).Round(time.Millisecond))
	matchLine(t, out, `^Error: interrupted$`)
	tm.expect(prompt, waitLong)
	out = tm.line("SELECT 1 AS one;", prompt)
	matchLine(t, out, `^│ +1 │$`)

	// In a .read file, Ctrl-C also skips the rest of the file (of the files reading it too),
	// as it does the rest of a script.
	dir := t.TempDir()
	inner, outer := filepath.Join(dir, "inner.sql"), filepath.Join(dir, "outer.sql")
	if err := os.WriteFile(inner, []byte("SELECT COUNT(*) FROM t a, t b;\nSELECT 'inner-rest' AS r;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outer, []byte(".read "+inner+"\nSELECT 'outer-rest' AS r;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.send(".read " + outer + "\r")
	tm.expect("(Ctrl-C cancels)", 5*time.Second)
	tm.toLineStart()
	tm.send("\x03")
	out = tm.waitFor("the .read to be cancelled", 3*time.Second, func(out string) bool {
		return strings.Contains(out, prompt)
	})
	matchLine(t, out, `interrupted$`)
	if strings.Contains(out, "-rest") {
		t.Fatalf("the rest of the .read files ran after Ctrl-C:\n%s", out)
	}
	out = tm.line("SELECT 2 AS two;", prompt)
	matchLine(t, out, `^│ +2 │$`)
	tm.send(".read " + inner + "\r") // the next .read runs whole
	tm.expect("(Ctrl-C cancels)", 5*time.Second)
	tm.toLineStart()
	tm.send("\x03")
	tm.expect(prompt, waitLong)
}

// ---------------------------------------------------------------------
// Scripts: -c, -f, stdin.

func TestCommandFlag(t *testing.T) {
	t.Parallel()
	r := run(t, "", "-c", `CREATE TABLE t (a BIGINT, b VARCHAR);
INSERT INTO t VALUES (1, 'x'), (2, NULL);
SELECT a, b FROM t ORDER BY a;
.mode csv
SELECT a, b FROM t ORDER BY a;`)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no stderr, got %v", r)
	}
	matchLine(t, r.stdout, `^│ +a +│ +b +│$`)
	matchLine(t, r.stdout, `^│ +bigint +│ +varchar +│$`)
	matchLine(t, r.stdout, `^│ +1 │ x +│$`)
	matchLine(t, r.stdout, `^│ +2 │ NULL +│$`)
	if !strings.HasSuffix(r.stdout, "a,b\n1,x\n2,\n") {
		t.Errorf("csv output missing at the end of:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Errorf("escape sequences in output to a pipe:\n%q", r.stdout)
	}

	// Several -c and output-mode flags.
	r = run(t, "", "-csv", "-noheader", "-c", "SELECT 1 AS a", "-c", "SELECT 2 AS b;")
	if r.code != 0 || r.stdout != "1\n2\n" {
		t.Errorf("two -c with -csv -noheader: want stdout \"1\\n2\\n\", got %v", r)
	}
}

func TestFileFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := writeFile(t, dir, "script.sql", `-- a comment
CREATE TABLE t (a BIGINT);
INSERT INTO t VALUES (3), (1), (2);

/* the sum */
SELECT SUM(a) AS total,
       COUNT(*) AS n
  FROM t;
`)
	r := run(t, "", "-json", "-f", f)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no stderr, got %v", r)
	}
	if !regexp.MustCompile(`"total":\s*6`).MatchString(r.stdout) || !regexp.MustCompile(`"n":\s*3`).MatchString(r.stdout) {
		t.Errorf("json output lacks total 6 and n 3:\n%s", r.stdout)
	}

	r = run(t, "", "-f", filepath.Join(dir, "missing.sql"))
	if r.code == 0 || !strings.HasPrefix(r.stderr, "Error: ") || !strings.Contains(r.stderr, "missing.sql") {
		t.Errorf("missing -f file: want an error naming it and a non-zero status, got %v", r)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	r := run(t, "CREATE TABLE t (a BIGINT);\nINSERT INTO t VALUES (5);\n.mode csv\nSELECT a * 2 AS d FROM t\n")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no stderr, got %v", r)
	}
	// The last statement needs no `;`; no banner or prompt when stdin is
	// not a terminal.
	if r.stdout != "d\n10\n" {
		t.Errorf("stdout = %q, want %q", r.stdout, "d\n10\n")
	}
}

func TestScriptErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		stdin string
		args  []string
		re    string
	}{
		{"unknown table -c", "", []string{"-csv", "-c", "SELECT 1 AS a; SELECT * FROM nosuch;"}, `^Error: .*nosuch.*line \d+, column \d+`},
		{"syntax error stdin", "SELECT 1 AS a;\nSELEC 2;\n", []string{"-csv"}, `^Error: .*line 2, column 1\b`},
		{"unknown dot command", "SELECT 1 AS a;\n.frobnicate\n", []string{"-csv"}, `^Error: unknown command \.frobnicate`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, c.stdin, c.args...)
			if r.code != 1 {
				t.Errorf("exit status %d, want 1", r.code)
			}
			matchLine(t, r.stderr, c.re)
			if strings.Contains(r.stdout, "Error") {
				t.Errorf("error on stdout:\n%s", r.stdout)
			}
			// What ran before the failure was printed.
			if !strings.HasPrefix(r.stdout, "a\n1\n") {
				t.Errorf("stdout = %q, want the first statement's result", r.stdout)
			}
		})
	}

	t.Run("usage", func(t *testing.T) {
		r := run(t, "", "--nosuch")
		if r.code != 2 || !strings.Contains(r.stderr, "unknown option --nosuch") || !strings.Contains(r.stderr, "Usage:") {
			t.Errorf("unknown option: want exit 2 with usage on stderr, got %v", r)
		}
		r = run(t, "", "-c")
		if r.code != 2 || !strings.Contains(r.stderr, "-c needs an argument") {
			t.Errorf("-c without SQL: want exit 2, got %v", r)
		}
		r = run(t, "", "--version")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "streamsql ") {
			t.Errorf("--version: got %v", r)
		}
		r = run(t, "", "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "streamsql test FILE.slt") {
			t.Errorf("--help: got %v", r)
		}
	})
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SUBSCRIBE in a script streams changes to stdout until SIGINT, which ends
// it normally and stops the script.
func TestScriptSubscribeInterrupt(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin, "-csv", "-c", `CREATE TABLE g (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH (connector = 'datagen', 'rows.per.second' = '50', 'fields.k.kind' = 'sequence');
CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM g;
SUBSCRIBE v;
SELECT 'after' AS x;`)
	cmd.Dir = t.TempDir()
	cmd.Env = childEnv(t.TempDir())
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()

	updates := regexp.MustCompile(`(?m)^\+U,(\d+)$`)
	deadline := time.Now().Add(waitLong)
	for len(updates.FindAllString(stdout.String(), -1)) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("no stream of +U lines within %v\nstdout:\n%s\nstderr:\n%s", waitLong, stdout.String(), stderr.String())
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("exited (%v) during SUBSCRIBE\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("exit after SIGINT: %v, want status 0", err)
		}
	case <-time.After(waitLong):
		t.Fatalf("still running %v after SIGINT\nstdout:\n%s", waitLong, stdout.String())
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "op,n\n+I,") {
		t.Errorf("stdout does not start with the header and the snapshot:\n%s", out)
	}
	if strings.Contains(out, "after") {
		t.Errorf("the script went on after SIGINT:\n%s", out)
	}
	if e := stderr.String(); e != "" {
		t.Errorf("stderr: %s", e)
	}
}

// SPEC §6: an SQL error names its place as `at line L, column C` of the
// user's text, which for a script is the whole -c argument or file, not
// the statement alone.
func TestErrorPositionInUserText(t *testing.T) {
	t.Parallel()
	r := run(t, "", "-csv", "-c", "SELECT 1 AS a; SELECT * FROM nosuch;")
	matchLine(t, r.stderr, `^Error: .*nosuch.* line 1, column 30\b`)

	f := writeFile(t, t.TempDir(), "script.sql", "SELECT 1 AS a;\n\n-- comment\nSELECT *\n  FROM nosuch;\n")
	r = run(t, "", "-csv", "-f", f)
	matchLine(t, r.stderr, `^Error: .*nosuch.* line 5, column 8\b`)
}

// ---------------------------------------------------------------------
// streamsql test

const passingSLT = `# a small passing file
statement ok
CREATE TABLE t (a BIGINT, b VARCHAR)

statement ok
INSERT INTO t VALUES (2, NULL), (1, 'x'), (3, '')

query IT rowsort
SELECT a, b FROM t
----
1
x
2
NULL
3
(empty)

query I
SELECT COUNT(*) FROM t
----
3

statement error not found
SELECT * FROM nosuch
`

const failingSLT = `statement ok
CREATE TABLE t (a BIGINT)

statement ok
INSERT INTO t VALUES (1)

query I
SELECT a FROM t
----
2
`

func TestSLT(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pass := writeFile(t, dir, "pass.slt", passingSLT)
	fail := writeFile(t, dir, "fail.slt", failingSLT)

	r := run(t, "", "test", pass)
	if r.code != 0 {
		t.Errorf("passing file: exit %d, want 0\n%v", r.code, r)
	}
	matchLine(t, r.stdout, `^PASS .*pass\.slt \(5 records\)$`)
	if !strings.HasSuffix(r.stdout, "\n1 passed, 0 failed\n") {
		t.Errorf("passing file: last line is not \"1 passed, 0 failed\":\n%s", r.stdout)
	}

	r = run(t, "", "test", fail)
	if r.code != 1 {
		t.Errorf("failing file: exit %d, want 1\n%v", r.code, r)
	}
	matchLine(t, r.stdout, `^FAIL .*fail\.slt \(3 records, 1 failed\)$`)
	matchLine(t, r.stdout, `fail\.slt:7: `) // the failing record's line
	matchLine(t, r.stdout, `^    SELECT a FROM t$`)
	if !strings.HasSuffix(r.stdout, "\n0 passed, 1 failed\n") {
		t.Errorf("failing file: last line is not \"0 passed, 1 failed\":\n%s", r.stdout)
	}

	r = run(t, "", "test", pass, fail)
	if r.code != 1 || !strings.HasSuffix(r.stdout, "\n1 passed, 1 failed\n") {
		t.Errorf("both files: want exit 1 and \"1 passed, 1 failed\", got %v", r)
	}

	r = run(t, "", "test")
	if r.code != 2 || !strings.Contains(r.stderr, "usage") {
		t.Errorf("no files: want exit 2 and usage, got %v", r)
	}

	r = run(t, "", "test", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "usage: streamsql test") {
		t.Errorf("--help: want exit 0 and usage, got %v", r)
	}
	r = run(t, "", "test", "-x", pass)
	if r.code != 2 || !strings.Contains(r.stderr, "no option -x") {
		t.Errorf("an unknown option: want exit 2 naming it, got %v", r)
	}
}

// ---------------------------------------------------------------------
// Persistence across runs.

func TestPersistence(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	r := run(t, "", db, "-c", "CREATE TABLE p (a BIGINT, s VARCHAR); INSERT INTO p VALUES (7, 'seven'), (8, NULL);")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("first run: %v", r)
	}
	r = run(t, "", db, "-csv", "-c", "SELECT a, s FROM p ORDER BY a;")
	if r.code != 0 || r.stdout != "a,s\n7,seven\n8,\n" {
		t.Fatalf("second run: want the two rows, got %v", r)
	}
	// And a third run can add to them.
	r = run(t, "INSERT INTO p VALUES (9, 'nine');\n", db)
	if r.code != 0 {
		t.Fatalf("third run: %v", r)
	}
	r = run(t, "", db, "-csv", "-noheader", "-c", "SELECT COUNT(*) FROM p")
	if r.code != 0 || r.stdout != "3\n" {
		t.Errorf("fourth run: want 3 rows, got %v", r)
	}
}

// .late with a view that does not exist is an error, not an empty list of late rows.
func TestLateUnknownView(t *testing.T) {
	t.Parallel()
	r := run(t, "", "-c", ".late nosuch")
	if r.code != 1 || !strings.Contains(r.stderr, "materialized view nosuch does not exist") {
		t.Errorf(".late nosuch: want exit 1 and the view named, got %v", r)
	}
}
