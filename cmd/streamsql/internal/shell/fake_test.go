package shell

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// fakeResult is a canned answer to one SQL text.
type fakeResult struct {
	cols  []string
	types []string
	rows  [][]any
	err   error
	// stream, when set, delivers rows after rows; Next blocks on it until
	// a row arrives, the channel closes (end) or the query is cancelled.
	stream chan []any
	// block makes Next wait for cancellation after rows.
	block bool
}

// fakeDB answers from canned results; unknown SQL is a no-op statement
// with no rows. It records the statements it was given, with arguments.
type fakeDB struct {
	mu      sync.Mutex
	answers map[string]fakeResult
	seen    []string
	dsns    []string
	started chan string // receives each query's text, if non-nil
}

func (f *fakeDB) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

var (
	fakeMu  sync.Mutex
	current *fakeDB
)

func init() { sql.Register("shellfake", fakeDriver{}) }

// useFake makes answers the database every fake connection talks to.
func useFake(answers map[string]fakeResult) *fakeDB {
	f := &fakeDB{answers: answers}
	fakeMu.Lock()
	current = f
	fakeMu.Unlock()
	return f
}

type fakeDriver struct{}

func (fakeDriver) Open(dsn string) (driver.Conn, error) {
	fakeMu.Lock()
	f := current
	fakeMu.Unlock()
	if dsn == "unopenable" {
		return nil, errors.New("cannot open " + dsn)
	}
	f.mu.Lock()
	f.dsns = append(f.dsns, dsn)
	f.mu.Unlock()
	return &fakeConn{db: f}, nil
}

type fakeConn struct{ db *fakeDB }

func (c *fakeConn) Prepare(q string) (driver.Stmt, error) {
	return nil, errors.New("fake: prepare not supported")
}
func (c *fakeConn) Close() error              { return nil }
func (c *fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("fake: no transactions") }

func (c *fakeConn) answer(q string, args []driver.NamedValue) fakeResult {
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	entry := q
	for _, a := range args {
		entry += fmt.Sprintf(" [%v]", a.Value)
	}
	c.db.seen = append(c.db.seen, entry)
	return c.db.answers[strings.Join(strings.Fields(q), " ")]
}

func (c *fakeConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	a := c.answer(q, args)
	if a.err != nil {
		return nil, a.err
	}
	if a.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return driver.RowsAffected(0), nil
}

func (c *fakeConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	a := c.answer(q, args)
	if a.err != nil {
		return nil, a.err
	}
	if c.db.started != nil {
		c.db.started <- q
	}
	return &fakeRows{res: a, ctx: ctx}, nil
}

// CheckNamedValue accepts any argument as is.
func (c *fakeConn) CheckNamedValue(*driver.NamedValue) error { return nil }

type fakeRows struct {
	res fakeResult
	ctx context.Context
	i   int
}

func (r *fakeRows) Columns() []string { return r.res.cols }
func (r *fakeRows) Close() error      { return nil }

func (r *fakeRows) Next(dest []driver.Value) error {
	var row []any
	switch {
	case r.i < len(r.res.rows):
		row = r.res.rows[r.i]
		r.i++
	case r.res.stream != nil:
		select {
		case v, ok := <-r.res.stream:
			if !ok {
				return io.EOF
			}
			row = v
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	case r.res.block:
		<-r.ctx.Done()
		return r.ctx.Err()
	default:
		return io.EOF
	}
	for i, v := range row {
		dest[i] = v
	}
	return nil
}

func (r *fakeRows) ColumnTypeDatabaseTypeName(i int) string {
	if i < len(r.res.types) {
		return r.res.types[i]
	}
	return ""
}
