package slt

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// subScript is how a fake SUBSCRIBE behaves, as the engine's may: the statement takes start
// to begin (its snapshot), its rows come at once, then, if late is set, one more change
// arrives just as the context is cancelled (the driver's select picks it over the
// cancellation); then nothing until the context ends. Its Next checks the context before a
// row, as a driver may.
type subScript struct {
	start time.Duration
	rows  [][]driver.Value
	late  []driver.Value
}

var (
	subMu      sync.Mutex
	subScripts = map[string]*subScript{}
)

func init() { sql.Register("sltsub", subDriver{}) }

type subDriver struct{}

func (subDriver) Open(dsn string) (driver.Conn, error) {
	subMu.Lock()
	defer subMu.Unlock()
	s, ok := subScripts[dsn]
	if !ok {
		return nil, errors.New("sub: no script " + dsn)
	}
	return &subConn{s: s}, nil
}

type subConn struct{ s *subScript }

func (c *subConn) Prepare(q string) (driver.Stmt, error) { return nil, errors.New("sub: no Prepare") }
func (c *subConn) Close() error                          { return nil }
func (c *subConn) Begin() (driver.Tx, error)             { return nil, errors.New("sub: no transactions") }

func (c *subConn) QueryContext(ctx context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	time.Sleep(c.s.start)
	return &subRows{ctx: ctx, s: c.s}, nil
}

type subRows struct {
	ctx      context.Context
	s        *subScript
	i        int
	lateDone bool
}

func (r *subRows) Columns() []string                       { return []string{"op", "k"} }
func (r *subRows) Close() error                            { return nil }
func (r *subRows) ColumnTypeDatabaseTypeName(i int) string { return []string{"VARCHAR", "BIGINT"}[i] }

func (r *subRows) Next(dest []driver.Value) error {
	if r.i < len(r.s.rows) {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		copy(dest, r.s.rows[r.i])
		r.i++
		return nil
	}
	<-r.ctx.Done()
	if r.s.late != nil && !r.lateDone {
		r.lateDone = true
		time.Sleep(20 * time.Millisecond)
		copy(dest, r.s.late)
		return nil
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return io.EOF
}

// runSub runs text against a fake subscription, failing the test if the runner does not
// finish within 10 s.
func runSub(t *testing.T, text string, s *subScript) *Result {
	t.Helper()
	subMu.Lock()
	subScripts[t.Name()] = s
	subMu.Unlock()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run("t.slt", strings.NewReader(text), Options{Engine: "streamsql", Open: func() (*sql.DB, error) { return sql.Open("sltsub", t.Name()) }})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Run: %v", o.err)
		}
		return o.res
	case <-time.After(10 * time.Second):
		t.Fatal("the runner still waits for the subscription's rows after 10 s")
		return nil
	}
}

const subRecord = `query TI
SUBSCRIBE m
----
+I
1
`

// A SUBSCRIBE whose statement takes longer than the idle time to start (a large snapshot,
// a busy engine) still returns its rows: the idle time runs from when rows may come.
func TestSubscribeSlowStart(t *testing.T) {
	res := runSub(t, subRecord, &subScript{start: 1500 * time.Millisecond, rows: [][]driver.Value{{"+I", int64(1)}}})
	expectCounts(t, res, 1, 1, 0, 0)
}

// A change that comes just as the subscription goes idle does not fail the record: the
// rows end there (database/sql has closed them), as they would have an instant earlier.
func TestSubscribeChangeAtIdle(t *testing.T) {
	res := runSub(t, subRecord, &subScript{rows: [][]driver.Value{{"+I", int64(1)}}, late: []driver.Value{"+I", int64(2)}})
	expectCounts(t, res, 1, 1, 0, 0)
}

// A SUBSCRIBE after a leading comment is a SUBSCRIBE too: its record ends when idle rather
// than blocking the runner.
func TestSubscribeAfterComment(t *testing.T) {
	res := runSub(t, "query TI\n/* the changelog */ SUBSCRIBE m\n----\n+I\n1\n\nquery TI\n-- the changelog\nSUBSCRIBE m\n----\n+I\n1\n",
		&subScript{rows: [][]driver.Value{{"+I", int64(1)}}})
	expectCounts(t, res, 2, 2, 0, 0)
}
