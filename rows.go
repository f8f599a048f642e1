package streamsql

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Rows iterates over a statement's result.
type Rows struct {
	ctx   context.Context
	cols  []engine.Column
	res   *engine.Result
	batch int
	row   int
	cur   []any
	err   error
	// SUBSCRIBE: pending changes of the last received batch.
	sub     *engine.Subscription
	pending []engine.Change
	closed  chan struct{}
}

func newRows(ctx context.Context, res *engine.Result) *Rows {
	return &Rows{ctx: ctx, cols: res.Cols, res: res, row: -1, sub: res.Sub, closed: make(chan struct{})}
}

// Columns returns the column names.
func (r *Rows) Columns() []string {
	out := make([]string, len(r.cols))
	for i, c := range r.cols {
		out[i] = c.Name
	}
	return out
}

// ColumnTypes returns the SQL type names of the columns (e.g. BIGINT, DECIMAL(10,2)).
func (r *Rows) ColumnTypes() []string {
	out := make([]string, len(r.cols))
	for i, c := range r.cols {
		out[i] = c.Type.String()
	}
	return out
}

// Next advances to the next row. For SUBSCRIBE it blocks until a change arrives, the
// context is cancelled or Close is called.
func (r *Rows) Next() bool {
	if r.err != nil {
		return false
	}
	if r.sub != nil {
		return r.nextChange()
	}
	for r.batch < len(r.res.Batches) {
		b := r.res.Batches[r.batch]
		r.row++
		if r.row < b.N {
			r.cur = make([]any, len(r.cols))
			for i, c := range r.cols {
				r.cur[i] = goValue(exec.Value(b.Cols[i], r.row), c.Type)
			}
			return true
		}
		r.batch++
		r.row = -1
	}
	r.cur = nil
	return false
}

func (r *Rows) nextChange() bool {
	for len(r.pending) == 0 {
		select {
		case ch, ok := <-r.sub.C:
			if !ok {
				r.err, r.cur = r.sub.Err(), nil
				return false
			}
			r.sub.Took(ch)
			r.pending = ch
		case <-r.ctx.Done():
			r.err, r.cur = r.ctx.Err(), nil
			r.sub.Close()
			return false
		case <-r.closed:
			r.cur = nil
			return false
		}
	}
	c := r.pending[0]
	r.pending = r.pending[1:]
	r.cur = make([]any, len(r.cols))
	r.cur[0] = c.Op
	for i, v := range c.Row {
		r.cur[i+1] = goValue(v, r.cols[i+1].Type)
	}
	return true
}

// Values returns the current row as Go values: int64, float64, bool, string, time.Time
// (DATE and TIMESTAMP, UTC) or nil; DECIMAL and INTERVAL as strings. After Next returns
// false there is no current row: nil.
func (r *Rows) Values() []any { return r.cur }

// Scan copies the current row into dest: pointers to any, int64, int, int32, float64,
// float32, string, []byte, bool or time.Time; a sql.Scanner (sql.NullInt64, ...); or a
// pointer to a pointer of those, set to nil for NULL. It converts as database/sql's Scan
// does: text (a DECIMAL) into a number when it is one, a time into a string as RFC 3339.
func (r *Rows) Scan(dest ...any) error {
	if r.cur == nil {
		return fmt.Errorf("Scan called without a successful Next")
	}
	if len(dest) != len(r.cur) {
		return fmt.Errorf("Scan: %d destinations for %d columns", len(dest), len(r.cur))
	}
	for i, d := range dest {
		if err := assign(d, r.cur[i]); err != nil {
			return fmt.Errorf("Scan column %s: %w", r.cols[i].Name, err)
		}
	}
	return nil
}

