package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while the shell writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, failing the test after 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// startShell runs Main in the background; the returned channel yields its
// exit status.
func startShell(env Env) <-chan int {
	done := make(chan int, 1)
	go func() { done <- Main(env) }()
	return done
}

func TestSubscribeStreamsUntilInterrupt(t *testing.T) {
	stream := make(chan []any)
	f := useFake(map[string]fakeResult{"SUBSCRIBE v": {
		cols: []string{"op", "auction", "n"}, types: []string{"VARCHAR", "BIGINT", "BIGINT"}, stream: stream}})
	f.started = make(chan string, 1)
	ints := make(chan os.Signal, 1)
	var out, errb syncBuffer
	done := startShell(Env{Args: []string{"-c", "SUBSCRIBE v; SELECT after"}, Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb, Driver: "shellfake", Interrupts: ints})
	<-f.started
	stream <- []any{"+I", int64(1), int64(1)}
	// The row is printed while the subscription is still open.
	waitFor(t, "the first change", func() bool { return strings.Contains(out.String(), "+I │ 1") })
	stream <- []any{"-U", int64(1), int64(1)}
	stream <- []any{"+U", int64(1), int64(12)}
	// The shell has the row once the send returns, but may not have printed it yet.
	waitFor(t, "the last change", func() bool { return strings.Contains(out.String(), "+U │ 1") })
	ints <- os.Interrupt
	if code := <-done; code != 0 {
		t.Errorf("exit status %d after Ctrl-C of SUBSCRIBE", code)
	}
	want := "op │ auction │ n\n" +
		"───┼─────────┼───\n" +
		"+I │ 1       │ 1\n" +
		"-U │ 1       │ 1\n" +
		"+U │ 1       │ 12\n"
	if out.String() != want || errb.String() != "" {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q", out.String(), want, errb.String())
	}
	if got := strings.Join(f.log(), "|"); got != "SUBSCRIBE v" {
		t.Errorf("ran %q: the script should stop at Ctrl-C", got)
	}
}

func TestSubscribeCSVAndJSON(t *testing.T) {
	stream := make(chan []any, 2)
	stream <- []any{"+I", int64(1)}
	stream <- []any{"-D", nil}
	close(stream)
	useFake(map[string]fakeResult{"SUBSCRIBE v": {cols: []string{"op", "a"}, stream: stream}})
	out, _, code := runShell(t, "", "-csv", "-c", "SUBSCRIBE v")
	if out != "op,a\n+I,1\n-D,\n" || code != 0 {
		t.Errorf("csv: %q %d", out, code)
	}
	stream = make(chan []any, 1)
	stream <- []any{"+I", int64(1)}
	close(stream)
	useFake(map[string]fakeResult{"SUBSCRIBE v": {cols: []string{"op", "a"}, stream: stream}})
	if out, _, _ := runShell(t, "", "-json", "-c", "SUBSCRIBE v"); out != `{"op":"+I","a":1}`+"\n" {
		t.Errorf("json: %q", out)
	}
}

func TestLiveMode(t *testing.T) {
	defer func(d time.Duration) { redrawEvery = d }(redrawEvery)
	redrawEvery = time.Millisecond
	stream := make(chan []any)
	useFake(map[string]fakeResult{"SUBSCRIBE v": {
		cols: []string{"op", "k", "n"}, types: []string{"VARCHAR", "VARCHAR", "BIGINT"}, stream: stream}})
	var out, errb syncBuffer
	done := startShell(Env{Args: []string{"-mode", "live", "-c", "SUBSCRIBE v"}, Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb, Driver: "shellfake", StdoutTTY: true})
	stream <- []any{"+I", "a", int64(1)}
	waitFor(t, "the first frame", func() bool { return strings.Contains(out.String(), "live: 1 changes") })
	stream <- []any{"+I", "b", int64(2)}
	stream <- []any{"-U", "a", int64(1)}
	stream <- []any{"+U", "a", int64(5)}
	stream <- []any{"+I", "c", nil}
	stream <- []any{"-D", "b", int64(2)}
	close(stream)
	if code := <-done; code != 0 {
		t.Errorf("exit status %d, stderr %q", code, errb.String())
	}
	final := `live: 6 changes · Ctrl-C stops
┌─────────┬────────┐
│    k    │   n    │
│ varchar │ bigint │
├─────────┼────────┤
│ a       │      5 │
│ c       │   ` + "\x1b[2mNULL\x1b[0m" + ` │
└─────────┴────────┘
2 rows
`
	got := out.String()
	// Each frame after the first moves the cursor back over the last one.
	if !regexp.MustCompile(`\x1b\[\d+A\r\x1b\[J`).MatchString(got) {
		t.Errorf("no redraw in place:\n%q", got)
	}
	if i := strings.LastIndex(got, "live:"); i < 0 || got[i:] != final {
		t.Errorf("final frame:\n%s\nwant:\n%s", got[max(i, 0):], final)
	}
}

