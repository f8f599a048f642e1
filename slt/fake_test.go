package slt

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
)

// fakeResult is a canned answer to one SQL text.
type fakeResult struct {
	cols  []string
	types []string // DatabaseTypeName per column
	rows  [][]any
	err   error
}

// fakeDB answers SQL from a table of canned results; unknown SQL executes
// as a no-op statement with no rows. It records what it was asked.
type fakeDB struct {
	mu      sync.Mutex
	answers map[string]fakeResult
	seen    []string
	closed  bool
}

var (
	fakeMu  sync.Mutex
	fakeDBs = map[string]*fakeDB{}
)

func init() { sql.Register("sltfake", fakeDriver{}) }

// openFake registers answers under a fresh DSN and returns an Open func.
func openFake(name string, answers map[string]fakeResult) (*fakeDB, func() (*sql.DB, error)) {
	f := &fakeDB{answers: answers}
	fakeMu.Lock()
	fakeDBs[name] = f
	fakeMu.Unlock()
	return f, func() (*sql.DB, error) { return sql.Open("sltfake", name) }
}

type fakeDriver struct{}

func (fakeDriver) Open(dsn string) (driver.Conn, error) {
	fakeMu.Lock()
	defer fakeMu.Unlock()
	f, ok := fakeDBs[dsn]
	if !ok {
		return nil, errors.New("fake: no database " + dsn)
	}
	return &fakeConn{db: f}, nil
}

type fakeConn struct{ db *fakeDB }

func (c *fakeConn) Prepare(q string) (driver.Stmt, error) { return &fakeStmt{c: c, q: q}, nil }
func (c *fakeConn) Close() error {
	c.db.mu.Lock()
	c.db.closed = true
	c.db.mu.Unlock()
	return nil
}
func (c *fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("fake: no transactions") }

func (c *fakeConn) answer(q string) fakeResult {
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	c.db.seen = append(c.db.seen, q)
	return c.db.answers[strings.TrimSpace(q)]
}

func (c *fakeConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	a := c.answer(q)
	if a.err != nil {
		return nil, a.err
	}
	return driver.RowsAffected(0), nil
}

func (c *fakeConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	a := c.answer(q)
	if a.err != nil {
		return nil, a.err
	}
	return &fakeRows{res: a}, nil
}

type fakeStmt struct {
	c *fakeConn
	q string
}

func (s *fakeStmt) Close() error  { return nil }
func (s *fakeStmt) NumInput() int { return -1 }
func (s *fakeStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.ExecContext(context.Background(), s.q, nil)
}
func (s *fakeStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.q, nil)
}

type fakeRows struct {
	res fakeResult
	i   int
}

func (r *fakeRows) Columns() []string { return r.res.cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if r.i >= len(r.res.rows) {
		return io.EOF
	}
	for i, v := range r.res.rows[r.i] {
		dest[i] = v
	}
	r.i++
	return nil
}

func (r *fakeRows) ColumnTypeDatabaseTypeName(i int) string {
	if i < len(r.res.types) {
		return r.res.types[i]
	}
	return ""
}