func assign(d, v any) error {
	if sc, ok := d.(sql.Scanner); ok {
		return sc.Scan(v)
	}
	if rv := reflect.ValueOf(d); rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Pointer {
		if v == nil {
			rv.Elem().SetZero()
			return nil
		}
		n := reflect.New(rv.Elem().Type().Elem())
		if err := assign(n.Interface(), v); err != nil {
			return err
		}
		rv.Elem().Set(n)
		return nil
	}
	switch p := d.(type) {
	case *any:
		*p = v
		return nil
	case *int32:
		if x, ok := v.(int64); ok && x >= math.MinInt32 && x <= math.MaxInt32 {
			*p = int32(x)
			return nil
		}
	case *float32:
		switch x := v.(type) {
		case float64:
			*p = float32(x)
			return nil
		case int64:
			*p = float32(x)
			return nil
		case string: // a DECIMAL
			f, err := strconv.ParseFloat(x, 32)
			*p = float32(f)
			return scanTextErr(err, x, d)
		}
	case *int64:
		switch x := v.(type) {
		case int64:
			*p = x
			return nil
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			*p = n
			return scanTextErr(err, x, d)
		}
	case *int:
		switch x := v.(type) {
		case int64:
			*p = int(x)
			return nil
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			*p = int(n)
			return scanTextErr(err, x, d)
		}
	case *float64:
		switch x := v.(type) {
		case float64:
			*p = x
			return nil
		case int64:
			*p = float64(x)
			return nil
		case string: // a DECIMAL
			f, err := strconv.ParseFloat(x, 64)
			*p = f
			return scanTextErr(err, x, d)
		}
	case *string:
		switch x := v.(type) {
		case string:
			*p = x
			return nil
		case time.Time:
			*p = x.Format(time.RFC3339Nano)
			return nil
		case nil:
		default:
			*p = fmt.Sprint(x)
			return nil
		}
	case *[]byte:
		switch x := v.(type) {
		case string:
			*p = []byte(x)
			return nil
		case nil:
			*p = nil
			return nil
		}
	case *bool:
		if x, ok := v.(bool); ok {
			*p = x
			return nil
		}
	case *time.Time:
		if x, ok := v.(time.Time); ok {
			*p = x
			return nil
		}
	}
	return fmt.Errorf("cannot store %T in %T", v, d)
}

// scanTextErr is the error of storing text (a DECIMAL's or a VARCHAR's) as a number in d.
func scanTextErr(err error, text string, d any) error {
	if err != nil {
		return fmt.Errorf("cannot store %q in %T", text, d)
	}
	return nil
}

// Err returns the error that ended iteration, if any (a cancelled SUBSCRIBE reports the
// context's error).
func (r *Rows) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

// Close releases the rows; for SUBSCRIBE it ends the subscription. It is idempotent.
func (r *Rows) Close() error {
	select {
	case <-r.closed:
		return nil
	default:
	}
	close(r.closed)
	if r.sub != nil {
		r.sub.Close()
	}
	return nil
}

// goValue converts a physical value of type t to its Go form.
func goValue(v any, t types.T) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case types.Decimal, types.Interval:
		return types.Display(v, t)
	case types.Date:
		return time.Unix(v.(int64)*86400, 0).UTC() // in seconds: days*MsPerDay overflows int64 beyond ±292 million years
	case types.Timestamp:
		return time.UnixMilli(v.(int64)).UTC()
	}
	return v
}

// toExternal converts a physical column to its external Arrow type.
func toExternal(a arrow.Array, t types.T) arrow.Array {
	dt := t.ExternalArrowType()
	if arrow.TypeEqual(dt, a.DataType()) {
		a.Retain()
		return a
	}
	b := array.NewBuilder(exec.Mem, dt)
	defer b.Release()
	n := a.Len()
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := exec.Value(a, i).(int64)
		switch x := b.(type) {
		case *array.Int32Builder:
			x.Append(int32(v))
		case *array.Decimal128Builder:
			x.Append(decimal128.FromI64(v))
		case *array.Date32Builder:
			x.Append(arrow.Date32(v))
		case *array.TimestampBuilder:
			x.Append(arrow.Timestamp(v))
		case *array.DurationBuilder:
			x.Append(arrow.Duration(v))
		case *array.NullBuilder:
			x.AppendNull()
		}
	}
	return b.NewArray()
}

// typeName is the database type name reported to database/sql: without length, precision
// or scale (database/sql's rule; DECIMAL's are in ColumnTypes' DecimalSize).
func typeName(t types.T) string {
	s := t.String()
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return s
}
