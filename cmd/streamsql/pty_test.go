package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair with the given window size and
// returns its master and slave ends.
func openPTY(cols, rows uint16) (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, *os.File, error) {
		m.Close()
		return nil, nil, err
	}
	sc, err := m.SyscallConn()
	if err != nil {
		return fail(err)
	}
	var n int
	var ioerr error
	if err := sc.Control(func(fd uintptr) {
		if ioerr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioerr != nil {
			ioerr = fmt.Errorf("unlockpt: %w", ioerr)
			return
		}
		if n, ioerr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); ioerr != nil {
			ioerr = fmt.Errorf("ptsname: %w", ioerr)
			return
		}
		ws := &unix.Winsize{Row: rows, Col: cols}
		if ioerr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws); ioerr != nil {
			ioerr = fmt.Errorf("set window size: %w", ioerr)
		}
	}); err != nil {
		return fail(err)
	}
	if ioerr != nil {
		return fail(ioerr)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	return m, s, nil
}

// term is a process running on a pseudo-terminal, with everything it has
// written to the terminal kept in a buffer.
type term struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File

	mu   sync.Mutex
	vt   vt  // what the terminal shows, every line since the start
	mark int // offset into the screen text that expect searches from

	readDone chan struct{}
	waitDone chan struct{}
	waitErr  error
}

// startTerm runs cmd with a new pseudo-terminal (cols x rows) as its
// controlling terminal and standard streams.
func startTerm(t *testing.T, cmd *exec.Cmd, cols, rows uint16) *term {
	t.Helper()
	m, s, err := openPTY(cols, rows)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		m.Close()
		s.Close()
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	s.Close() // the child holds it now; reads on m fail with EIO once it exits
	tm := &term{t: t, cmd: cmd, master: m, readDone: make(chan struct{}), waitDone: make(chan struct{})}
	go func() {
		defer close(tm.readDone)
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			if n > 0 {
				tm.mu.Lock()
				tm.vt.write(b[:n])
				tm.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		tm.waitErr = cmd.Wait()
		close(tm.waitDone)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.waitDone:
		default:
			cmd.Process.Kill()
			<-tm.waitDone
		}
		m.Close()
		if t.Failed() {
			t.Logf("terminal output:\n%s", tm.screen())
		}
	})
	return tm
}

// screen is the text the terminal shows, scrollback included.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.vt.text()
}

// since is the screen text after the mark.
func (tm *term) since() string {
	s := tm.screen()
	if tm.mark > len(s) {
		return ""
	}
	return s[tm.mark:]
}

// toLineStart moves the mark back to the start of its line, for lines that
// are redrawn in place.
func (tm *term) toLineStart() {
	s := tm.screen()
	tm.mark = strings.LastIndexByte(s[:min(tm.mark, len(s))], '\n') + 1
}

// send types s on the terminal.
func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.master.Write([]byte(s)); err != nil {
		tm.t.Fatalf("write to terminal: %v", err)
	}
}

