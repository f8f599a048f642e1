package shell

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// spinnerDelay is how long a statement runs before the progress line shows.
var spinnerDelay = time.Second

// runStatement runs one SQL statement and prints its rows, if any.
func (s *Shell) runStatement(stmt string) {
	s.runQuery(stmt)
}

// runQuery runs stmt with args: statements that return rows are queried and
// printed, others executed silently. Ctrl-C (Interrupt) cancels it; an
// interrupted SUBSCRIBE is its normal end.
func (s *Shell) runQuery(stmt string, args ...any) {
	if s.conn == nil {
		s.errorf("no database open")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel()
	}()

	kw := firstKeyword(stmt)
	start := time.Now()
	var err error
	switch {
	case kw == "SUBSCRIBE":
		err = s.subscribe(ctx, stmt, args)
		if ctx.Err() != nil {
			err = nil
			s.interrupted()
		}
	case returnsRows(stmt):
		stopSpin := s.spinner(start)
		var res *result
		res, err = s.query(ctx, stmt, args)
		stopSpin()
		if err == nil {
			err = render(s.out, res, s.renderOpts())
		}
	default:
		stopSpin := s.spinner(start)
		_, err = s.conn.ExecContext(ctx, stmt, args...)
		stopSpin()
		switch kw {
		case "CREATE", "DROP", "ALTER", "RENAME":
			s.tablesStale = true
		}
	}
	if err == nil && ctx.Err() != nil && kw != "SUBSCRIBE" {
		err = ctx.Err() // cancelled, even if the driver finished anyway
	}
	if err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted")
			s.interrupted()
		}
		s.errorf("%s", s.inUserText(err.Error()))
	}
	if s.timer {
		fmt.Fprintf(s.out, "Run Time: %.3fs\n", time.Since(start).Seconds())
	}
}

// interrupted ends what runs after a statement Ctrl-C stopped: a script (exit 1), or, at the
// prompt, the .read file it came from.
func (s *Shell) interrupted() {
	if !s.interactive {
		s.stop.Store(true)
	} else if s.readDepth > 0 {
		s.readStopped = true
	}
}

// query runs a statement and reads its whole result.
func (s *Shell) query(ctx context.Context, stmt string, args []any) (*result, error) {
	rows, err := s.conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res, err := header(rows)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		r, err := scanRow(rows, len(res.cols))
		if err != nil {
			return nil, err
		}
		res.rows = append(res.rows, r)
	}
	return res, rows.Err()
}

func header(rows *sql.Rows) (*result, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &result{}
	for _, ct := range cts {
		res.cols = append(res.cols, ct.Name())
		res.types = append(res.types, strings.ToLower(ct.DatabaseTypeName()))
	}
	return res, nil
}

func scanRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	return vals, nil
}

// spinner shows, on a terminal stderr, a progress line with the elapsed
// time once a statement has run for spinnerDelay; the returned func stops
// it and clears the line.
func (s *Shell) spinner(start time.Time) (stop func()) {
	if !s.env.StderrTTY {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			return
		case <-time.After(spinnerDelay):
		}
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.env.Stderr, "\r\x1b[K%c running %.1fs (Ctrl-C cancels)", frames[i%len(frames)], time.Since(start).Seconds())
			select {
			case <-done:
				io.WriteString(s.env.Stderr, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