func TestInterruptQuery(t *testing.T) {
	f := useFake(map[string]fakeResult{"SELECT slow": {cols: []string{"a"}, block: true}})
	f.started = make(chan string, 1)
	ints := make(chan os.Signal, 1)
	var out, errb syncBuffer
	done := startShell(Env{Args: []string{"-c", "SELECT slow; SELECT after"}, Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb, Driver: "shellfake", Interrupts: ints})
	<-f.started
	ints <- os.Interrupt
	if code := <-done; code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if errb.String() != "Error: interrupted\n" || out.String() != "" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	if got := strings.Join(f.log(), "|"); got != "SELECT slow" {
		t.Errorf("ran %q", got)
	}
}

func TestInterruptKeepsInteractiveShell(t *testing.T) {
	f := useFake(map[string]fakeResult{
		"SELECT slow": {cols: []string{"a"}, block: true},
		"SELECT fast": {cols: []string{"a"}, rows: [][]any{{int64(7)}}},
	})
	f.started = make(chan string, 1)
	ints := make(chan os.Signal, 1)
	go func() {
		<-f.started // SELECT slow
		ints <- os.Interrupt
	}()
	fr := &fakeReader{inputs: []any{"SELECT slow;", "SELECT fast;"}}
	var out, errb syncBuffer
	code := Main(Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StdinTTY: true,
		Driver: "shellfake", Interrupts: ints, NewLineReader: func(*Shell) (LineReader, error) { return fr, nil }})
	if code != 0 || errb.String() != "Error: interrupted\n" {
		t.Errorf("code %d stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), "│ 7 │") {
		t.Errorf("the shell did not go on after Ctrl-C:\n%s", out.String())
	}
}

func TestSpinner(t *testing.T) {
	defer func(d time.Duration) { spinnerDelay = d }(spinnerDelay)
	spinnerDelay = 0
	f := useFake(map[string]fakeResult{"SELECT slow": {cols: []string{"a"}, block: true}})
	f.started = make(chan string, 1)
	ints := make(chan os.Signal, 1)
	var out, errb syncBuffer
	done := startShell(Env{Args: []string{"-c", "SELECT slow"}, Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb, Driver: "shellfake", Interrupts: ints, StderrTTY: true})
	<-f.started
	waitFor(t, "the spinner", func() bool { return strings.Contains(errb.String(), "running") })
	ints <- os.Interrupt
	<-done
	if got := errb.String(); !strings.HasSuffix(got, "\r\x1b[KError: interrupted\n") {
		t.Errorf("spinner not cleared before the error: %q", got)
	}
}

func TestTestCommand(t *testing.T) {
	f := useFake(map[string]fakeResult{"SELECT 1": {cols: []string{"x"}, rows: [][]any{{int64(1)}}}})
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass.slt")
	fail := filepath.Join(dir, "fail.slt")
	bad := filepath.Join(dir, "bad.slt")
	os.WriteFile(pass, []byte("statement ok\nCREATE TABLE t (a INT)\n\nquery I\nSELECT 1\n----\n1\n\n"+
		"skipif streamsql\nstatement ok\nSELECT nope\n"), 0o644)
	os.WriteFile(fail, []byte("query I\nSELECT 1\n----\n2\n"), 0o644)
	os.WriteFile(bad, []byte("nonsense\n"), 0o644)
	out, _, code := runShell(t, "", "test", pass, fail, bad)
	want := "PASS " + pass + " (3 records, 1 skipped)\n" +
		"FAIL " + fail + " (1 record, 1 failed)\n" +
		fail + ":1: wrong result\n" +
		"    SELECT 1\n    --- expected\n    2\n    --- got\n    1\n" +
		"FAIL " + bad + ": slt: " + bad + ":1: unknown record type \"nonsense\"\n" +
		"1 passed, 2 failed\n"
	if out != want || code != 1 {
		t.Errorf("code %d, output:\n%s\nwant:\n%s", code, out, want)
	}
	if got := strings.Join(f.dsns, ","); got != ":memory:,:memory:" {
		t.Errorf("opened %q, want a fresh in-memory database per file", got)
	}
	if out, _, code := runShell(t, "", "test", pass); code != 0 || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Errorf("passing run: %d %q", code, out)
	}
	if _, _, code := runShell(t, "", "test"); code != 2 {
		t.Errorf("test without files: %d", code)
	}
}

// TestSubscribeHeaderFitsFixedWidths: the header of a streamed SUBSCRIBE, printed before any
// row, is as wide as a fixed-width type's values (a timestamp), so the columns line up.
func TestSubscribeHeaderFitsFixedWidths(t *testing.T) {
	stream := make(chan []any, 1)
	stream <- []any{"+I", ts("2024-01-01 00:00:40"), int64(7)}
	close(stream)
	useFake(map[string]fakeResult{"SUBSCRIBE v": {cols: []string{"op", "ws", "n"}, types: []string{"VARCHAR", "TIMESTAMP", "BIGINT"}, stream: stream}})
	out, _, _ := runShell(t, "", "-c", "SUBSCRIBE v")
	want := "op │ ws                  │ n\n" +
		"───┼─────────────────────┼───\n" +
		"+I │ 2024-01-01 00:00:40 │ 7\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}