// waitFor polls the output after the mark until cond holds for it or the
// deadline passes; it returns that output.
func (tm *term) waitFor(what string, d time.Duration, cond func(out string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	for {
		out := tm.since()
		if cond(out) {
			return out
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out after %v waiting for %s; output since mark:\n%s", d, what, out)
		}
		select {
		case <-tm.waitDone:
			// One last look: the output may have arrived with the exit.
			<-tm.readDone
			if out := tm.since(); cond(out) {
				return out
			}
			tm.t.Fatalf("process exited (%v) while waiting for %s; output since mark:\n%s", tm.waitErr, what, tm.since())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// expect waits until want appears after the mark, moves the mark past it
// and returns the output up to and including it.
func (tm *term) expect(want string, d time.Duration) string {
	tm.t.Helper()
	out := tm.waitFor(fmt.Sprintf("%q", want), d, func(out string) bool { return strings.Contains(out, want) })
	i := strings.Index(out, want) + len(want)
	tm.mark += i
	return out[:i]
}

// wait waits for the process to exit and returns its exit status.
func (tm *term) wait(d time.Duration) int {
	tm.t.Helper()
	select {
	case <-tm.waitDone:
	case <-time.After(d):
		tm.t.Fatalf("process did not exit within %v; output since mark:\n%s", d, tm.since())
	}
	var ee *exec.ExitError
	if errors.As(tm.waitErr, &ee) {
		return ee.ExitCode()
	}
	if tm.waitErr != nil {
		tm.t.Fatalf("wait: %v", tm.waitErr)
	}
	return 0
}

// vt is just enough of a terminal to turn the shell's output into the text
// a user would see: characters overwrite at the cursor; CR, LF, BS, tab and
// the CSI sequences that move the cursor or erase (A B C D G J K) are
// obeyed; other controls and sequences (colours) are dropped. Lines do not
// wrap and nothing scrolls away.
type vt struct {
	lines    [][]rune
	row, col int
	pend     []byte // an escape sequence or UTF-8 character cut by a read
}

func (v *vt) write(p []byte) {
	b := append(v.pend, p...)
	v.pend = nil
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n := escLen(b[i:])
			if n == 0 {
				v.pend = append([]byte(nil), b[i:]...)
				return
			}
			v.esc(b[i : i+n])
			i += n
			continue
		case c == '\r':
			v.col = 0
		case c == '\n':
			v.row++
			v.ensure()
		case c == '\b':
			v.col = max(v.col-1, 0)
		case c == '\t':
			v.col = (v.col/8 + 1) * 8
		case c < 0x20 || c == 0x7f:
		default:
			if !utf8.FullRune(b[i:]) {
				v.pend = append([]byte(nil), b[i:]...)
				return
			}
			r, n := utf8.DecodeRune(b[i:])
			v.put(r)
			i += n
			continue
		}
		i++
	}
}

// escLen is the length of the escape sequence at the start of b, 0 if it
// is not complete yet.
func escLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '[':
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1
			}
		}
		return 0
	case ']':
		for j := 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2
			}
		}
		return 0
	case '(', ')':
		if len(b) < 3 {
			return 0
		}
		return 3
	}
	return 2
}

func (v *vt) esc(seq []byte) {
	if seq[1] != '[' {
		return
	}
	final := seq[len(seq)-1]
	params := strings.TrimLeft(string(seq[2:len(seq)-1]), "?")
	n, err := strconv.Atoi(strings.Split(params, ";")[0])
	if err != nil {
		n = 0
	}
	n1 := max(n, 1)
	v.ensure()
	switch final {
	case 'A':
		v.row = max(v.row-n1, 0)
	case 'B':
		v.row += n1
	case 'C':
		v.col += n1
	case 'D':
		v.col = max(v.col-n1, 0)
	case 'G':
		v.col = n1 - 1
	case 'J': // erase below (0); the whole screen (2) is left alone
		if n == 0 {
			if line := v.lines[v.row]; v.col < len(line) {
				v.lines[v.row] = line[:v.col]
			}
			v.lines = v.lines[:v.row+1]
		}
	case 'K': // erase to the end of the line (0), to the cursor (1), all (2)
		line := v.lines[v.row]
		switch n {
		case 0:
			if v.col < len(line) {
				v.lines[v.row] = line[:v.col]
			}
		case 1:
			for i := 0; i <= v.col && i < len(line); i++ {
				line[i] = ' '
			}
		case 2:
			v.lines[v.row] = line[:0]
		}
	}
}

func (v *vt) ensure() {
	for len(v.lines) <= v.row {
		v.lines = append(v.lines, nil)
	}
}

func (v *vt) put(r rune) {
	v.ensure()
	line := v.lines[v.row]
	for len(line) < v.col {
		line = append(line, ' ')
	}
	if v.col < len(line) {
		line[v.col] = r
	} else {
		line = append(line, r)
	}
	v.lines[v.row] = line
	v.col++
}

// text is the lines shown.
func (v *vt) text() string {
	var sb strings.Builder
	for i, l := range v.lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(string(l))
	}
	return sb.String()
}
